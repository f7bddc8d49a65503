"""How many draft tokens to verify: the K that maximises expected tokens per second.

Acceptance. For each proposal label s (a drafter, and how it made the proposal: prompt
lookup's match length, predicted output in sync or just re-synced), two running estimates:
  first_s = P(the model accepts the draft's first token),
  next_s  = P(it accepts the next draft token | it accepted the previous one),
each from Beta prior counts plus decayed counts of trials and successes. They differ most
where nothing can be copied: a lookup match in open-ended text is usually wrong at once
(first_s low), but when its first token is right the copy tends to run on (next_s high); one
pooled rate would let the long runs talk the planner into long, doomed drafts. Every step,
every proposal that could have been chosen is scored against the tokens the model actually
emitted (one that was not used is scored for free, up to the emitted length), so a drafter
that is never chosen still gets measured.

Choice. With the draft's label s and the cost model's t(n, c) at the current context
length c, verifying k draft tokens
emits in expectation
    E(k) = 1 + first_s (1 + next_s + ... + next_s^(k-1))  (the model's own token + accepted)
tokens for t(k + 1) seconds, so the planner picks
    k* = argmax_{0 <= k <= len(draft)}  E(k) / t(k + 1)
and k* = 0 is a plain single-token step: a draft is only verified when it is expected to
pay for itself, by a margin (10%) that absorbs the error of the estimates, so that where
nothing can be copied pedit stays as fast as plain decoding. With t(2) > 2 t(1) (these
CPUs), a short or doubtful draft never pays.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from .costmodel import CostModel
from .drafters.compose import Draft

DEFAULT_PRIOR = (1.0, 1.0)


@dataclass
class _Rate:
    a: float  # prior successes
    b: float  # prior failures
    trials: float = 0.0
    successes: float = 0.0

    @property
    def p(self) -> float:
        return (self.a + self.successes) / (self.a + self.b + self.trials)

    @property
    def low(self) -> float:
        """One standard deviation below the mean of the Beta posterior: what the rate is
        at least, about 5 times in 6. Thin evidence (a prior, a few decayed trials) gives
        a wide Beta and a cautious rate; hundreds of trials (a file being copied) give ~p."""
        n = self.a + self.b + self.trials
        p = self.p
        return max(0.0, p - math.sqrt(p * (1 - p) / (n + 1)))

    def decay(self, factor: float) -> None:
        self.trials *= factor
        self.successes *= factor

    def add(self, success: bool) -> None:
        self.trials += 1
        self.successes += success


class _Counts:
    """A label's two rates, each from its prior: (a, b) for both, or (a, b, a_next, b_next)."""

    __slots__ = ("first", "next")

    def __init__(self, a: float, b: float, *nxt: float):
        self.first, self.next = _Rate(a, b), _Rate(*(nxt or (a, b)))


