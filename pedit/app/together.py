"""Several files written together, or none: a project's rename.

    check    every file, before the first is written: still what was read (its Stamp),
             writable (fileio.check_writable), encodable in its encoding; a module's new
             path free and its folder writable
    journal  a folder of the user's state ($XDG_STATE_HOME/pedit/journal/PID.RANDOM, 0700):
             each file's path, the hashes of its old and new bytes, both bytes, and a lock
             held while this process writes; fsynced before the first file is touched
    write    each file replaced atomically (atomic.write_bytes, its lost-update check at its
             rename), a moved module created at its new path and its old one removed
             last; Ctrl-C, SIGTERM and SIGHUP wait for the whole step (uninterrupted)
    failure  a file refused partway (changed on disk in the last instant): every file
             already written is put back (its old bytes), so none is written
    done     the journal removed

A process killed partway (SIGKILL, a power cut) leaves each file old or new (every write
is atomic) and its journal. The next pedit command (`recover`, at its start) finishes the
write: each file still old is written new, unless it changed since (then it is left as
it is, and said); the journal is then removed. A journal whose lock is held belongs to a
pedit still writing and is left alone.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import secrets
import shutil
import stat
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import platformdirs

from ..errors import ConflictError, PeditError, UsageError
from . import fileio
from .atomic import Stamp, create_bytes, uninterrupted, write_bytes


@dataclass(frozen=True)
class Change:
    source: fileio.Source  # the file as read (its path and Stamp)
    text: str  # its new text ("\n" newlines; written in the file's conventions)
    to: Path | None = None  # a module renamed: its new path (the old one is removed)


def folder() -> Path:
    return platformdirs.user_state_path("pedit") / "journal"


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def check(changes: list[Change], *, force: bool = False) -> list[tuple[bytes, bytes]]:
    """Every file may be written now (see the module); each one's old and new bytes."""
    out = []
    for c in changes:
        path = c.source.path
        assert path is not None and c.source.stamp is not None
        fileio.check_writable(path, force=force)
        c.source.stamp.check(path)
        if c.to is not None:
            if c.to.exists() or c.to.is_symlink():
                raise UsageError(f"{c.to}: already exists; the module is not renamed over it")
            if not os.access(c.to.parent, os.W_OK | os.X_OK):
                raise UsageError(f"{c.to}: its folder is read-only")
        try:
            old = path.resolve().read_bytes()
        except OSError as exc:
            raise UsageError(f"{path}: cannot read ({exc.strerror}); nothing written") from exc
        if _sha(old) != c.source.stamp.sha256:
            raise ConflictError(f"{path}: changed on disk since pedit read it; nothing written")
        out.append((old, c.source.encode(c.text)))
    return out


def write(changes: list[Change], *, force: bool = False) -> None:
    """Write every change, or none (see the module)."""
    datas = check(changes, force=force)
    with uninterrupted(), _journal(changes, datas):
        done: list[tuple[Change, bytes, Stamp | None]] = []  # each file written: its old bytes, new Stamp
        try:
            for c, (old, data) in zip(changes, datas, strict=True):
                if c.to is None:
                    fileio.check_writable(c.source.path, force=force)
                    done.append((c, old, write_bytes(c.source.path, data, c.source.stamp)))
                else:
                    c.source.stamp.check(c.source.path)
                    create_bytes(c.to, data)
                    done.append((c, old, None))
            for c in changes:
                if c.to is not None:
                    c.source.path.unlink()
        except BaseException:
            _undo(done)
            raise


def _undo(done: list[tuple[Change, bytes, Stamp | None]]) -> None:
    """Put back every file already written (a moved module: its new path removed)."""
    for c, old, stamp in reversed(done):
        with contextlib.suppress(OSError, PeditError):
            if c.to is None:
                write_bytes(c.source.path, old, stamp)
                continue
            if not c.source.path.exists():  # removed already: back first, then the new one goes
                create_bytes(c.source.path, old)
            c.to.unlink()


