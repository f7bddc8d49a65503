"""Keep-bias: β added to the logit of the token the file predicts next, before choosing.

GECToR's "confidence bias" on its KEEP tag, for a generative rewrite. At every position
of the answer the original file proposes a token: the predicted-output cursor's (the
draft re-synced after each edit, drafters/predicted.py). With
    logits'[t] = logits[t] + β   for t = the file's token,  logits' = logits elsewhere,
β > 0 makes the model change the text only where it is confident (precision), β < 0
makes a timid model dare the changes it almost made (recall). β = 0 is plain decoding.

Lossless with respect to plain decoding *with the same bias*: the file's token at a
position is a function of the tokens before it alone. `KeepBias` steps a private
PredictedOutput one token at a time (propose after each token, exactly as plain decoding
does), and for a verify pass steps a copy of it through the draft, so row i of the pass is
biased towards the token plain decoding would have biased after the same i tokens.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence

import numpy as np

from .drafters.predicted import PredictedOutput


class KeepBias:
    def __init__(self, beta: float, draft: Sequence[int], prompt: Sequence[int]):
        self.beta = float(beta)
        self._cursor = PredictedOutput(draft, start=len(prompt), learn=False)
        self._context = list(prompt)
        self.target = self._next(self._cursor, self._context)

    @staticmethod
    def _next(cursor: PredictedOutput, context: list[int]) -> int | None:
        got = cursor.propose(context, 1)
        return got[0] if got else None

    def advance(self, tokens: Sequence[int]) -> None:
        """The answer went on with `tokens` (one at a time, as plain decoding emits them)."""
        for tok in tokens:
            self._context.append(tok)
            self.target = self._next(self._cursor, self._context)

    def targets(self, guess: Sequence[int]) -> list[int | None]:
        """The file's token for each row of a pass over [last, *guess]: row i follows
        guess[:i]. The state is not changed (advance() does that with what is emitted)."""
        out = [self.target]
        if not guess:
            return out
        cursor, n = copy.copy(self._cursor), len(self._context)
        try:  # the guess rides on the context for the walk, then goes (no copy of the context)
            for tok in guess:
                self._context.append(tok)
                out.append(self._next(cursor, self._context))
        finally:
            del self._context[n:]
        return out

    def bias(self, rows: np.ndarray, targets: Sequence[int | None]) -> np.ndarray:
        """rows ([n, n_vocab] or [n_vocab]) with β added at each row's target, in place:
        a backend's eval() returns logits the caller may modify, and they are used once."""
        grid = rows if rows.ndim == 2 else rows[np.newaxis]  # a view either way
        for i, t in enumerate(targets):
            if t is not None and t < grid.shape[1]:
                grid[i, t] += self.beta
        return rows
