"""A fix goes back into the index (restage) and the working tree, never over an edit made
while the model ran.

The working-tree file is snapshotted when the hook reads it (before any generation): its
bytes, device, inode, size, mtime_ns and sha256. Just before writing, it is snapshotted
again, and the atomic write checks it once more before its rename (atomic.Stamp); if
anything differs (someone saved the file meanwhile), nothing is written to it and the line
says so. A staged file that is deleted (or a directory, or a symlink) in the working tree
gets no working-tree write at all: with restage the fix is staged, so it is in the commit
only; without restage there is nowhere to put it for review, and the commit stops.

A fix is staged only over the blob it was made from (git.set_staged): when the index entry
changed while the model ran (a `git add`), nothing is staged or written and the commit
stops, so that the next run fixes what is staged now.
"""

from __future__ import annotations

import hashlib
import os
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ..app import atomic
from ..errors import ConflictError
from . import git


@dataclass(frozen=True, kw_only=True)
class Snapshot:
    state: str  # "file", or what is there instead: "deleted", "a directory", "a symlink", ...
    data: bytes | None = field(default=None, compare=False)  # a regular file's bytes
    size: int = -1
    mtime_ns: int = 0
    sha256: str = ""
    dev: int = 0
    ino: int = 0

    def stamp(self, path: Path) -> atomic.Stamp:
        """What atomic.write_bytes must still find at `path` (a regular file's snapshot)."""
        return atomic.Stamp(
            target=path.resolve(), dev=self.dev, ino=self.ino, size=self.size, mtime_ns=self.mtime_ns,
            sha256=self.sha256,
        )  # fmt: skip


def snapshot(path: Path) -> Snapshot:
    """The file as it is now (lstat: a symlink is not followed)."""
    try:
        st = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return Snapshot(state="deleted")
    if not stat.S_ISREG(st.st_mode):
        kinds = ((stat.S_ISLNK, "a symlink"), (stat.S_ISDIR, "a directory"))
        return Snapshot(state=next((name for test, name in kinds if test(st.st_mode)), "not a regular file"))
    with open(path, "rb") as f:
        st = os.fstat(f.fileno())  # size and mtime of what is read: a write during the read shows later
        data = f.read()
    digest = hashlib.sha256(data).hexdigest()
    return Snapshot(
        state="file", data=data, size=st.st_size, mtime_ns=st.st_mtime_ns, sha256=digest, dev=st.st_dev,
        ino=st.st_ino,
    )  # fmt: skip


def unchanged(path: Path, before: Snapshot) -> bool:
    return snapshot(path) == before


def apply_native(repo: Path, path: str, staged: bytes, blob: str, new: bytes, snap: Snapshot,
                 restage: bool, what: str, say) -> None:  # fmt: skip
    """Stage the fix (restage) over the index entry `blob` (the id of `staged`) and merge it
    into the working tree as `snap` saw it; `what` describes the fix, say(line,
    failed=False) reports the file's one line."""
    try:
        _apply_native(repo, path, staged, blob, new, snap, restage, what, say)
    except ConflictError:  # from git.set_staged, which always comes before a working-tree write
        say(f"not fixed {path}: its staged content changed while pedit ran (a `git add`?);"
            " nothing staged or written, commit again", True)  # fmt: skip


def _apply_native(repo: Path, path: str, staged: bytes, blob: str, new: bytes, snap: Snapshot,
                  restage: bool, what: str, say) -> None:  # fmt: skip
    worktree = repo / path
    if snap.data is None:
        where = f"{path} is {snap.state} in the working tree"
        if restage:
            git.set_staged(repo, path, new, blob)
            say(f"fixed and staged {path}: {what}; {where} (an unstaged change, left as it is),"
                " so the fix is in the commit only")  # fmt: skip
        else:
            say(f"would fix {path}: {what}, but {where}; nothing written (`git restore {path}`"
                f" or `git rm --cached {path}`, then commit again)", True)  # fmt: skip
        return
    if snap.data == staged:
        merged = new
    else:  # partially staged: the fix joins the unstaged changes
        with tempfile.TemporaryDirectory() as tmp:
            merged = git.merge(snap.data, staged, new, Path(tmp))
        if merged is None:
            if restage:
                git.set_staged(repo, path, new, blob)
                say(f"fixed {path}: {what}; staged only: the fix overlaps your unstaged changes,"
                    " which are left as they were")  # fmt: skip
            else:
                say(f"not fixed {path}: the fix overlaps unstaged changes; stash them (git stash -k)"
                    " and commit again", True)  # fmt: skip
            return
    if restage:
        git.set_staged(repo, path, new, blob)  # first: if the index changed, nothing is written
    if not _write(worktree, merged, snap):  # saved while the model ran: that edit wins
        if restage:
            say(f"fixed and staged {path}: {what}; it changed in the working tree while pedit ran,"
                " so the fix is not written there (`git diff` shows it undone)")  # fmt: skip
        else:
            say(f"not fixed {path}: it changed in the working tree while pedit ran; nothing written,"
                " commit again", True)  # fmt: skip
        return
    if restage:
        say(f"fixed {path}: {what} (staged)")
    else:
        say(f"fixed {path}: {what}; review and `git add` it, then commit again", True)


def _write(worktree: Path, data: bytes, snap: Snapshot) -> bool:
    """Replace the file with `data` if it is still as `snap` saw it (checked now, and by
    the atomic write just before its rename); False, nothing written, if not."""
    if not unchanged(worktree, snap):
        return False
    try:
        atomic.write_bytes(worktree, data, expect=snap.stamp(worktree))
    except ConflictError:
        return False
    return True


def apply_file(worktree: Path, path: str, new: bytes, snap: Snapshot, what: str, say) -> None:
    """pre-commit: the file on disk is the staged content; the fix replaces it unless it
    changed while the model ran."""
    if not _write(worktree, new, snap):
        say(f"not fixed {path}: it changed while pedit ran; nothing written, commit again", True)
        return
    say(f"fixed {path}: {what}", True)
