"""Lossless: on the reference backend (logits depend only on the prefix), speculative
decoding emits exactly the tokens, text and stop reason of plain decoding, for every
drafter alone and combined, for drafts that are always right, always wrong or random,
greedy and sampling, whatever the draft length, the context size or the token limit."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pedit.backends import open_backend
from pedit.engine.chat import chat_prompt, completion_events
from pedit.engine.costmodel import CostModel
from pedit.engine.decode import DecodeOptions, generate
from pedit.engine.drafters.compose import Composite
from pedit.engine.edit import EditOptions, edit_events
from pedit.engine.keepbias import suggested
from pedit.engine.planner import Acceptance, CostPlanner, FixedPlanner
from pedit.engine.prompt import FenceStream, build_prompt
from pedit.engine.sampling import Sampling
from pedit.engine.speculative import Drafting, speculative_generate
from pedit.request import EditRequest
from pedit.tools import confusables, grammarcheck
from pedit.tools.rename import rename
from pedit.tools.spelling import spellcheck

TEXTS = [
    "Their is many reasons why peoples enjoys reading.\nA good book take you far.\n",
    "def total(x):\n    s = 0\n    for i in x:\n        s = s + i\n    return s\n",
    "# Notes\n\n- one\n- two\n- two\n- three\n\n```\ncode\n```\n",
    "no trailing newline, and a tab\there",
]
SUBSETS = [("predicted",), ("lookup",), ("ngram",), ("predicted", "lookup", "ngram"), ("lookup", "ngram")]
FLAT = CostModel.table({1: 1.0, 64: 1.5}, 1e-3)  # GPU-like: drafting always looks worth it
SAMPLINGS = st.one_of(
    st.just(Sampling()),
    st.builds(
        Sampling,
        temperature=st.sampled_from([0.5, 1.0, 1.5]),
        top_k=st.sampled_from([0, 8]),
        top_p=st.sampled_from([1.0, 0.9]),
        seed=st.integers(0, 2**16),
    ),
)
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def last(events):
    return list(events)[-1]


def same_run(a, b):
    assert a.tokens == b.tokens
    assert a.text == b.text
    assert a.stats.stop_reason == b.stats.stop_reason


@SETTINGS
@given(
    text=st.sampled_from(TEXTS),
    drafters=st.sampled_from(SUBSETS),
    sampling=SAMPLINGS,
    speculate=st.sampled_from(["fixed", "auto"]),
    draft_max=st.integers(1, 24),
    max_tokens=st.one_of(st.none(), st.integers(1, 40)),
)
def test_real_drafters_reproduce_plain_decoding(text, drafters, sampling, speculate, draft_max, max_tokens):
    backend = open_backend("reference")
    req = EditRequest(text, "Fix the grammar.", "notes.md")
    plain = last(
        edit_events(backend, req, EditOptions(sampling=sampling, speculate="off", max_tokens=max_tokens))
    )
    spec = last(
        edit_events(
            backend,
            req,
            EditOptions(
                sampling=sampling,
                speculate=speculate,
                drafters=drafters,
                draft_max=draft_max,
                cost=FLAT,
                max_tokens=max_tokens,
            ),
        )
    )
    same_run(plain, spec)


class Oracle:
    """A drafter that knows plain decoding's output: proposes it (right), proposes
    something else (wrong) or random tokens."""

    def __init__(self, name, truth, prompt_len, vocab, seed):
        self.name, self.truth, self.prompt_len, self.vocab = name, truth, prompt_len, vocab
        self.label, self.priors = name, {name: (1.0, 1.0)}
        self.rng = np.random.default_rng(seed)

    def propose(self, context, k):
        i = len(context) - self.prompt_len
        right = list(self.truth[i : i + k])
        if self.name == "right":
            return right
        if self.name == "wrong":
            return [(t + 1) % self.vocab for t in right] or [0] * k
        return [int(t) for t in self.rng.integers(0, self.vocab, size=k)]


def drafted_run(backend, prompt, options, drafter, planner, acceptance, draft_max):
    """The speculative loop over `prompt` with one drafter (the primary), until the fence."""
    composite = Composite([drafter], acceptance.expected, primary=True)
    return last(
        speculative_generate(
            backend,
            prompt.tokens,
            options,
            Drafting(composite, planner, acceptance, draft_max),
            cost=FLAT,
            until=FenceStream(prompt.fence),
        )  # fmt: skip
    )


@SETTINGS
@given(
    text=st.sampled_from(TEXTS),
    kind=st.sampled_from(["right", "wrong", "random"]),
    sampling=SAMPLINGS,
    draft_max=st.integers(1, 32),
    n_ctx=st.sampled_from([8192, 420]),
    fixed=st.booleans(),
)
def test_always_right_wrong_and_random_drafts(text, kind, sampling, draft_max, n_ctx, fixed):
    backend = open_backend("reference", n_ctx=n_ctx)
    prompt = build_prompt(backend, EditRequest(text, "Rewrite it.", "f.md"))
    options = DecodeOptions(300, sampling)
    plain = last(generate(backend, prompt.tokens, options, until=FenceStream(prompt.fence)))
    oracle = Oracle(kind, plain.tokens, len(prompt.tokens), backend.n_vocab, sampling.seed or 0)
    acceptance = Acceptance(oracle.priors)
    planner = FixedPlanner() if fixed else CostPlanner(FLAT, acceptance)
    spec = drafted_run(backend, prompt, options, oracle, planner, acceptance, draft_max)
    same_run(plain, spec)
    st_ = spec.stats
    if kind == "right" and fixed:
        # every draft token is accepted: one pass per draft_max + 1 tokens, give or take
        # the end of the run
        assert st_.rejected_prediction_tokens == 0
        assert st_.forward_passes <= 2 + len(plain.tokens) // (draft_max + 1) + 1
    if kind == "wrong":
        assert st_.accepted_prediction_tokens == 0
        assert st_.forward_passes == plain.stats.forward_passes  # one token per pass, like plain


@SETTINGS
@given(text=st.sampled_from(TEXTS), sampling=SAMPLINGS, max_tokens=st.integers(1, 300))
def test_the_loop_without_drafts_or_a_grammar_is_plain_decoding_pass_for_pass(text, sampling, max_tokens):
    """The one loop with nothing to draft and nothing forced makes plain decoding's steps."""
    backend = open_backend("reference")
    prompt = build_prompt(backend, EditRequest(text, "Rewrite it.", "f.md"))
    options = DecodeOptions(max_tokens, sampling)
    plain = last(generate(backend, prompt.tokens, options, until=FenceStream(prompt.fence)))
    loop = last(speculative_generate(backend, prompt.tokens, options, until=FenceStream(prompt.fence)))
    same_run(plain, loop)
    assert loop.stats.forward_passes == plain.stats.forward_passes