class Acceptance:
    """Per-label running acceptance; counts decay by `decay` per step (recent text counts)."""

    def __init__(self, priors: dict[str, tuple[float, float]], decay: float = 0.98):
        self._counts = {label: _Counts(*prior) for label, prior in priors.items()}
        self.decay = decay
        self._pending: dict[str, list[int]] = {}  # drafter -> its guess's tokens yet to score

    def _get(self, label: str) -> _Counts:
        if label not in self._counts:
            self._counts[label] = _Counts(*DEFAULT_PRIOR)
        return self._counts[label]

    def rates(self, label: str, *, cautious: bool = False) -> tuple[float, float]:
        """(first_s, next_s): the posterior means; with `cautious` (what the planner bets
        on) next_s is taken a standard deviation low: a long draft multiplies next_s by
        itself, so its error compounds where the first token's does not."""
        c = self._get(label)
        return c.first.p, (c.next.low if cautious else c.next.p)

    def expected(self, label: str, k: int) -> float:
        """Expected accepted draft tokens among the first k: first (1 + next + ... + next^(k-1))."""
        if k < 1:
            return 0.0
        first, nxt = self.rates(label)
        return first * (k if nxt >= 1.0 else (1 - nxt**k) / (1 - nxt))

    def observe(self, proposals: Iterable[Draft], emitted: list[int]) -> None:
        """Score this step's eligible proposals against the tokens it emitted. A proposal
        that matched every emitted token and has more stays pending, and its next tokens are
        scored against the next steps' tokens: so next_s is learnt from plain steps too (one
        emitted token would score only first tokens, and a rate that is never bet on would
        never move). While a drafter's new proposal is the pending guess one step on, the
        pending one goes on being scored (under the new proposal's label: the drafter's
        state now), so no token is counted twice."""
        for counts in self._counts.values():
            counts.first.decay(self.decay)
            counts.next.decay(self.decay)
        if not emitted:
            return
        pending, self._pending = self._pending, {}
        for d in proposals:
            if not d.tokens:
                continue
            counts = self._get(d.label)
            counts.first.add(d.tokens[0] == emitted[0])
            old = pending.get(d.source)
            n = min(len(emitted), len(d.tokens), len(old or ()))
            if old and old[:n] == d.tokens[:n]:  # the same guess: go on scoring the older one
                left = self._follow(counts.next, old, emitted)
            elif d.tokens[0] == emitted[0]:
                left = self._follow(counts.next, d.tokens[1:], emitted[1:])
            else:
                continue
            if left:
                self._pending[d.source] = left

    @staticmethod
    def _follow(rate: _Rate, tokens: list[int], emitted: list[int]) -> list[int]:
        """Score `tokens` against `emitted` up to the first miss; what is left to score
        later ([] after a miss or when every token was scored)."""
        for guess, actual in zip(tokens, emitted, strict=False):
            rate.add(guess == actual)
            if guess != actual:
                return []
        return tokens[len(emitted) :]


class Planner(Protocol):
    def choose(self, label: str, available: int, at: int = 0) -> int:
        """How many of the `available` draft tokens (labelled `label`) to verify, after `at`
        tokens of context."""


BUCKET = 64  # context positions that share one table of prices
# The predicted output's next_s is bet on at its mean, not cautiously: caution cost
# copy-heavy edits a third more passes (bisect rename: 46 against 34).
TRUSTED = "predicted"


class CostPlanner:
    """--speculate auto: k from the cost model (at the current context length) and the
    acceptance estimates. The prices t(k + 1, c) are computed once per BUCKET positions."""

    def __init__(self, cost: CostModel, acceptance: Acceptance, margin: float = 0.1):
        self.cost, self.acceptance, self.margin = cost, acceptance, margin
        self._prices: dict[int, list[float]] = {}

    def prices(self, at: int, available: int) -> list[float]:
        """[t(1, c), t(2, c), ...] for at least available + 1 sizes, c at the bucket's middle."""
        bucket = at // BUCKET
        table = self._prices.get(bucket)
        if table is None or len(table) < available + 1:
            c = bucket * BUCKET + BUCKET // 2
            table = [self.cost.cost(n, c) for n in range(1, max(available + 1, 65) + 1)]
            self._prices[bucket] = table
        return table

    def choose(self, label: str, available: int, at: int = 0) -> int:
        if available < 1:
            return 0
        first, nxt = self.acceptance.rates(label, cautious=not label.startswith(TRUSTED))
        t = self.prices(at, available)
        best_k, best_rate = 0, (1.0 + self.margin) / t[0]
        survive, expected = 1.0, 1.0
        for k in range(1, available + 1):
            survive *= nxt if k > 1 else first
            expected += survive
            rate = expected / t[k]
            if rate > best_rate:
                best_k, best_rate = k, rate
        return best_k


class FixedPlanner:
    """--speculate fixed: always verify the whole draft, up to --draft-max (the peers' way)."""

    def choose(self, label: str, available: int, at: int = 0) -> int:
        return available
