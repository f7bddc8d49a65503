"""Small files in the user cache (costs, assembled-model records, hook results), written
atomically; a cache that cannot be written costs a warning, never the run."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path


def write_cache_file(path: Path, text: str) -> None:
    """Write a cache entry atomically (a temporary file beside it, renamed over it); the
    temporary file is removed on any failure, which is raised (OSError: the caller goes
    on without the cache)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def warn_stderr(line: str) -> None:
    print(f"pedit: warning: {line}", file=sys.stderr)


def write_cache_bytes(path: Path, data: bytes) -> None:
    """write_cache_file for bytes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
