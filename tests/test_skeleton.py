"""A document's skeleton (pedit/tools/skeleton): what a fix must copy is found, forced by
the fix's grammar, and checked by the guard.

Invariants: the spans and holes cut the text exactly; every file of the quality corpus
(and issue 53's reproductions) is in the language of its own grammar, with all of its
skeleton forced but each span's first bytes; a document of skeleton pieces and prose,
fixed by a model that writes anything under that grammar, keeps its skeleton piece for
piece; and the grammar loses nothing of speculative decoding's losslessness.
"""

from __future__ import annotations

from pathlib import Path

import llguidance
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from pedit.backends import open_backend
from pedit.checks import guard
from pedit.engine.costmodel import CostModel
from pedit.engine.edit import EditOptions, edit_events
from pedit.engine.grammar import Constraint, _bytes_tokenizer, grammar
from pedit.engine.sampling import Sampling
from pedit.request import EditRequest
from pedit.tools import skeleton
from pedit.tools.skeleton import grammar as sg

CORPUS = Path(__file__).resolve().parent.parent / "pedit" / "bench" / "corpus"
DATA = Path(__file__).parent / "data" / "skeleton"
FILES = sorted(p for p in CORPUS.iterdir() if p.suffix in (".md", ".rst", ".txt", ".py")) + sorted(DATA.iterdir())
FLAT = CostModel.table({1: 1.0, 64: 1.5}, 1e-3)  # drafting always looks worth it


def forced_walk(text: str, name: str) -> tuple[bool, int, int]:
    """(the text is in its grammar's language, bytes forced, bytes in all): the answer
    `text` + the closing fence fed byte by byte, forced bytes taken as the grammar gives them."""
    sk = skeleton.of(text, name)
    m = llguidance.LLMatcher(_bytes_tokenizer(), grammar(Constraint("lark", sg.lark(sk)), after="\n```"), log_level=0)
    assert not m.is_error(), m.get_error()
    answer = ((text[:-1] if text.endswith("\n") else text) + "\n```").encode()
    i = forced = 0
    while i < len(answer):
        ff = m.compute_ff_tokens()
        if ff:
            if bytes(ff) != answer[i : i + len(ff)]:
                return False, forced, len(answer)
            m.consume_tokens(ff)
            i, forced = i + len(ff), forced + len(ff)
        elif m.validate_tokens([answer[i]]) == 1:
            m.consume_tokens([answer[i]])
            i += 1
        else:
            return False, forced, len(answer)
    return True, forced, len(answer)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_file_is_in_its_grammar_with_its_skeleton_forced(path):
    text = path.read_text()
    sk = skeleton.of(text, path.name)
    cut = sorted([(s.start, s.end) for s in sk.spans] + sk.holes())
    assert [a for a, _ in cut][1:] == [b for _, b in cut][:-1] and cut[0][0] == 0 and cut[-1][1] == len(text)
    assert sg.holes(sk) == [(a, b, sg.signature(sk, a, b)) for a, b in sk.holes()]  # every hole free
    ok, forced, total = forced_walk(text, path.name)
    assert ok
    # every skeleton byte is forced but those a span's first bytes the model chooses
    assert forced >= len(sk.text[: sum(s.end - s.start for s in sk.spans)].encode()) - 8 * len(sk.spans)


def items(text: str, name: str = "README.md") -> list[tuple[str, str]]:
    return [(k, t) for k, t, _ in skeleton.of(text, name).items()]


def test_markdown_skeleton_holds_links_code_markup_and_leaves_the_prose():
    text = (DATA / "tarn_readme.md").read_text()
    found = items(text)
    assert ("link target", "](https://forum.example.org/tags/tarn)") in found
    assert ("code span", "`pip install -e .`") in found
    assert ("link target", "`tarn`](https://stackoverflow.com/questions/tagged/tarn)") in found
    assert ("heading marker", "##") in found
    holes = [text[a:b] for a, b in skeleton.of(text, "README.md").holes()]
    assert "If you have an question about how to use Tarn, ask on the " in holes
    assert "StackOverflow and tag it " in holes  # link text is prose
    assert "project's forum" in holes


