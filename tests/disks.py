"""A disk filled to its last byte, for the tests of a full disk (the tmpfs itself: the
`small_disk` fixture in conftest.py)."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest


def fill(where: Path) -> None:
    """Fill the disk `where` is on to its last byte (a file "filler" there)."""
    with open(where / "filler", "wb", buffering=0) as f, pytest.raises(OSError) as full:
        while True:
            f.write(b"\0" * 4096)
    assert full.value.errno == errno.ENOSPC
