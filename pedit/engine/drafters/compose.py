"""Composition: one draft per step, from the drafter best placed to propose it.

The predicted-output draft comes first whenever that drafter has something to propose
(it is in sync with the file, or has just re-synced); where it has nothing, the other
drafters fill in, and the proposal the planner values most (expected accepted tokens
under the running acceptance estimate of its label) wins. Every draft carries its
drafter's name, so accepted tokens are attributed to the drafter that proposed them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .base import Drafter


@dataclass(frozen=True, slots=True)
class Draft:
    tokens: list[int]
    source: str  # the drafter's name; "" for an empty draft
    label: str  # the acceptance class of this proposal (see Drafter.label)


NO_DRAFT = Draft([], "", "")


def priors(drafters: Sequence[Drafter]) -> dict[str, tuple[float, float]]:
    """Every label's prior, for the planner's acceptance estimates."""
    return {label: prior for d in drafters for label, prior in d.priors.items()}


class Composite:
    """Drafters in priority order. With `primary`, the first one's proposal is taken
    whenever it has one (predicted output); otherwise the most valuable proposal wins."""

    def __init__(
        self,
        drafters: Sequence[Drafter],
        value: Callable[[str, int], float],
        *,
        primary: bool = False,
    ):
        self.drafters = list(drafters)
        self.value = value  # (label, draft length) -> expected accepted tokens
        self.primary = primary

    def propose_all(self, context: Sequence[int], k: int) -> list[Draft]:
        """Every drafter's proposal, in priority order (the planner scores even the
        proposals that are not used). When the primary has one it is the only eligible one
        (eligible()), so the others are not asked: they catch up with the context the next
        time they are (each reads only the part it has not seen)."""
        if k < 1:
            return []
        out = []
        for i, d in enumerate(self.drafters):
            tokens = d.propose(context, k)
            out.append(Draft(tokens, d.name, d.label) if tokens else NO_DRAFT)
            if i == 0 and self.primary and tokens:
                return out + [NO_DRAFT] * (len(self.drafters) - 1)
        return out

    def eligible(self, proposals: Sequence[Draft]) -> list[Draft]:
        """The proposals that could be chosen: the primary's alone when it has one. Only
        these are scored, so each label's acceptance is measured in the situations where
        it is used (prompt lookup while the output copies the file would look excellent,
        and mislead the planner where the output departs from it)."""
        if self.primary and proposals and proposals[0].tokens:
            return [proposals[0]]
        return [p for p in proposals if p.tokens]

    def choose(self, proposals: Sequence[Draft]) -> Draft:
        options = self.eligible(proposals)
        return max(options, key=lambda d: self.value(d.label, len(d.tokens)), default=NO_DRAFT)

    def propose(self, context: Sequence[int], k: int) -> Draft:
        return self.choose(self.propose_all(context, k))
