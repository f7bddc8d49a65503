"""The model's score of a tool's candidate edits (pedit/engine/likelihood.py), on the
reference backend (logits depend only on the prefix): each Δ is the windowed difference of
log-probabilities a fresh reading of base and variant gives, the prefilter skips only what
it says, the cache is left holding a prefix of the base (all of it with a branch) and
keeps what it shared with the base already, and the reading costs what `read` says."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pedit.backends import open_backend
from pedit.backends.base import Capabilities
from pedit.engine import likelihood
from pedit.engine.likelihood import PREFILTER, WINDOW, score


@pytest.fixture(scope="module", params=[7, 1, 0], ids=["branches", "branch", "truncate"])
def backend(request):
    """The reference backend reading the variants in sequences of their own (eval_branches;
    seven or one a pass), and as a backend without them (truncate and read again)."""
    b = open_backend("reference")
    b.capabilities = Capabilities(rollback=True, branch=request.param > 0)
    b.branches = request.param
    yield b
    b.close()


def fresh_logprobs(backend, tokens) -> np.ndarray:
    """log p(tokens[i] | tokens[:i]) for i >= 1, read from an empty cache."""
    backend.truncate(0)
    logits = backend.eval(tokens, n_logits=len(tokens)).copy()
    return np.concatenate([[0.0], likelihood._logprobs(logits[:-1], tokens[1:])])


def prompts(backend, words, swaps) -> tuple[list[int], list[list[int]]]:
    """The base prompt of `words`, and a variant for each (index, word) swap."""
    base = backend.tokenize("Fix it:\n" + " ".join(words) + ".")
    variants = []
    for i, w in swaps:
        changed = list(words)
        changed[i % len(words)] = w
        variants.append(backend.tokenize("Fix it:\n" + " ".join(changed) + "."))
    return base, variants


WORDS = ["their", "there", "to", "too", "was", "were", "the", "cat", "sat", "on", "mat", "and", "it", "is"]


@settings(max_examples=40, deadline=None)
@given(
    words=st.lists(st.sampled_from(WORDS), min_size=4, max_size=30),
    swaps=st.lists(st.tuples(st.integers(0, 29), st.sampled_from(WORDS)), min_size=1, max_size=6),
    slice_=st.sampled_from([1, 2, 3, 64]),  # the last slice may be one token (it predicts nothing)
)
def test_each_delta_is_the_windowed_difference_of_fresh_readings(backend, words, swaps, slice_):
    base, variants = prompts(backend, words, swaps)
    old, likelihood.SLICE = likelihood.SLICE, slice_
    try:
        got = score(backend, base, variants)
    finally:
        likelihood.SLICE = old
    lb = fresh_logprobs(backend, base)
    for v, delta in zip(variants, got.deltas, strict=True):
        p, qb, qv = likelihood._span(base, v)
        if p == len(base) == len(v) or (qb <= p and qv <= p):
            assert delta is None  # no change
            continue
        lv = fresh_logprobs(backend, v)
        k = min(WINDOW, len(base) - qb)
        if delta is None:  # skipped: its first different token is far less likely
            assert lv[p] < lb[p] - PREFILTER
            continue
        assert delta == pytest.approx(lv[p : qv + k].sum() - lb[p : qb + k].sum(), abs=1e-3)


def test_the_cache_holds_what_it_says_and_the_reading_costs_what_it_says(backend, monkeypatch):
    monkeypatch.setattr(likelihood, "PREFILTER", float("inf"))  # every variant read
    base = backend.tokenize("Fix it:\nI lived their two years and it was to dark.")
    variants = [
        backend.tokenize("Fix it:\nI lived there two years and it was to dark."),
        backend.tokenize("Fix it:\nI lived their two years and it was too dark."),
    ]
    backend.truncate(0)
    got = score(backend, base, variants)
    assert None not in got.deltas
    held = backend.n_past
    assert list(backend.held) == base[:held]
    # what the cache holds is the base's prefix: the next token's logits are a fresh reading's
    backend.truncate(held - 1)  # (held may be the whole base: read its last token again)
    rest = backend.eval(base[held - 1 :], n_logits=1)[0].copy()
    backend.truncate(0)
    assert np.array_equal(rest, backend.eval(base, n_logits=1)[0])
    spans = [likelihood._span(base, v) for v in variants]
    scored = [s for s, d in zip(spans, got.deltas, strict=True) if d is not None]
    # a window reads from the first changed token to the one before its last: the first's
    # probability came with the base, the last's with the token before it
    windows = sum(qv + min(WINDOW, len(base) - qb) - 1 - p for p, qb, qv in scored)
    if backend.capabilities.branch:  # the windows in a second sequence: the base stays whole
        assert (got.read, held) == (len(base) + windows, len(base))
    else:
        gaps = sum(
            b[0] - a[0] for a, b in zip(scored, scored[1:], strict=False)
        )  # the base between two, again
        assert got.read == len(base) + windows + gaps
        assert held == scored[-1][0]
    assert min(p for p, _, _ in spans) > 1


@pytest.mark.parametrize("shared", [0, 3, 9, 10_000])
def test_what_the_cache_shares_with_the_base_is_not_read_again(backend, shared):
    """The previous paragraph's prompt in the cache: the scoring reads only from where it
    differs (up to the first swap), and scores as a reading from an empty cache does."""
    base = backend.tokenize("Fix it:\nI lived their two years and it was to dark.")
    variants = [backend.tokenize("Fix it:\nI lived there two years and it was to dark.")]
    backend.truncate(0)
    fresh = score(backend, base, variants, prefilter=[float("inf")])
    other = backend.tokenize("Fix it:\nSomething else entirely, and longer than the base is.")
    backend.truncate(0)
    backend.eval(base[:shared] + other[shared:] if shared < len(base) else other, n_logits=1)
    kept = min(likelihood.common_prefix(backend.held, base), likelihood._span(base, variants[0])[0] - 1)
    got = score(backend, base, variants, prefilter=[float("inf")])
    assert got.deltas == pytest.approx(fresh.deltas, abs=1e-6)
    assert got.read == fresh.read - kept
    assert list(backend.held) == base[: backend.n_past]


def test_nothing_to_score_reads_nothing(backend):
    base = backend.tokenize("Fix it:\nAll fine.")
    got = score(backend, base, [list(base)])
    assert (got.deltas, got.read, got.passes) == ([None], 0, 0)


@settings(max_examples=30, deadline=None)
@given(
    words=st.lists(st.sampled_from(WORDS), min_size=4, max_size=30),
    swaps=st.lists(st.tuples(st.integers(0, 29), st.sampled_from(WORDS)), min_size=1, max_size=6),
    need=st.lists(st.floats(-20, 20), min_size=6, max_size=6),
)
def test_a_variant_that_cannot_reach_its_need_is_not_read_and_nothing_else_changes(backend, words, swaps, need):
    """`need` (issue 71): a variant is left unread only where its Δ, read, would be below
    what the caller acts on; every other Δ is the same, and fewer tokens are read."""
    base, variants = prompts(backend, words, swaps)
    need = need[: len(variants)]
    backend.truncate(0)
    every = score(backend, base, variants)
    backend.truncate(0)
    some = score(backend, base, variants, need=need)
    for d, s, n in zip(every.deltas, some.deltas, need, strict=True):
        assert s == d or (s is None and d is not None and d < n)
    assert some.read <= every.read


def test_a_need_no_variant_can_reach_reads_no_window(backend):
    base = backend.tokenize("Fix it:\nthe cat sat on the mat and it was there.")
    variants = [backend.tokenize("Fix it:\nthe cat sat on the mat and it were there."),
                backend.tokenize("Fix it:\nthe cat sat on their mat and it was there.")]  # fmt: skip
    backend.truncate(0)
    every = score(backend, base, variants, prefilter=[100.0, 100.0])
    backend.truncate(0)
    none = score(backend, base, variants, prefilter=[100.0, 100.0], need=[1e9, 1e9])
    assert every.deltas[0] is not None and every.deltas[1] is not None
    assert none.deltas == [None, None] and none.read < every.read
