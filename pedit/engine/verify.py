"""Which draft tokens the model accepts. Pure functions: logits in, decision out.

rows[i] are the logits after [last, d_1 .. d_i] (rows: [k+1, n_vocab]). Walking i = 0..k:
    greedy:   y_i = argmax(rows[i])
    sampling: y_i = one draw from rows[i]'s distribution with the run's Generator
    accept d_{i+1} while y_i == d_{i+1}; the first y_i that differs is the model's own
    token, and if all k drafts are accepted y_k is a free extra token (as the
    reverse-engineering of OpenAI's Predicted Outputs found it).
This emits exactly the tokens plain decoding would, with exactly one draw per emitted
token, so on a backend whose logits depend only on the prefix the output equals plain
decoding's seed for seed. A stop token (EOS) ends the walk where it is drawn.
"""

from __future__ import annotations

from collections.abc import Container, Sequence

import numpy as np

from .sampling import Sampling, sample


def verify(
    rows: np.ndarray,
    draft: Sequence[int],
    sampling: Sampling,
    rng: np.random.Generator,
    stop: Container[int] = (),
) -> tuple[int, int]:
    """(m, y): the model agrees with draft[:m]; y is its next token (possibly a stop token)."""
    k = len(draft)
    if rows.shape[0] != k + 1:
        raise ValueError(f"verify: {rows.shape[0]} rows of logits for a draft of {k}")
    if sampling.greedy:
        # argmax row by row would cost a numpy call each, all rows at once scans rows past
        # the first mismatch: take them in blocks of 1, 2, 4, ... (a miss early costs one row)
        i, width = 0, 1
        while True:
            ys = rows[i : i + width].argmax(axis=1).tolist()
            for j, y in enumerate(ys, i):
                if j == k or y != draft[j] or y in stop:
                    return j, y
            i, width = i + len(ys), 2 * width
    for i in range(k + 1):
        y = sample(rows[i], sampling, rng)  # one draw per emitted token
        if i == k or y != draft[i] or y in stop:
            return i, y
    raise AssertionError("unreachable")