@pytest.mark.parametrize(
    ("text", "span"),
    [
        ("See the [guide][] first.\n\n[guide]: https://x.org/g\n", "[guide]"),  # a label is skeleton
        ("Read <https://x.org/a.b> now.\n", "<https://x.org/a.b>"),
        ("Mail me at someone@example.org today.\n", "someone@example.org"),
        ("Background: https://sysid.github.io/server-sent-events/\n", "https://sysid.github.io/server-sent-events/"),
        ("Use <b>bold</b> here.\n", "<b>"),
        ("A table:\n\n| a | b |\n|---|:-:|\n| c | d |\n", "|---|:-:|"),
        ("---\ntitle: x\n---\n\nText here.\n", "title: x"),
        ("Some\n\n    indented code\n\nmore.\n", "indented code"),
        ("![a cat](cat.png) and more.\n", "](cat.png)"),
        ("Escaped \\*stars\\* stay.\n", "\\*"),
    ],
)
def test_markdown_pieces_are_skeleton(text, span):
    sk = skeleton.of(text, "a.md")
    inside = [text[s.start : s.end] for s in sk.spans]
    assert any(span in piece for piece in inside), inside
    assert not any(span in text[a:b] for a, b in sk.holes())


def test_a_dot_inside_a_link_target_is_never_the_texts_full_stop():
    text = "Bugs go to the [issue tracker](https://example.org/tarn/issues).\n"
    holes = [text[a:b] for a, b in skeleton.of(text, "a.md").holes()]
    assert holes == ["Bugs go to the ", "issue tracker", "."]


@pytest.mark.parametrize(
    ("name", "text", "skeleton_part", "prose_part"),
    [
        ("a.py", 'def f(x):\n    """Retrun x."""\n    return x  # teh value\n', "return x", "teh value"),
        ("a.rst", "See ``code`` and :func:`f` and `docs <https://x.org>`_.\n\n.. note::\n   Body.\n",
         ":func:`f`", "See "),
        ("a.rst", "Example::\n\n    $ pip install x\n\nDone.\n", "$ pip install x", "Done."),
        ("a.txt", "Run this:\n\n    make it so\n\nor read /usr/share/doc/x.\n", "make it so", "or read "),
    ],
)  # fmt: skip
def test_other_kinds_of_file(name, text, skeleton_part, prose_part):
    sk = skeleton.of(text, name)
    assert any(skeleton_part in text[s.start : s.end] for s in sk.spans)
    assert any(prose_part in text[a:b] for a, b in sk.holes())


def test_the_guard_names_the_first_skeleton_change():
    old = (DATA / "tarn_readme.md").read_text()
    lost = old.replace("`tarn`](https://stackoverflow.com/questions/tagged/tarn)", "`tarn`]")
    refusal = guard.judge("README.md", old, lost.replace("an question", "a question"), judged=True)
    assert refusal.reason.startswith("a fix removes the link target on line 21")
    sse = (DATA / "sse_readme.md").read_text()
    refusal = guard.judge("sse.md", sse, sse.replace("uv add", "uvicorn"), judged=True)
    assert refusal.reason == "a fix changes the code block on line 13 ('uv add sse-starlette' -> 'uvicorn sse-starlette')"
    assert refusal.stands(force=False) and not refusal.stands(force=True)  # --force writes it
    assert guard.judge("README.md", old, old.replace("an question", "a question"), judged=True) is None


def test_no_tool_proposes_inside_the_skeleton():
    from pedit.tools import confusables, grammarcheck, spelling

    text = "Teh [recieve](https://x.org/recieve) and `recieve teh` their.\n"
    sk = skeleton.of(text, "a.md")
    holes = sk.holes()
    assert spelling.spellcheck(text, "a.md") == "The [receive](https://x.org/recieve) and `recieve teh` their.\n"
    for c in grammarcheck.changes(text, "a.md"):
        assert any(a <= c.start and c.end <= b for a, b in holes)
    for w in confusables.candidates(text, "a.md"):
        assert any(a <= w.start and w.end <= b for a, b in holes)


def test_a_fix_is_never_cut_into_runs_inside_a_code_block():
    from pedit.app import chunking

    text = "Intro.\n\n```python\nx = 1\n\ny = 2\n\nz = 3\n```\n\nEnd.\n"
    joined = skeleton.joined_lines(skeleton.of(text, "a.md"))
    blocks = chunking.blocks(text, joined)
    assert "".join(blocks) == text
    assert any(b.startswith("```python") and b.rstrip().endswith("```") for b in blocks)


# --- a model that writes anything, under the skeleton's grammar ----------------------------

