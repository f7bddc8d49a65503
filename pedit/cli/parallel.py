"""A remote backend's files, several at once (`--jobs`): the model runs overlap on the
server; the results are reported and written one by one, in the files' order, each
against the file as it was read before its run (a file changed meanwhile is not written).
Each file succeeds or fails alone: a run that fails (the server's error for that request,
a refused answer) is that file's line and exit code (Shell.collect), and the other files
are still written; only Ctrl-C, SIGTERM or a bug stops the runs in flight."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

from ..app.jobs import Job
from ..errors import ExitCode
from ..events import drain
from ..ui.render import stats_line


def run_many(shell, job: Job, files: list[str], jobs: int) -> int:
    """shell: rewrite.Shell (its outcome() runs a file, its collect() reports and writes)."""
    stop = threading.Event()  # set: the runs in flight end at their next piece of text

    def check(_) -> None:
        if stop.is_set():
            raise KeyboardInterrupt

    def run(name: str):
        lines: list[str] = []  # each run's stats line, printed when the file's turn comes

        def render(events, label: str):
            finished = drain(events, check)
            lines.append(f"pedit: {label}: {stats_line(finished.stats)}")
            return finished

        source, outcome = shell.outcome(job, name, render)
        return source, outcome, lines

    code = int(ExitCode.OK)
    pool = ThreadPoolExecutor(jobs)
    try:
        futures = [pool.submit(run, name) for name in files]
        for name, future in zip(files, futures, strict=True):
            code = max(code, shell.collect(job, name, future.result))
    finally:  # an error or Ctrl-C: nothing more is sent, and what is in flight stops now
        stop.set()
        pool.shutdown(wait=True, cancel_futures=True)
    return code
