"""A remote backend's files, several at once (`--jobs`): the model runs overlap on the
server; the results are reported and written one by one, in the files' order, each
against the file as it was read before its run (a file changed meanwhile is not written).
Each file succeeds or fails alone: a run that fails (the server's error for that request,
a refused answer) is that file's line and exit code (FileRun.collect), and the other files
are still written; only Ctrl-C, SIGTERM or a bug stops the runs in flight (an Event they
check between events: Cancelled)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Protocol

from ..app import fileio
from ..app.outcome import Outcome
from ..errors import Cancelled, ExitCode
from ..events import Event, Finished, drain
from ..ui.render import stats_line
from ..ui.runs import Show

if TYPE_CHECKING:
    from ..app.jobs import Job


@dataclass(frozen=True, kw_only=True)
class Ran:
    """A file's run: the file as read before it, its outcome, and its runs' stats lines
    (printed when the file's turn comes)."""

    source: fileio.Source
    outcome: Outcome
    lines: tuple[str, ...] = ()


class FileRun(Protocol):
    """What runs and reports a command's files (rewrite.Run)."""

    def outcome(self, job: Job, name: str, show: Show) -> Ran:
        """The file read and run through the job, each run's events to `show`."""
        ...

    def collect(self, job: Job, name: str, ran: Callable[[], Ran]) -> int:
        """The file's result reported and written; `ran()` gives its run or raises."""
        ...


def run_many(files: FileRun, job: Job, names: list[str], jobs: int) -> int:
    """The files' runs, `jobs` at once; each collected in order; the highest exit code."""
    stop = threading.Event()  # set: the runs in flight end at their next event

    def check(_: Event) -> None:
        if stop.is_set():
            raise Cancelled

    def run(name: str) -> Ran:  # stopped: ends in Cancelled, a future nothing reads
        lines: list[str] = []

        def show(events: Iterator[Event], label: str) -> Finished:
            finished = drain(events, check)
            lines.append(f"pedit: {label}: {stats_line(finished.stats)}")
            return finished

        return replace(files.outcome(job, name, show), lines=tuple(lines))

    code = int(ExitCode.OK)
    pool = ThreadPoolExecutor(jobs)
    try:
        futures = [pool.submit(run, name) for name in names]
        for name, future in zip(names, futures, strict=True):
            code = max(code, files.collect(job, name, future.result))
    finally:  # an error or Ctrl-C: nothing more is sent, and what is in flight stops now
        stop.set()
        pool.shutdown(wait=True, cancel_futures=True)
    return code
