"""A rewrite's way out, per output mode (options.WriteBack): the guard decides whether it is
safe (checks/guard.py), then JSON keeps it in the file's record, STDOUT prints it, DIFF shows
it, CHECK says it would change (exit 1), ASK shows it and asks, YES writes it. A refused
rewrite is written or printed only with --force, and an empty answer never."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass

from ..app import fileio
from ..checks import guard
from ..errors import ExitCode, RefusedError
from ..ui.render import print_diff, unified_diff
from . import ask
from .options import WriteBack

Say = Callable[[str, str], None]  # say(file name, message): one line on stderr


@dataclass(frozen=True, kw_only=True)
class Decision:
    """A rewrite of a file, and what the guard makes of it."""

    source: fileio.Source
    answer: str  # the new text, "\n" newlines
    old: str  # the file's text and the answer, as they would be written (Source.render)
    new: str
    diff: tuple[str, ...]  # unified diff lines, old -> new
    refused: str | None  # why the guard would not write it (None: safe, or unchanged)
    forceable: bool  # --force may write it anyway (not an empty answer)
    force: bool  # --force given, and it may

    @property
    def changed(self) -> bool:
        return self.new != self.old

    @property
    def blocked(self) -> bool:
        """Refused, and --force does not (or may not) override it."""
        return bool(self.refused) and not self.force


def decide(judged: bool, source: fileio.Source, answer: str, force: bool) -> Decision:
    """The guard's decision on `answer` for `source`; `judged`: the template's (Template.judged)."""
    old, new = source.render(source.text), source.render(answer)
    refusal = guard.judge(source.name, source.text, answer, judged=judged) if new != old else None
    forceable = refusal is None or refusal.forceable  # an empty answer: no flag writes it
    return Decision(
        source=source, answer=answer, old=old, new=new, diff=tuple(unified_diff(old, new, source.name)),
        refused=refusal.reason if refusal else None, forceable=forceable, force=force and forceable,
    )  # fmt: skip


def write_back(mode: WriteBack, d: Decision, record: dict, say: Say) -> int:
    """Do what `mode` does with the rewrite; `record` (the file's) hears what was done.
    Raises RefusedError for a refused rewrite the mode would print or write."""
    name = d.source.name
    if mode == WriteBack.JSON:
        record["text"], record["diff"] = d.new, "".join(d.diff)
    elif mode == WriteBack.STDOUT:
        if d.blocked:
            raise unsafe(d)
        to_stdout(d.source, d.answer)
    elif not d.changed:
        say(name, "no changes")
    elif mode == WriteBack.DIFF:
        print_diff(list(d.diff))
        if d.refused:
            say(name, f"{d.refused}: pedit would not write it{' without --force' if d.forceable else ''}")
    elif mode == WriteBack.CHECK:
        if d.refused:
            raise RefusedError(f"{name}: would change, but {d.refused}; it would not be written")
        say(name, "would change")
        return ExitCode.CHANGED
    elif d.blocked:
        if mode == WriteBack.ASK:
            print_diff(list(d.diff))
        raise unsafe(d)
    elif mode == WriteBack.YES or _confirm(d):
        fileio.write(d.source, d.answer, force=d.force)
        record["written"] = True
        say(name, "written" + (f" (forced: {d.refused})" if d.refused else ""))
    return ExitCode.OK


def to_stdout(source: fileio.Source, text: str) -> None:
    """`text` as the file would hold it (its encoding, newlines), to standard output."""
    sys.stdout.buffer.write(source.encode(text))
    sys.stdout.flush()


def unsafe(d: Decision) -> RefusedError:
    hint = " (--force to write it anyway)" if d.forceable else ""
    return RefusedError(f"{d.source.name}: {d.refused}; nothing written{hint}", force=d.forceable)


def _confirm(d: Decision) -> bool:
    print_diff(list(d.diff))
    return ask.confirm(f"Apply to {d.source.path}?")