@contextlib.contextmanager
def _journal(changes: list[Change], datas: list[tuple[bytes, bytes]]) -> Iterator[Path]:
    """The journal of this write (see the module), locked while the block runs, then removed."""
    top = folder()
    top.mkdir(parents=True, exist_ok=True, mode=0o700)
    st = top.lstat()
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o022:
        raise UsageError(
            f"{top}: not a folder of this user's alone, so pedit keeps no journal there; nothing written"
        )
    here = top / f"{os.getpid()}.{secrets.token_hex(4)}"
    here.mkdir(mode=0o700)
    lock = os.open(here / "lock", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        entries = []
        for i, (c, (old, data)) in enumerate(zip(changes, datas, strict=True)):
            _put(here / f"{i}.old", old)
            _put(here / f"{i}.new", data)
            entries.append({
                "path": str(c.source.path.absolute()), "to": str(c.to.absolute()) if c.to else None,
                "old": _sha(old), "new": _sha(data),
            })  # fmt: skip
        record = {"pid": os.getpid(), "started": time.time(), "entries": entries}
        _put(here / "journal.json", json.dumps(record, indent=1).encode())
        _fsync(here)
        yield here
    finally:
        shutil.rmtree(here, ignore_errors=True)
        os.close(lock)
        _fsync(top)


def _put(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def _fsync(directory: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def recover(say: Callable[[str], None]) -> None:
    """Finish every write a killed pedit left (see the module), one line for each."""
    top = folder()
    try:
        st = top.lstat()
    except OSError:
        return
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o022:
        return  # not the user's own folder: nothing in it is trusted
    for here in sorted(top.iterdir()):
        with contextlib.suppress(OSError):
            _recover_one(here, say)


def _recover_one(here: Path, say: Callable[[str], None]) -> None:
    try:
        lock = os.open(here / "lock", os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        shutil.rmtree(here, ignore_errors=True)  # killed before its journal began
        return
    try:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return  # a pedit writing now
        try:
            record = json.loads((here / "journal.json").read_bytes())
        except (FileNotFoundError, ValueError):
            shutil.rmtree(here, ignore_errors=True)  # killed before the first file was touched
            return
        wrote, left = [], []
        for i, e in enumerate(record["entries"]):
            what = _finish(Path(e["path"]), Path(e["to"]) if e["to"] else None, e, here / f"{i}.new")
            if what == "written":
                wrote.append(e["to"] or e["path"])
            elif what == "changed":
                left.append(e["to"] or e["path"])
        for e in record["entries"]:  # a moved module's old path goes last
            if e["to"] and Path(e["to"]).is_file() and _hash(Path(e["path"])) == e["old"]:
                Path(e["path"]).unlink()
        said = f"pedit: a rename stopped partway (pid {record['pid']}) is finished"
        said += f": wrote {', '.join(wrote)}" if wrote else ": every file was written already"
        if left:
            said += f"; changed since, so left as they are: {', '.join(left)}"
        say(said)
        shutil.rmtree(here, ignore_errors=True)
    finally:
        os.close(lock)


def _hash(path: Path) -> str | None:
    try:
        return _sha(path.read_bytes())
    except OSError:
        return None


def _finish(path: Path, to: Path | None, e: dict, blob: Path) -> str:
    """One file of a journal: "done" (new already), "written" (old, now new), "changed"."""
    if to is not None:
        if _hash(to) == e["new"]:
            return "done"
        if to.exists() or _hash(path) != e["old"]:
            return "changed"
        create_bytes(to, blob.read_bytes())
        return "written"
    now = _hash(path)
    if now == e["new"]:
        return "done"
    if now != e["old"]:
        return "changed"
    source = fileio.read(path, force=True)
    write_bytes(path, blob.read_bytes(), source.stamp)
    return "written"
