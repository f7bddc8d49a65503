"""Adaptive multi-level n-gram drafter (ANPD: Ou, Chen and Tian, "Lossless
Acceleration of LLM via Adaptive N-gram Parallel Decoding") with a probability threshold
(Kim et al., "Autocomplete Algorithm for Language Models", KAIST).

Tables for n = N..2: the counts of the token that followed each (n-1)-token context,
built from the prompt and updated with every token the model emits (ANPD "Update").
Query (ANPD §3.2, Multi-Level N-gram): the largest n whose context has been seen decides,
and its most frequent continuation is drafted; the draft is extended autoregressively on
its own tokens. Threshold (Kim et al.'s SuggestTokens(model, text, p)): the draft stops as
soon as the product of the continuations' estimated probabilities,
    P(draft) = prod_i count(x_i | ctx_i) / count(ctx_i),
would fall below p.
"""

from __future__ import annotations

from collections.abc import Sequence


class _Table:
    """(n-1)-token context -> {next token: count}, with the running argmax and total."""

    __slots__ = ("best", "counts", "totals")

    def __init__(self):
        self.counts: dict[tuple[int, ...], dict[int, int]] = {}
        self.best: dict[tuple[int, ...], int] = {}
        self.totals: dict[tuple[int, ...], int] = {}

    def add(self, ctx: tuple[int, ...], token: int) -> None:
        row = self.counts.setdefault(ctx, {})
        c = row[token] = row.get(token, 0) + 1
        self.totals[ctx] = self.totals.get(ctx, 0) + 1
        best = self.best.get(ctx)
        if best is None or c >= row[best]:  # ties: the most recent continuation wins
            self.best[ctx] = token

    def predict(self, ctx: tuple[int, ...]) -> tuple[int, float] | None:
        best = self.best.get(ctx)
        if best is None:
            return None
        return best, self.counts[ctx][best] / self.totals[ctx]


class NGramDrafter:
    name = "ngram"
    label = "ngram"
    priors = {"ngram": (1.0, 2.0)}

    def __init__(self, n: int = 5, threshold: float = 0.2):
        if n < 2:
            raise ValueError("n must be >= 2")
        if not 0.0 <= threshold <= 1.0:
            raise ValueError("threshold must be in [0, 1]")
        self.n, self.threshold = n, threshold
        self._tables = {m: _Table() for m in range(2, n + 1)}  # m-gram: (m-1) context tokens
        self._seen = 0

    def _update(self, context: Sequence[int]) -> None:
        for t in range(max(self._seen, 1), len(context)):
            for m, table in self._tables.items():
                if t >= m - 1:
                    table.add(tuple(context[t - m + 1 : t]), context[t])
        self._seen = len(context)

    def _next(self, tail: Sequence[int]) -> tuple[int, float] | None:
        for m in range(self.n, 1, -1):  # Multi-Level: the largest n with a match decides
            if len(tail) >= m - 1:
                hit = self._tables[m].predict(tuple(tail[len(tail) - m + 1 :]))
                if hit is not None:
                    return hit
        return None

    def propose(self, context: Sequence[int], k: int) -> list[int]:
        self._update(context)
        tail = list(context[-(self.n - 1) :])
        draft: list[int] = []
        p = 1.0
        while len(draft) < k:
            hit = self._next(tail)
            if hit is None or p * hit[1] < self.threshold:
                break
            p *= hit[1]
            draft.append(hit[0])
            tail = tail[1:] + [hit[0]] if len(tail) >= self.n - 1 else tail + [hit[0]]
        return draft
