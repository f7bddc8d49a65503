"""The drafter protocol: propose what comes next.

A drafter sees the whole token sequence so far (`context`: prompt, then every emitted
token; it only ever grows) and proposes up to k tokens that may follow it. Drafters keep
their own incremental state by reading the part of `context` they have not seen yet, so
what the model accepted reaches them without a separate call (the `feedback` method of
the first design's protocol was a no-op in every drafter, and is gone until one needs it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol


class Drafter(Protocol):
    name: str  # recorded as the source of every token it proposes
    # The planner keeps one acceptance estimate per label: a drafter labels each proposal
    # with how it was made (prompt lookup: the match length), since that predicts how
    # often the model will agree. priors: Beta(a, b) prior per label.
    label: str  # the label of the last proposal
    priors: dict[str, tuple[float, float]]

    def propose(self, context: Sequence[int], k: int) -> list[int]: ...
