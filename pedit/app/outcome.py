"""What a job gives its shell: a stream of events, each run's opened by Started and closed
by the engine's Finished, whose return value is the Outcome (the new text or the summary,
every run's figures, and for a refactor the check of its intent).

    events = rewrite(job, text, name)    # Started("a.md"), Prefilled, ..., Finished, ...
    outcome = ui.runs.answer(events, show)
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..events import Event, Stats

if TYPE_CHECKING:  # a command's start-up imports neither (a resident answers it: cli/answerers.py)
    from ..checks.intentcheck import Verdict
    from ..tools.intent import Intent


@dataclass(frozen=True, slots=True)
class Started:
    """A run of the job begins: its events follow, up to its Finished."""

    label: str  # the file's name, and its part when it is cut in runs ("a.md part 2 of 3")


@dataclass
class Outcome:
    text: str  # the rewritten file, or the summary
    stats: list[Stats]
    # a refactor's check of its intent (refactor.py): the verdict on what `text` is, the
    # runs it took, the intent read, and whose answer `text` is ("model", or "tool": the
    # exact rename, when the model's answers failed the check)
    verdict: Verdict | None = None
    tries: int = 1
    intent: Intent | None = None
    answer: str = "model"
    notes: list[str] = field(default_factory=list)  # pieces kept as they were, and why

    def check_dict(self) -> dict | None:
        """The verdict for --json and --stats-json (None: no intent was checked)."""
        if self.verdict is None:
            return None
        return {**self.verdict.to_dict(), "tries": self.tries, "answer": self.answer,
                "intent": self.intent.describe() if self.intent else None}  # fmt: skip

    def total(self) -> Stats:
        """The runs' figures added up (one run: its own)."""
        return Stats.total(self.stats)


Answering = Generator[Event | Started, None, Outcome]
