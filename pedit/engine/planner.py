"""How many draft tokens to verify: the K that maximises expected tokens per second.

Acceptance. For each proposal label s (a drafter, and how it made the proposal: prompt
lookup's match length, predicted output in sync or just re-synced), a running estimate of
the probability that the model accepts the next draft token given it accepted the
previous ones, alpha_s, from Beta prior counts plus decayed counts of trials and
successes. Every step, every proposal that could have been chosen is scored against the
tokens the model actually emitted (one that was not used is scored for free, up to the
emitted length), so a drafter that is never chosen still gets measured.

Choice. With the draft's label s and the cost model's t(n, c) at the current context
length c, verifying k draft tokens
emits in expectation
    E(k) = 1 + alpha_s + alpha_s^2 + ... + alpha_s^k       (the model's own token + accepted)
tokens for t(k + 1) seconds, so the planner picks
    k* = argmax_{0 <= k <= len(draft)}  E(k) / t(k + 1)
and k* = 0 is a plain single-token step: a draft is only verified when it is expected to
pay for itself, by a margin (10%) that absorbs the error of the estimates, so that where
nothing can be copied pedit stays as fast as plain decoding. With t(2) > 2 t(1) (these
CPUs), a short or doubtful draft never pays.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from .costmodel import CostModel
from .drafters.compose import Draft

DEFAULT_PRIOR = (1.0, 1.0)


@dataclass
class _Counts:
    a: float  # prior successes
    b: float  # prior failures
    trials: float = 0.0
    successes: float = 0.0

    @property
    def alpha(self) -> float:
        return (self.a + self.successes) / (self.a + self.b + self.trials)


class Acceptance:
    """Per-label running acceptance; counts decay by `decay` per step (recent text counts)."""

    def __init__(self, priors: dict[str, tuple[float, float]], decay: float = 0.98):
        self._counts = {label: _Counts(*prior) for label, prior in priors.items()}
        self.decay = decay

    def _get(self, label: str) -> _Counts:
        if label not in self._counts:
            self._counts[label] = _Counts(*DEFAULT_PRIOR)
        return self._counts[label]

    def alpha(self, label: str) -> float:
        return self._get(label).alpha

    def expected(self, label: str, k: int) -> float:
        """Expected accepted draft tokens among the first k: alpha + alpha^2 + ... + alpha^k."""
        a = self.alpha(label)
        return k if a >= 1.0 else a * (1 - a**k) / (1 - a)

    def observe(self, proposals: Iterable[Draft], emitted: list[int]) -> None:
        for counts in self._counts.values():
            counts.trials *= self.decay
            counts.successes *= self.decay
        for draft in proposals:
            if not draft.tokens:
                continue
            counts = self._get(draft.label)
            for guess, actual in zip(draft.tokens, emitted, strict=False):
                counts.trials += 1
                if guess != actual:
                    break
                counts.successes += 1


class Planner(Protocol):
    def choose(self, label: str, available: int, at: int = 0) -> int:
        """How many of the `available` draft tokens (labelled `label`) to verify, after `at`
        tokens of context."""


BUCKET = 64  # context positions that share one table of prices


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
        a = self.acceptance.alpha(label)
        t = self.prices(at, available)
        best_k, best_rate = 0, (1.0 + self.margin) / t[0]
        survive, expected = 1.0, 1.0
        for k in range(1, available + 1):
            survive *= a
            expected += survive
            rate = expected / t[k]
            if rate > best_rate:
                best_k, best_rate = k, rate
        return best_k


class FixedPlanner:
    """--speculate fixed: always verify the whole draft, up to --draft-max (the peers' way)."""

    def choose(self, label: str, available: int, at: int = 0) -> int:
        return available