def test_sampling_is_seed_for_seed_over_many_seeds():
    backend = open_backend("reference")
    req = EditRequest(TEXTS[0], "Fix it.", "essay.md")
    for seed in range(25):
        s = Sampling(temperature=1.2, top_p=0.95, seed=seed)
        plain = last(edit_events(backend, req, EditOptions(sampling=s, speculate="off")))
        spec = last(edit_events(backend, req, EditOptions(sampling=s, speculate="fixed", draft_max=8)))
        same_run(plain, spec)


@SETTINGS
@given(
    text=st.sampled_from(TEXTS),
    drafters=st.sampled_from(SUBSETS),
    sampling=SAMPLINGS,
    beta=st.sampled_from([-6.0, -1.5, 0.7, 3.0, 12.0]),
    draft_max=st.integers(1, 24),
    max_tokens=st.one_of(st.none(), st.integers(1, 40)),
    suggest=st.sampled_from(["none", "spelling", "harper", "rename"]),
    suggest_bias=st.sampled_from([None, 0.0, 4.0, -2.0]),
    guess=st.sampled_from(["none", "swaps", "other"]),
    deletions=st.booleans(),
    sure_bias=st.sampled_from([None, 9.0]),
)
def test_keep_bias_is_lossless_against_plain_decoding_with_the_same_bias(
    text, drafters, sampling, beta, draft_max, max_tokens, suggest, suggest_bias, guess, deletions, sure_bias
):
    """Also with a draft that is not the file, from every tool that drafts (fix's
    spelling and grammar suggestions, spelling.py and grammarcheck.py; refactor's exact
    rename, rename.py), and with a β of its own on what the tool changed, and another on
    the suggestions the model is sure of (those in the draft's first half: the draft
    against EditRequest.doubtful); and with a speculative draft of its own (fix's likely
    swaps, EditRequest.guess: the source with words swapped, or another text), which plain
    decoding never reads."""
    backend = open_backend("reference")
    name = "total.py" if suggest == "rename" else "notes.md"
    if suggest == "rename":
        text = TEXTS[1]
    source = text.replace("the", "teh").replace("reasons", "reasons reasons")
    draft = {
        "none": lambda: None,
        "spelling": lambda: spellcheck(source, name),
        "harper": lambda: grammarcheck.draft(source, name),
        "rename": lambda: rename(source, name, {"s": "subtotal"}),
    }[suggest]()
    guessed = {
        "none": None,
        "swaps": (draft or source).replace(" is ", " are ").replace("teh", "the"),
        "other": TEXTS[(TEXTS.index(text) + 1) % len(TEXTS)],
    }[guess]
    doubtful = confusables.doubtful(source, draft, [(0, len(source) // 2)]) if draft else None
    req = EditRequest(source, "Fix the grammar.", name, draft=draft, guess=guessed, doubtful=doubtful)
    common = {"sampling": sampling, "max_tokens": max_tokens, "keep_bias": beta, "suggest_bias": suggest_bias,
              "suggest_deletions": deletions, "sure_bias": sure_bias}  # fmt: skip
    plain = last(edit_events(backend, req, EditOptions(speculate="off", **common)))
    spec = last(
        edit_events(
            backend,
            req,
            EditOptions(speculate="fixed", drafters=drafters, draft_max=draft_max, cost=FLAT, **common),
        )
    )
    same_run(plain, spec)


def test_keep_bias_moves_the_output_towards_the_file():
    """β = 0 is plain decoding; a large β makes the answer the file itself; a negative
    one moves it away. Counted on the reference backend, greedy."""
    backend = open_backend("reference")
    req = EditRequest(TEXTS[0], "Fix the grammar.", "notes.md")

    def answer(beta, sampling=None):
        return last(
            edit_events(
                backend, req, EditOptions(speculate="off", keep_bias=beta, sampling=sampling or Sampling())
            )
        ).text

    hot = Sampling(temperature=1.5, seed=3)
    assert answer(0.0) == last(edit_events(backend, req, EditOptions(speculate="off"))).text
    assert answer(0.0, hot) != TEXTS[0]  # sampling hot, the model wanders off the file...
    assert answer(1e4, hot) == TEXTS[0]  # ...unless the file's token is all but certain
    assert answer(1e4) == TEXTS[0]
    assert not answer(-1e4).startswith(TEXTS[0][:5])  # and never the file's token


def test_a_large_keep_bias_writes_the_draft_when_it_is_not_the_file():
    """fix's draft carries spelling suggestions: the keep-bias leans towards the draft."""
    backend = open_backend("reference")
    text = "Teh cat sat on teh mat.\nIt was recieved well.\n"
    draft = spellcheck(text, "notes.md")
    assert draft == "The cat sat on the mat.\nIt was received well.\n"
    req = EditRequest(text, "Fix the grammar.", "notes.md", draft=draft)
    for speculate in ("off", "fixed"):
        assert (
            last(edit_events(backend, req, EditOptions(speculate=speculate, keep_bias=1e4, cost=FLAT))).text
            == draft
        )


def test_a_deletion_marks_the_token_after_it_only_when_asked():
    """A tool's deletion ("reasons reasons" -> "reasons") changes no draft token: with
    `deletions` the token after it carries the suggestion's β; a replacement's tokens
    always do, an insertion's too."""
    file, draft = [1, 2, 2, 3, 4], [1, 2, 3, 4]
    assert suggested(draft, file) == [False] * 4
    assert suggested(draft, file, deletions=True) == [False, False, True, False]
    assert suggested([1, 9, 3, 5, 4], [1, 2, 3, 4], deletions=True) == [False, True, False, True, False]
    assert suggested([1, 2], [1, 2, 3], deletions=True) == [False, False]  # nothing after it
    assert suggested([5, 6, 7], [5, 6, 5, 6, 7], deletions=True) == [False, False, True]  # a doubled pair


def test_a_large_suggestion_bias_writes_what_the_tool_changed_and_no_more():
    """β = 0 on the file's text, β_suggest large on the suggestions: where the tool changed
    the draft the answer takes it, whatever the model; the rest is the model's own. Greedy,
    reference backend."""
    backend = open_backend("reference")
    text = "Teh cat sat on teh mat.\nIt was recieved well.\n"
    draft = spellcheck(text, "notes.md")
    req = EditRequest(text, "Fix the grammar.", "notes.md", draft=draft)
    plain = last(edit_events(backend, req, EditOptions(speculate="off"))).text
    sure = last(edit_events(backend, req, EditOptions(speculate="off", keep_bias=0.0, suggest_bias=1e4))).text
    assert plain.startswith("Teh") and sure.startswith("The")  # the first suggestion is taken
    both = last(edit_events(backend, req, EditOptions(speculate="off", keep_bias=1e4, suggest_bias=1e4))).text
    assert both == draft


def renamed_draft(tokens: tuple[int, ...], pick: int, vocab: int) -> tuple[list[int], int]:
    """Plain decoding's output with one of its repeated tokens replaced everywhere by a token
    it never uses: drafting from it, the model "renames it back" at every occurrence, which
    is what the predicted drafter learns from (drafters/predicted.py)."""
    repeated = sorted({t for t in tokens if tokens.count(t) >= 2})
    if not repeated:
        return list(tokens), -1
    old = repeated[pick % len(repeated)]
    unused = next(u for u in range(32, vocab) if u not in tokens)
    return [unused if t == old else t for t in tokens], old


def learned_run(backend, text, sampling, draft_max, pick, fixed=True):
    from pedit.engine.drafters.predicted import PredictedOutput

    prompt = build_prompt(backend, EditRequest(text, "Rewrite it.", "f.md"))
    options = DecodeOptions(120, sampling)
    plain = last(generate(backend, prompt.tokens, options, until=FenceStream(prompt.fence)))
    draft, _ = renamed_draft(plain.tokens, pick, backend.n_vocab)
    drafter = PredictedOutput(draft, start=len(prompt.tokens), token_bytes=backend.token_bytes)
    acceptance = Acceptance(drafter.priors)
    planner = FixedPlanner() if fixed else CostPlanner(FLAT, acceptance)
    spec = drafted_run(backend, prompt, options, drafter, planner, acceptance, draft_max)
    return plain, spec, drafter


@SETTINGS
@given(
    text=st.sampled_from(TEXTS),
    sampling=SAMPLINGS,
    draft_max=st.integers(1, 24),
    pick=st.integers(0, 1000),
    fixed=st.booleans(),
)
def test_learned_substitutions_reproduce_plain_decoding(text, sampling, draft_max, pick, fixed):
    backend = open_backend("reference")
    plain, spec, _ = learned_run(backend, text, sampling, draft_max, pick, fixed)
    same_run(plain, spec)


def test_the_learned_substitution_examples_do_learn():
    """The examples above exercise learning: here (greedy, the last text, its spaces renamed)
    the drafter learns the rename and the model writes it where it was drafted."""
    backend = open_backend("reference")
    plain, spec, drafter = learned_run(backend, TEXTS[3], Sampling(), 8, 0)
    same_run(plain, spec)
    (rule,) = drafter.rules.values()
    assert (rule.new, rule.written) == ((32,), 2)


@SETTINGS
@given(
    text=st.sampled_from(TEXTS),
    sampling=SAMPLINGS,
    speculate=st.sampled_from(["fixed", "auto"]),
    edits=st.lists(st.tuples(st.integers(0, 80), st.integers(0, 300)), max_size=4),
    order=st.permutations(range(3)),
)
def test_predicted_variants_reproduce_plain_decoding(text, sampling, speculate, edits, order):
    """pedit serve's drafts (chat.py): a prediction with other predictions beside it (the
    file before a tool's edit, its paragraphs unwrapped), right, edited or the file itself,
    in any order: the answer is plain decoding's."""
    backend = open_backend("reference")
    prompt = chat_prompt(backend, [{"role": "user", "content": f"Rewrite it.\n\n{text}"}])
    options = DecodeOptions(60, sampling)
    plain = last(generate(backend, prompt, options))
    edited = list(plain.tokens)
    for at, token in edits:
        edited[at:at] = [token]
    predictions = [list(plain.tokens), edited, backend.tokenize(text)]
    draft, *variants = [predictions[i] for i in order]
    spec = last(completion_events(backend, prompt, options, draft=draft, variants=variants,
                                  speculate=speculate, cost=FLAT))  # fmt: skip
    same_run(plain, spec)
    if speculate == "fixed" and not sampling.temperature:
        assert spec.stats.accepted_prediction_tokens > 0  # the right one among them drafted
