"""Composition: one draft per step, from the drafter best placed to propose it.

The predicted-output draft comes first whenever that drafter has something to propose
(it is in sync with the file, or has just re-synced); where it has nothing, the other
drafters fill in, and the proposal the planner values most (expected accepted tokens
under the running acceptance estimate of its label) wins. Every draft carries its
drafter's name, so accepted tokens are attributed to the drafter that proposed them.

Variants. The answer may be predicted more than one way: a tool's edit of the file and the
file as it was (the model may refuse the tool's edit), or the file with its hard-wrapped
paragraphs joined (a model asked to fix a text often unwraps it). Each is a predicted
drafter of its own, following the output on its own; together they are the primary group,
and the one that has followed the output longest since it last lost the sync (its
`streak`; the first on a tie) drafts. So where the model refuses a tool's edit the file's
own text drafts on at once, in sync, where one drafter alone would need a re-sync and the
plain steps it takes.
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
    """Drafters in priority order. With `primary` (True: 1), the first `primary` drafters
    are the primary group (the predicted variants): the proposal of the one among them with
    the longest streak is taken whenever one has a proposal; otherwise the most valuable
    proposal of the others wins."""

    def __init__(
        self,
        drafters: Sequence[Drafter],
        value: Callable[[str, int], float],
        *,
        primary: int | bool = False,
    ):
        self.drafters = list(drafters)
        self.value = value  # (label, draft length) -> expected accepted tokens
        self.primary = int(primary)

    def propose_all(self, context: Sequence[int], k: int) -> list[Draft]:
        """Every drafter's proposal, in priority order (the planner scores even the
        proposals that are not used). When the primary group has one, the group's chosen
        proposal comes first and is the only eligible one (eligible()), so the others are
        not asked: they catch up with the context the next time they are (each reads only
        the part it has not seen). Every member of the group is asked, so each follows the
        output."""
        if k < 1:
            return []
        group, best = self.drafters[: self.primary], None
        for d in group:
            tokens = d.propose(context, k)
            if tokens and (best is None or getattr(d, "streak", 0) > getattr(best[0], "streak", 0)):
                best = (d, tokens)
        rest = [NO_DRAFT] * (len(self.drafters) - 1)
        if best is not None:
            d, tokens = best
            return [Draft(tokens, d.name, d.label), *rest]
        out = [NO_DRAFT] * len(group)
        for d in self.drafters[self.primary :]:
            tokens = d.propose(context, k)
            out.append(Draft(tokens, d.name, d.label) if tokens else NO_DRAFT)
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
