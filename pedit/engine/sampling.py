"""Choosing the next token from logits: greedy, or one seeded draw.

Temperature 0 is argmax (never `max(t, 1e-5)`). Otherwise the distribution is
    p = softmax(logits / T), restricted to the top_k largest and then to the smallest
    prefix (in descending p) whose mass reaches top_p, renormalised,
and the token is the inverse CDF of that distribution at ONE uniform draw u ~ U[0, 1) from
the run's own numpy Generator. One draw per emitted token, whatever path produced the
logits, is what lets speculative decoding reproduce plain decoding seed for seed.
"""

from __future__ import annotations

import numpy as np

from .options import Sampling

_CANDIDATES = 512  # top-p looks at this many most likely tokens before sorting everything


def distribution(logits: np.ndarray, s: Sampling) -> tuple[np.ndarray, np.ndarray]:
    """(token ids, probabilities) of the distribution to draw from; logits: [n_vocab]."""
    z = logits.astype(np.float64) / s.temperature
    ids = np.arange(z.size)
    if s.top_k and s.top_k < z.size:
        ids = np.sort(np.argpartition(-z, s.top_k - 1)[: s.top_k])
    if s.top_p < 1.0:
        ids = _nucleus(z, ids, s.top_p)
    zi = z[ids]
    p = np.exp(zi - zi.max())
    return ids, p / p.sum()


def _nucleus(z: np.ndarray, ids: np.ndarray, top_p: float) -> np.ndarray:
    """The smallest set of most likely ids (ties broken by id) with mass >= top_p."""
    zi = z[ids]
    w = np.exp(zi - zi.max())
    total = w.sum()
    if ids.size > _CANDIDATES:  # the nucleus usually lies in a few hundred tokens: skip the full sort
        top = np.argpartition(-zi, _CANDIDATES - 1)[:_CANDIDATES]
        if w[top].sum() >= top_p * total:
            ids, zi, w = ids[top], zi[top], w[top]
    order = np.lexsort((ids, -zi))  # descending probability, then ascending id
    cum = np.cumsum(w[order]) / total
    keep = int(np.searchsorted(cum, top_p)) + 1
    return ids[order[:keep]]


def sample(logits: np.ndarray, s: Sampling, rng: np.random.Generator) -> int:
    """The next token: argmax when greedy, else the inverse CDF at one uniform draw."""
    if s.greedy:
        return int(np.argmax(logits))
    ids, p = distribution(logits, s)
    u = rng.random()
    i = int(np.searchsorted(np.cumsum(p), u, side="right"))
    return int(ids[min(i, ids.size - 1)])
