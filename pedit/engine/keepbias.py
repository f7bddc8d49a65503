"""Keep-bias: β added to the logit of the token the file predicts next, before choosing.

GECToR's "confidence bias" on its KEEP tag, for a generative rewrite. At every position
of the answer the original file proposes a token: the predicted-output cursor's (the
draft re-synced after each edit, drafters/predicted.py). With
    logits'[t] = logits[t] + β   for t = the file's token,  logits' = logits elsewhere,
β > 0 makes the model change the text only where it is confident (precision), β < 0
makes a timid model dare the changes it almost made (recall). β = 0 is plain decoding.

A draft with a tool's suggestions in it (fix's spelling and grammar, refactor's exact
rename) may lean harder on what the tool changed: `boost[j]` is added to β where the
target is draft token j, so
    logits'[t] = logits[t] + β + boost[j]   for t = draft[j], the cursor at j,
and `suggested(draft, file)` gives the draft tokens outside difflib's equal runs with the
file's tokens (what the tool changed), to boost by β_suggest - β. A tool's deletion ("by by"
-> "by") changes no draft token; with `deletions` the draft token where the answer,
copying the file, first meets the draft going another way is counted as changed (the
token the model must choose over the file's deleted one).

Lossless with respect to plain decoding *with the same bias*: the file's token at a
position is a function of the tokens before it alone. `KeepBias` steps a private
PredictedOutput one token at a time (propose after each token, exactly as plain decoding
does), and for a verify pass steps a copy of it through the draft, so row i of the pass is
biased towards the token plain decoding would have biased after the same i tokens.
"""

from __future__ import annotations

import copy
import difflib
from collections.abc import Sequence

import numpy as np

from .drafters.predicted import PredictedOutput

Target = tuple[int, float] | None  # (token, the β added to its logit), or no target


def suggested(draft: Sequence[int], file: Sequence[int], deletions: bool = False) -> list[bool]:
    """For each draft token: did the tool change it (not in an equal run of difflib's
    alignment of the two token lists)? With `deletions`, also the token where a deletion takes effect."""
    out = [True] * len(draft)
    ops = difflib.SequenceMatcher(None, file, draft, autojunk=False).get_opcodes()
    for tag, _, _, j1, j2 in ops:
        if tag == "equal":
            out[j1:j2] = [False] * (j2 - j1)
    for tag, i1, _, j1, _ in ops if deletions else ():
        if tag != "delete":
            continue
        # where the answer, copying the file, first meets the draft going another way: past
        # the draft tokens the deleted ones repeat ("by by": difflib may delete either one)
        j = j1
        while j < len(draft) and i1 + j - j1 < len(file) and draft[j] == file[i1 + j - j1]:
            j += 1
        if j < len(draft):
            out[j] = True
    return out


class KeepBias:
    def __init__(
        self, beta: float, draft: Sequence[int], prompt: Sequence[int], boost: Sequence[float] | None = None
    ):
        self.beta = float(beta)
        self._boost = list(boost) if boost is not None and any(boost) else None
        self._cursor = PredictedOutput(draft, start=len(prompt), learn=False)
        self._context = list(prompt)
        self.target = self._next(self._cursor, self._context)

    def _next(self, cursor: PredictedOutput, context: list[int]) -> Target:
        got = cursor.propose(context, 1)
        if not got:
            return None
        # learn=False: the proposal is draft[cursor.cursor], the token the boost is for
        j = cursor.cursor
        extra = self._boost[j] if self._boost is not None and j < len(self._boost) else 0.0
        return got[0], self.beta + extra

    def advance(self, tokens: Sequence[int]) -> None:
        """The answer went on with `tokens` (one at a time, as plain decoding emits them)."""
        for tok in tokens:
            self._context.append(tok)
            self.target = self._next(self._cursor, self._context)

    def targets(self, guess: Sequence[int]) -> list[Target]:
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

    def bias(self, rows: np.ndarray, targets: Sequence[Target]) -> np.ndarray:
        """rows ([n, n_vocab] or [n_vocab]) with each row's target's β added, in place:
        a backend's eval() returns logits the caller may modify, and they are used once."""
        grid = rows if rows.ndim == 2 else rows[np.newaxis]  # a view either way
        for i, t in enumerate(targets):
            if t is not None and t[0] < grid.shape[1]:
                grid[i, t[0]] += t[1]
        return rows
