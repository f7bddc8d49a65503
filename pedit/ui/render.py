"""Terminal output with rich: progress for model work, the stats line, the diff."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Generator, Iterator
from contextlib import contextmanager
from typing import TypeVar

from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from ..events import Stats
from ..models.progress import Advanced, Began, Step
from .styles import speedup_text

R = TypeVar("R")


class RichReporter:
    """A task of model work (models/progress.py) on a rich console (stderr): a bar, or a
    spinner when the work has no measurable progress; a plain "done" line when the
    console is not a tty."""

    def __init__(self, console: Console):
        self.console = console

    @contextmanager
    def task(
        self, description: str, total: int | None = None, unit: str = "bytes"
    ) -> Iterator[Callable[[int], None]]:
        if not self.console.is_terminal:  # a log, not a screen: one line when done
            yield lambda done: None
            self.console.print(f"pedit: {description}: done", highlight=False, markup=False)
            return
        columns = [SpinnerColumn(), TextColumn("{task.description}", markup=False)]
        if total is not None:
            columns += [BarColumn(), DownloadColumn() if unit == "bytes" else MofNCompleteColumn()]
            columns += [TimeRemainingColumn()]
        columns += [TimeElapsedColumn()]
        with Progress(*columns, console=self.console, transient=True) as progress:
            task = progress.add_task(description, total=total)
            yield lambda done: progress.update(task, completed=done)


def shown(work: Generator[Step, None, R], console: Console) -> R:
    """`work` (model work, models/progress.py) run to its end, each of its tasks shown on
    `console` as RichReporter.task shows one; its value."""
    reporter = RichReporter(console)
    opened: list = []  # (the task's context manager, its update)
    try:
        while True:
            try:
                step = next(work)
            except StopIteration as done:
                return done.value
            if isinstance(step, Began):
                shows = reporter.task(step.description, step.total, step.unit)
                opened.append((shows, shows.__enter__()))
            elif isinstance(step, Advanced):
                opened[-1][1](step.done)
            else:
                shows, _ = opened.pop()
                failed = None if step.ok else _Failed()
                shows.__exit__(type(failed) if failed else None, failed, None)  # failed: no "done" line
    except BaseException as exc:
        while opened:
            shows, _ = opened.pop()
            shows.__exit__(type(exc), exc, exc.__traceback__)
        raise
    finally:
        work.close()


class _Failed(Exception):
    """A task that failed: its display closed without its "done" line."""


def stats_line(stats: Stats) -> str:
    speed = f"{stats.decode_tokens_per_second:.1f} tok/s"
    if stats.speedup is not None:
        overall = speedup_text(stats.overall_speedup)
        speed += f", {speedup_text(stats.speedup)} plain; {overall} with the prompt"
    parts = [f"{stats.completion_tokens} tokens in {stats.decode_seconds:.1f}s ({speed})"]
    if stats.accepted_prediction_tokens or stats.rejected_prediction_tokens:
        by = ", ".join(f"{k} {v}" for k, v in sorted(stats.accepted_by_drafter.items()))
        parts.append(
            f"drafts: {stats.accepted_prediction_tokens} accepted{f' ({by})' if by else ''}, "
            f"{stats.rejected_prediction_tokens} rejected"
        )
    if stats.coalesced_tokens:
        parts.append(f"{stats.coalesced_tokens} forced by the grammar without a pass")
    if stats.forward_passes or not stats.completion_tokens:  # a server may not say (remote: 0)
        parts.append(f"{stats.forward_passes} forward passes")
    cached = f" ({stats.cached_tokens} cached)" if stats.cached_tokens else ""
    parts += [
        f"prompt {stats.prompt_tokens} tokens{cached} in {stats.prefill_seconds:.1f}s "
        f"({stats.prefill_tokens_per_second:.0f} tok/s)",
    ]
    if stats.tool_seconds:  # the tools' work before the run (scoring swaps, an intent), apart from the prompt
        passes = f"{stats.tool_passes} pass{'es' if stats.tool_passes != 1 else ''}"
        parts.append(f"tools {stats.tool_seconds:.1f}s ({passes} of the model)")
    parts.append(f"stop: {stats.stop_reason}")
    return "; ".join(parts)


def unified_diff(old: str, new: str, name: str) -> list[str]:
    return list(
        difflib.unified_diff(
            old.splitlines(keepends=True), new.splitlines(keepends=True), f"a/{name}", f"b/{name}"
        )
    )


def print_diff(lines: list[str], file=None) -> None:
    """The diff on stdout (or `file`), coloured on a terminal, never re-wrapped."""
    console = Console(file=file, soft_wrap=True)
    styles = {"+++": "bold", "---": "bold", "@@": "cyan", "+": "green", "-": "red"}
    for line in lines:
        style = next((s for p, s in styles.items() if line.startswith(p)), "")
        text = line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
        console.print(Text(text, style=style), end="")
