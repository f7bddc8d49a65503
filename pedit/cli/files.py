"""A run's files: read faithfully (app/fileio.py), standard input once, each locked while a
mode that writes works on it, and checked before any model loads (a typo in a file name,
a read-only file, another pedit on it, a rename whose names are not there cost no load)."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..app import fileio


@dataclass(kw_only=True)
class Files:
    force: bool  # --force: a hard-linked file may be read (and written)
    writes: bool  # the mode writes (ask, yes): files must be writable, and are locked
    stdin_filename: str | None = None  # FILE "-": the name shown to the model and the guard
    _stdin: fileio.Source | None = field(default=None, init=False, repr=False)

    def read(self, name: str) -> fileio.Source:
        """The file as it is now ("-": standard input, read once and kept)."""
        if name != "-":
            return fileio.read(Path(name), force=self.force)
        if self._stdin is None:
            self._stdin = fileio.read_stream(sys.stdin.buffer, self.stdin_filename or "stdin")
        return self._stdin

    @contextlib.contextmanager
    def lock(self, name: str) -> Iterator[None]:
        """The file locked against another pedit while it is worked on, if the mode writes."""
        with fileio.locked(Path(name)) if self.writes else contextlib.nullcontext():
            yield

    def check(self, name: str, intent: str | None = None) -> fileio.Source:
        """The file, read, if it is worth a model: readable text, writable and not another
        pedit's if the mode writes, and (`intent`: a refactor's instruction) one whose rename
        names are there; else the PeditError that says why."""
        source = self.read(name)
        if self.writes:
            fileio.check_writable(Path(name), force=self.force)
            with fileio.locked(Path(name)):
                pass  # another pedit on it: said now, not after loading the model
        if intent is not None and source.text.strip():
            _names(intent, source.text, source.name)
        return source


def _names(instruction: str, text: str, filename: str) -> None:
    """UsageError now, before a model loads, for a rename of a name the file lacks: the
    file's names only (the rename itself is the refactor's, in whoever runs the model)."""
    from ..tools import intent, rename

    found = intent.parse(instruction)
    if found.kind == intent.RENAME and rename.supported(filename):
        # a file that does not tokenize (RenameError): the model alone, checked by the guard
        with contextlib.suppress(rename.RenameError):
            rename.present(text, filename, found.renames)
