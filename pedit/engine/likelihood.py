"""Which reading does the model find likelier? A tool's candidate edits, scored by the model.

A tool proposes variants of a prompt (`fix`: a word swapped for one it is often confused
with, "their" -> "there"); the model reads the prompt once and says, for each variant, how
much likelier it finds it than the prompt as it is:

    Δ(v) = Σ_{t ∈ W} log p(v_t | v_<t) − Σ_{t ∈ W₀} log p(b_t | b_<t)

W is where v differs from the base b plus the K tokens after (the same tokens in both: the
words that follow, which "they was filled" or "too dark" make unlikely), W₀ the same span
of b. Δ > 0: the model prefers the variant; a confusion set's wrong word costs it several
nats, a right one's alternative several the other way (scripts/confusables.py).

Cost: the base is read once, with the log-probabilities of every position from the first
variant's on, in slices (SLICE rows of logits at a time, not the prompt's length); the
prefix it shares with what the cache holds already (the system prompt and instruction of
the previous paragraph or file) is not read again. That read is the prompt's own prefill:
the cache keeps it for the rewrite (decode.prefill finds it in `backend.held`). A
variant whose first different token is far less likely than the base's (by more than
`PREFILTER` nats, or the caller's figure for it: no word after it made up for that in the
measured cases) is not read at all; the others cost their window, each read in a
sequence of its own that shares the base's prefix up to the change (K + the changed
tokens − 1 rows: the first changed token's probability came with the base's reading, and
the window's last token is predicted, never read), several in one pass on a backend that
declares `branch` (llama.cpp, where the sharing costs no compute), so the whole base stays
in the cache for the rewrite; on a backend without it, each puts the cache back at the position it started
from (the base between two of them is read again), and the rewrite reads the base again
from the last of them.

Only the backend's logits and its cache are used (eval, truncate): a backend that gives no
logits cannot score (the caller does not ask).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from ..backends import branching
from .decode import common_prefix

# K: tokens after a change that are scored with it, each a row every scored swap reads. The
# smallest K whose gap between right and wrong swaps on the tuning tasks is no smaller than
# K = 10's (2.26 nats against 2.21; K = 5: 1.68); it takes the same swaps as 10 on both parts
# with a third fewer rows per swap (scripts/confusables.py --windows 10,8,6,5,4)
WINDOW = 6
PREFILTER = 4.0  # nats: a variant whose first token is this much less likely is not read
SLICE = 128  # rows of logits at most a pass while reading the base (78 MB of them, the default model's)


@dataclass(frozen=True, kw_only=True)
class Scored:
    deltas: list[float | None]  # per variant: Δ, or None (filtered out, or not a variant)
    read: int  # tokens evaluated, the variants' windows included (a test counts them)
    passes: int  # backend eval calls
    # per variant: log p(its first different token) - log p(the base's there), what the
    # prefilter reads (None: not a variant)
    left: list[float | None]
    kept: int = 0  # tokens of base the cache held already (not read)
    base_seconds: float = 0.0  # of the time, reading base: the prompt, which the run then finds cached
    base_passes: int = 0  # of the passes, base's


def _logprobs(logits: np.ndarray, tokens: Sequence[int]) -> np.ndarray:
    """log softmax(logits[i])[tokens[i]] for each row i."""
    return _picked(logits, tokens) - _lse(logits[: len(tokens)])


def _lse(logits: np.ndarray) -> np.ndarray:
    """log Σ_j exp(logits[i, j]) for each row i (>= the row's largest logit, so a
    log-probability it gives is never above 0)."""
    top = logits.max(axis=1, keepdims=True)
    return np.log(np.exp(logits - top).sum(axis=1)) + top[:, 0]


def _picked(logits: np.ndarray, tokens: Sequence[int]) -> np.ndarray:
    return logits[np.arange(len(tokens)), np.asarray(tokens, dtype=np.int64)]


def _span(base: Sequence[int], variant: Sequence[int]) -> tuple[int, int, int]:
    """(p, q_base, q_variant): base[:p] == variant[:p], base[q_base:] == variant[q_variant:]."""
    n = min(len(base), len(variant))
    p = 0
    while p < n and base[p] == variant[p]:
        p += 1
    s = 0
    while s < n - p and base[-1 - s] == variant[-1 - s]:
        s += 1
    return p, len(base) - s, len(variant) - s


def score(
    backend, base: Sequence[int], variants: Sequence[Sequence[int]], window: int | None = None,
    prefilter: Sequence[float] | None = None, need: Sequence[float] | None = None,
) -> Scored:  # fmt: skip
    """Δ of each variant against `base` (module docstring); the cache keeps what it shares
    with base (up to the first variant's change), and ends holding a prefix of base: all of
    it on a backend that reads a branch. `window`: K (default WINDOW); `prefilter`: per
    variant, the nats its first token may fall short by and still be read (default PREFILTER);
    `need`: per variant, the least Δ the caller acts on. A variant whose Δ cannot reach it
    is not read: every log-probability of its window is at most 0, so

        Δ ≤ log p(v_p | b_<p) − Σ_{t ∈ W₀} log p(b_t | b_<t)

    which the base's reading gives (its Δ is then None, as a filtered one's). Variants with
    the same tokens (a Harper suggestion that is also a confusion set's swap) are read once."""
    pre = [PREFILTER] * len(variants) if prefilter is None else list(prefilter)
    keys = [tuple(v) for v in variants]
    groups: dict[tuple, list[int]] = {}  # each distinct variant's indices, in order of its first
    for i, k in enumerate(keys):
        groups.setdefault(k, []).append(i)
    if len(groups) == len(variants):
        return _score(backend, base, variants, window, pre, need)
    at = {k: j for j, k in enumerate(groups)}
    group_pre = [max(pre[i] for i in g) for g in groups.values()]
    group_need = None if need is None else [min(need[i] for i in g) for g in groups.values()]
    got = _score(backend, base, [variants[g[0]] for g in groups.values()], window, group_pre, group_need)
    left = [got.left[at[k]] for k in keys]
    deltas = [got.deltas[at[k]] if lf is not None and lf >= -p else None for k, lf, p in zip(keys, left, pre, strict=True)]
    return replace(got, deltas=deltas, left=left)


def _score(
    backend, base: Sequence[int], variants: Sequence[Sequence[int]], window: int | None,
    prefilter: Sequence[float], need: Sequence[float] | None,
) -> Scored:
    window = WINDOW if window is None else window
    spans = [_span(base, v) for v in variants]
    live = [i for i, (p, qb, qv) in enumerate(spans) if p > 1 and (qb > p or qv > p)]
    deltas: list[float | None] = [None] * len(variants)
    left: list[float | None] = [None] * len(variants)
    if not live:
        return Scored(deltas=deltas, read=0, passes=0, left=left)
    asked = {i: (spans[i][0], variants[i][spans[i][0]]) for i in live if spans[i][0] < len(variants[i])}
    first = min(spans[i][0] for i in live)
    kept = min(common_prefix(backend.held, base), first - 1)
    t0 = time.perf_counter()
    lp, first_lp, read, passes = _read_base(backend, base, first, kept, asked)
    on_base = {"base_seconds": time.perf_counter() - t0, "base_passes": passes}
    for i in live:
        left[i] = first_lp.get(i, -np.inf) - (lp[spans[i][0]] if spans[i][0] < len(base) else 0.0)
    # per variant read: (variant, p, the sum over base's window, the tokens read: v[p : qv+k-1])
    todo = []
    for i in sorted(live, key=lambda i: spans[i][0]):
        p, qb, qv = spans[i]
        if i in first_lp and left[i] >= -prefilter[i]:
            k = min(window, len(base) - qb)
            bound = first_lp[i] - float(lp[p : qb + k].sum())  # the window's reading adds the rest (<= 0)
            if need is not None and bound < need[i] and qv + k - 1 > p:
                continue  # cannot reach what the caller acts on: not read
            deltas[i] = bound
            if qv + k - 1 > p:
                todo.append((i, p, list(variants[i][p : qv + k - 1])))
    if branching(backend):  # each in a sequence of its own, several in one pass: the base stays whole
        per = backend.branches
        for at in range(0, len(todo), per):
            group = todo[at : at + per]
            got = backend.eval_branches([(p, seg) for _, p, seg in group])
            for (i, p, _seg), logits in zip(group, got, strict=True):
                deltas[i] += _window(logits, variants[i], p)
            read, passes = read + sum(len(seg) for *_, seg in group), passes + 1
        return Scored(deltas=deltas, read=read, passes=passes, left=left, kept=kept, **on_base)
    held = len(base)  # the cache holds base[:held]
    for i, p, seg in todo:
        if held > p:
            backend.truncate(p)
        elif held < p:  # an earlier variant's window left the cache shorter: the gap
            backend.eval(base[held:p])
            read, passes = read + p - held, passes + 1
        held = p
        logits = backend.eval(seg, n_logits=len(seg))
        read, passes = read + len(seg), passes + 1
        deltas[i] += _window(logits, variants[i], p)
        backend.truncate(p)
    return Scored(deltas=deltas, read=read, passes=passes, left=left, kept=kept, **on_base)


def _window(logits: np.ndarray, variant: Sequence[int], p: int) -> float:
    """Σ log p(variant[t] | variant[:t]) for the tokens after its first changed one, from the
    logits of reading variant[p : p + len(logits)] after variant[:p]."""
    return float(_logprobs(logits, variant[p + 1 : p + 1 + len(logits)]).sum())


def _read_base(
    backend, base: Sequence[int], first: int, keep: int, asked: dict[int, tuple[int, int]]
) -> tuple[np.ndarray, dict[int, float], int, int]:
    """Read base into the cache, whose first `keep` tokens are base's already (keep <
    first): (lp, first_lp, tokens read, passes), where lp[t] =
    log p(base[t] | base[:t]) for t >= first, and first_lp[i] = log p(variant i's token at
    its position p | base[:p]) for each `asked` i: (p, token), p >= first >= 2."""
    backend.truncate(keep)
    at: dict[int, list[tuple[int, int]]] = {}  # position -> [(variant, its token there)]
    for i, (p, tok) in asked.items():
        at.setdefault(p, []).append((i, tok))
    lp, first_lp = np.zeros(len(base)), {}
    read, passes = 0, 0
    for start, end in _slices(keep, first - 1, len(base)):
        logits = backend.eval(base[keep if start == first - 1 else start : end], n_logits=end - start)
        read, passes = read + end - (keep if start == first - 1 else start), passes + 1
        chunk = base[start:end]
        rows = range(len(chunk) - (1 if end == len(base) else 0))
        nxt = [base[start + r + 1] for r in rows]
        if nxt:  # the last slice may be the base's last token alone: it predicts nothing
            lse = _lse(logits[: len(nxt)])
            lp[start + 1 : start + 1 + len(nxt)] = _picked(logits, nxt) - lse
        for r in rows:  # each row's log-sum-exp once, for every variant that branches there
            for i, tok in at.get(start + r + 1, ()):
                first_lp[i] = float(logits[r, tok] - lse[r])
    return lp, first_lp, read, passes


def _slices(keep: int, start: int, end: int) -> list[tuple[int, int]]:
    """The passes that read base[keep:end] with the logits of base[start:end]: ceil((end -
    start) / SLICE) passes of (nearly) equal rows, the rows before `start` in the first (a
    pass of a few rows costs nearly a pass's fixed part: 64 + 11 rows took 1.05 s where 75
    took 0.96 s, and 6 rows alone 0.12 s; default model, 2 AMD EPYC cores)."""
    n = -(-(end - start) // SLICE)
    cuts = [start + (end - start) * j // n for j in range(n + 1)]
    return list(zip(cuts, cuts[1:], strict=False))
