"""Files larger than the context window: natural splits, exact reassembly, clear limits."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from pedit.app.chunking import GROWN, blocks, chunks, rechunk
from pedit.cli.app import app
from pedit.errors import UsageError

REF = ("-b", "reference")


def test_blocks_start_at_blank_lines_headings_and_definitions():
    md = "# Title\nintro\n\npara one\nstill one\n\n## Sub\ntext\n"
    assert blocks(md) == ["# Title\nintro\n\n", "para one\nstill one\n\n", "## Sub\ntext\n"]
    py = "import os\nx = 1\ndef f():\n    return 1\n@dec\nclass A:\n    pass\n"
    assert blocks(py) == ["import os\nx = 1\n", "def f():\n    return 1\n", "@dec\nclass A:\n    pass\n"]


@given(
    text=st.lists(
        st.sampled_from(["a", "b ", "\n", "\n\n", "# h\n", "def f():\n", "@d\n"]), max_size=120
    ).map("".join),
    budget=st.integers(16, 120),
)
def test_chunks_reassemble_exactly_and_fit(text, budget):
    count = len  # characters stand in for tokens
    if any(len(line) > budget for line in text.splitlines(keepends=True)):
        with pytest.raises(UsageError, match="a single line"):
            chunks(text, count, budget)
        return
    pieces = chunks(text, count, budget)
    assert "".join(pieces) == text
    assert all(0 < count(p) <= budget for p in pieces)


_PARAGRAPHS = st.lists(st.text("abc ", min_size=1, max_size=30).map(lambda s: s.strip() or "x"),
                       min_size=2, max_size=30)  # fmt: skip


@given(paragraphs=_PARAGRAPHS, budget=st.integers(80, 200), data=st.data())
def test_an_edit_cuts_only_where_it_changed_the_text(paragraphs, budget, data):
    """rechunk (issue 71): the same text keeps its last cut; after one paragraph is
    changed, every piece of the last cut that does not hold it is a piece again, and the
    pieces still make the text and fit."""
    count = len
    text = "\n\n".join(paragraphs) + "\n"
    before = chunks(text, count, budget)
    assert rechunk(text, before, count, budget) == before
    k = data.draw(st.integers(0, len(paragraphs) - 1))
    edited = paragraphs[:k] + [paragraphs[k] + data.draw(st.text("abc ", max_size=40))] + paragraphs[k + 1 :]
    new = "\n\n".join(edited) + "\n"
    after = rechunk(new, before, count, budget, room=2 * budget)
    assert "".join(after) == new and all(0 < count(p) <= int(budget * GROWN) for p in after)
    start = len("\n\n".join(paragraphs[:k]))  # where paragraph k starts in both texts
    end = start + len(paragraphs[k])
    at = 0
    for piece in before:  # pieces wholly before the edit, or wholly after it (shifted by it)
        if at + len(piece) <= start or at > end:
            assert piece in after
        at += len(piece)


def test_a_paragraph_that_grows_a_little_past_its_piece_stays_one_piece():
    """An edited piece of at most GROWN x budget tokens runs whole (one run, not two); a
    piece that grows past that is cut again, and none past the room a run has."""
    paragraphs = ["a" * 30, "b" * 30, "c" * 30, "d" * 30]
    text = "\n\n".join(paragraphs) + "\n"
    before = chunks(text, len, 64)  # two paragraphs a piece
    assert before == [text[:64], text[64:]]
    grown = text.replace("c" * 30, "c" * 40)
    assert rechunk(grown, before, len, 64, room=200) == [text[:64], grown[64:]]
    assert rechunk(grown, before, len, 64, room=70) == [text[:64], grown[64:106], grown[106:]]
    much = text.replace("c" * 30, "c" * 60)
    assert len(rechunk(much, before, len, 64, room=200)) == 3


def long_document(paragraphs=60, seed=0):
    """Varied text (seeded random words), so that the reference model, which copies by
    matching the last few tokens, copies it faithfully."""
    import random

    rng = random.Random(seed)
    out = []
    for i in range(paragraphs):
        words = " ".join(
            "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(5)) for _ in range(24)
        )
        out.append(f"## Section {i}\n\nThe {words}.\n\n")
    return "".join(out)


def test_a_file_several_times_the_context_is_edited_in_chunks(tmp_path):
    path = tmp_path / "long.md"
    text = long_document()
    path.write_text(text)
    from pedit.backends import open_backend

    assert len(open_backend("reference").tokenize(text)) > 4 * 1024  # several contexts long
    # --no-spelling: the tools' suggestions for 1,440 random words (a spell checker's search
    # at distance 2 for each) are not what this tests, and took four minutes
    result = CliRunner().invoke(app, ["fix", str(path), "--check", *REF, "--n-ctx", "1024", "--no-spelling"])
    assert result.exit_code == 0, result.stderr  # greedy copies: the chunks reassemble exactly
    parts = [line for line in result.stderr.splitlines() if " part " in line and "forward passes" in line]
    assert len(parts) >= 5 and "part 1 of" in parts[0]
    assert "long.md in all:" in result.stderr
    assert path.read_text() == text


def test_summarize_a_long_file_summarizes_parts_then_the_summaries(tmp_path):
    path = tmp_path / "long.md"
    path.write_text(long_document(30))
    result = CliRunner().invoke(app, ["summarize", str(path), *REF, "--n-ctx", "1024", "--max-tokens", "40"])
    assert result.exit_code == 0, result.stderr
    assert "long.md part 1 of" in result.stderr and "summaries of long.md" in result.stderr
    assert result.stdout.strip()


def test_a_line_too_long_even_for_a_chunk_is_a_clear_error(tmp_path):
    path = tmp_path / "one-line.txt"
    path.write_text("word " * 3000 + "\n")
    result = CliRunner().invoke(app, ["fix", str(path), "--check", *REF, "--n-ctx", "1024"])
    assert result.exit_code == 2
    assert "a single line of" in result.stderr and "tokens" in result.stderr


def test_chunk_tokens_makes_smaller_runs_and_keeps_lines_whole():
    from pedit.app.jobs import Job
    from pedit.app.options import EngineOptions
    from pedit.app.templates import BUILTIN
    from pedit.backends import open_backend

    backend = open_backend("reference")
    text = "".join(f"Paragraph {i} has a few words in it.\n\n" for i in range(6)) + "x " * 40 + "\n"
    whole = Job(backend, BUILTIN["fix"], None, EngineOptions(), chunk_tokens=0)
    assert whole.pieces(text, "a.txt", "rewrite") == [text]
    small = Job(backend, BUILTIN["fix"], None, EngineOptions(), chunk_tokens=24)
    pieces = small.pieces(text, "a.txt", "rewrite")
    assert "".join(pieces) == text and len(pieces) > 3
    assert pieces[-1].endswith("x " * 40 + "\n")  # a line longer than the chunk stays whole


def test_fix_goes_a_paragraph_at_a_time_and_refactor_takes_the_whole_file():
    from pedit.app.jobs import Job
    from pedit.app.options import EngineOptions
    from pedit.app.templates import BUILTIN, FIX_CHUNK_TOKENS
    from pedit.backends import open_backend

    backend = open_backend("reference")
    text = "".join(f"Paragraph {i} has a few words in it.\n\n" for i in range(12))
    count = lambda s: len(backend.tokenize(s))  # noqa: E731
    assert count(text) > 2 * FIX_CHUNK_TOKENS
    fix = Job(backend, BUILTIN["fix"], None, EngineOptions()).pieces(text, "a.txt", "rewrite")
    assert "".join(fix) == text and len(fix) >= 2
    assert all(count(p) <= FIX_CHUNK_TOKENS for p in fix)
    refactor = Job(backend, BUILTIN["refactor"], "rename x", EngineOptions())
    assert refactor.pieces(text, "a.txt", "rewrite") == [text]
