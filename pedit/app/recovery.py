"""Where an interactive session's accepted, unsaved text goes when the session ends on a
bug or a signal instead of the user's choice: a recovery file in the user's state folder
($XDG_STATE_HOME/pedit/recovery on Linux, platformdirs), one per file, named after the
file and a hash of its full path, in the file's own encoding and conventions. The next
session on the file says that it is there; pedit never deletes it (the user does)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import platformdirs

from ..errors import UsageError
from .fileio import Source


def folder() -> Path:
    return platformdirs.user_state_path("pedit") / "recovery"


def path_for(path: Path) -> Path:
    """The recovery file of the file at `path` (the same for every way of naming it)."""
    key = hashlib.sha256(str(path.resolve()).encode("utf-8", "surrogateescape")).hexdigest()[:12]
    return folder() / f"{path.name}.{key}.pedit-recovered"


def keep(source: Source, text: str) -> Path:
    """Write `text` as the file would hold it to its recovery file (replacing an older
    one, atomically: a temporary file and a rename in the recovery folder); its path."""
    assert source.path is not None
    where = path_for(source.path)
    where.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        data = source.encode(text)
    except UsageError:  # a character the file's encoding cannot hold: UTF-8 keeps it
        data = text.encode("utf-8")
    tmp = where.with_name(f".{where.name}.{os.getpid()}")
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, where)
    finally:
        tmp.unlink(missing_ok=True)
    return where


def found(path: Path) -> Path | None:
    """The recovery file an earlier session left for the file at `path`, if any."""
    where = path_for(path)
    return where if where.is_file() else None