PROSE = st.text(alphabet=st.sampled_from("abcdefghij klmnopqrstuvwxyz,.;'"), min_size=1, max_size=30).map(
    lambda s: s.strip(" ") or "word"
)
PIECES = st.sampled_from([
    "[{p}](https://ex.org/a_b)", "`code {p}`", "![{p}](img/cat.png)", "*{p}*", "**{p}**", "<b>{p}</b>",
    "see https://ex.org/x.y?z=1 now", "mail a.b@ex.org", "[{p}][ref]", "~~{p}~~",
])  # fmt: skip
BLOCKS = st.sampled_from([
    "## {p}\n", "- {p}\n- {p}\n", "> {p}\n", "```sh\npip install {p}\n\nuv add x\n```\n",
    "| {p} | b |\n|---|---|\n| c | {p} |\n", "1. {p}\n2. {p}\n", "    indented {p}\n",
])  # fmt: skip


@st.composite
def documents(draw) -> str:
    parts = []
    for _ in range(draw(st.integers(1, 4))):
        if draw(st.booleans()):
            parts.append(draw(BLOCKS).replace("{p}", draw(PROSE)))
        else:
            line = draw(PROSE)
            for _ in range(draw(st.integers(0, 3))):  # a paragraph of one line or several
                line += draw(st.sampled_from([" ", "\n"])) + draw(PIECES).replace("{p}", draw(PROSE))
                line += draw(st.sampled_from([" ", "\n"])) + draw(PROSE)
            parts.append(line + "\n")
    return "\n".join(parts) + "\n[ref]: https://ex.org/r\n"


@pytest.fixture(scope="module", params=[2.0, 6.0], ids=["copies-little", "copies-more"])
def writer(request):
    """The reference model, copying little or more of its context: between copies it
    writes what its random weights like, control bytes and markup included."""
    return open_backend("reference", copy=request.param)


def fixed(backend, text: str, sampling: Sampling, speculate: str = "off", coalesce: bool = True, forced_run: int = 0):
    sk = skeleton.of(text, "doc.md")
    free = sg.holes(sk)
    c = Constraint("lark", sg.lark(sk, free))
    req = EditRequest(text, "Fix the grammar.", "doc.md")
    o = EditOptions(sampling=sampling, speculate=speculate, coalesce=coalesce, constraint=c, cost=FLAT, forced_run=forced_run,
                    max_tokens=8 * len(text.encode()) + 64)  # fmt: skip
    return list(edit_events(backend, req, o))[-1]


SAMPLINGS = st.one_of(
    st.just(Sampling()),
    st.builds(Sampling, temperature=st.sampled_from([0.8, 1.5]), seed=st.integers(0, 2**16)),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(doc=documents(), sampling=SAMPLINGS)
def test_a_model_that_writes_anything_keeps_the_skeleton_every_time(writer, doc, sampling):
    fin = fixed(writer, doc, sampling)
    event(f"stop: {fin.stats.stop_reason}")
    if fin.stats.stop_reason != "fence":  # a hole written to the limit: no answer to judge
        assert fin.stats.stop_reason == "max_tokens"
        return
    answer = fin.text
    assert items(answer, "doc.md") == items(doc, "doc.md")
    assert answer.count("\n") <= doc.count("\n")  # a soft break may be joined, never one added


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(
    doc=documents(), sampling=SAMPLINGS, speculate=st.sampled_from(["fixed", "auto"]),
    forced_run=st.sampled_from([0, 2, 8]),  # drafts cut where a forced run starts, or not
)
def test_speculation_under_the_skeleton_is_plain_constrained_decoding(doc, sampling, speculate, forced_run):
    backend = open_backend("reference")
    plain = fixed(backend, doc, sampling, coalesce=False)
    fast = fixed(backend, doc, sampling, speculate=speculate, forced_run=forced_run)
    assert fast.tokens == plain.tokens and fast.text == plain.text
    assert fast.stats.stop_reason == plain.stats.stop_reason
    assert fast.stats.forward_passes <= plain.stats.forward_passes


def test_prose_moved_across_a_code_span_is_refused():
    """The grammar keeps every piece of the skeleton in order but lets a hole's text go
    anywhere: the default model once wrote "add `.env` to your application ... from a file"
    for "add python-dotenv to your application ... from a `.env` file". The guard refuses it."""
    text = (CORPUS / "dotenv_readme.md").read_text()
    moved = text.replace(
        "you can add python-dotenv to your application to make it\nload the configuration from a `.env` file when",
        "you can add `.env` to your application to make it\nload the configuration from a file when",
    )
    assert moved != text and items(moved, "dotenv_readme.md") == items(text, "dotenv_readme.md")
    refusal = guard.judge("dotenv_readme.md", text, moved, judged=True)
    assert refusal.reason == 'a fix moves prose across the document\'s skeleton (line 11: "to help you with that, you…")'
    fixed = text.replace("enviroment variables", "environment variables")
    assert guard.judge("dotenv_readme.md", text, fixed, judged=True) is None
