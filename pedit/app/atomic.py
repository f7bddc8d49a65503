"""Atomic, checked writes: a file replaced in one step, only if it is still what was read
(its Stamp), keeping its owner, mode and attributes; Ctrl-C, SIGTERM and SIGHUP wait for
the step; the files this process replaced, recorded (fileio.write uses it; the hook too)."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import re
import secrets
import signal
import stat
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..errors import ConflictError, PeditError, UsageError


@dataclass(frozen=True)
class Stamp:
    """What was read: the file a path led to, and its bytes (by hash)."""

    target: Path  # the path with symlinks resolved
    dev: int
    ino: int
    size: int
    mtime_ns: int
    sha256: str

    @classmethod
    def of(cls, target: Path, st: os.stat_result, data: bytes) -> Stamp:
        return cls(target, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, hashlib.sha256(data).hexdigest())

    def check(self, path: Path) -> None:
        """ConflictError unless `path` still leads to this file with these bytes."""
        target = path.resolve()
        if target != self.target:
            raise ConflictError(f"{path}: now points to {target} (it was {self.target}); nothing written")
        try:
            st = target.stat()
            same = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns) == (
                self.dev, self.ino, self.size, self.mtime_ns,
            )  # fmt: skip
            same = same and hashlib.sha256(target.read_bytes()).hexdigest() == self.sha256
        except OSError:
            same = False
        if not same:
            raise ConflictError(f"{path}: changed on disk since pedit read it; nothing written")


_WRITTEN: list[Path] = []  # every file this process replaced, in order
# the signals that end a process and that a write holds (SIGHUP where the platform has it)
HELD = tuple(s for s in (signal.SIGINT, signal.SIGTERM, getattr(signal, "SIGHUP", None)) if s is not None)


def written() -> tuple[Path, ...]:
    """The files this process has replaced (as their paths were given), oldest first."""
    return tuple(_WRITTEN)


@contextlib.contextmanager
def uninterrupted() -> Iterator[None]:
    """Ctrl-C, SIGTERM and SIGHUP (a closed terminal) wait until the block is done, then
    take effect as they would have (their handlers run on the way out; a signal left at its
    default still ends the process, after the block). Python runs signal handlers in the
    main thread only, so elsewhere there is nothing to hold; a handler set outside Python is
    left alone."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: list[int] = []
    signals = [s for s in HELD if signal.getsignal(s) is not None]
    before = {s: signal.signal(s, lambda number, _frame: held.append(number)) for s in signals}
    try:
        yield
    finally:
        for s, handler in before.items():
            signal.signal(s, handler)
        for number in dict.fromkeys(held):
            signal.raise_signal(number)  # the handler runs now (KeyboardInterrupt, Terminated)


def write_bytes(path: Path, data: bytes, expect: Stamp | None = None) -> Stamp:
    """Atomically replace the file at `path` (through a symlink) with `data`, keeping its
    owner, group, mode and extended attributes: a temporary file beside it, fsync, then in
    one uninterrupted step `expect` checked, rename, the directory fsynced and the write
    recorded; the temporary file removed on any failure. The new Stamp."""
    source_path = path
    target = path.resolve()  # through a symlink to the file it points at
    _remove_stale(target)
    try:
        fd, tmp_name = tempfile.mkstemp(
            dir=target.parent, prefix=f".{target.name}.{os.getpid()}.", suffix=".pedit"
        )
    except OSError as exc:
        raise _write_error(source_path, target, exc) from exc
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            _same_metadata(f.fileno(), target, source_path)
            os.fsync(f.fileno())
            st = os.fstat(f.fileno())
        with uninterrupted():
            if expect is not None:
                expect.check(source_path)
            os.replace(tmp, target)
            _WRITTEN.append(source_path)
            _fsync_dir(target.parent)
    except BaseException as exc:
        tmp.unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise _write_error(source_path, target, exc) from exc
        raise
    return Stamp.of(target, st, data)


def create_bytes(path: Path, data: bytes) -> None:
    """Write `data` to a new file at `path`, never over an existing one: a temporary file
    beside it, fsync, then a hard link under the new name (which fails if the name is
    taken, whatever appeared there meanwhile) and the temporary name removed. The mode is
    a new file's (0666 less the umask, applied by the kernel); nothing is left on any
    failure."""
    tmp = path.parent / f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.pedit"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except OSError as exc:
        raise UsageError(f"{path}: cannot write ({exc.strerror})") from exc
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        with uninterrupted():
            os.link(tmp, path)
            _WRITTEN.append(path)
            tmp.unlink()
            _fsync_dir(path.parent)
    except BaseException as exc:
        tmp.unlink(missing_ok=True)
        if isinstance(exc, FileExistsError):
            raise UsageError(f"{path}: already exists; not written over") from exc
        if isinstance(exc, OSError):
            raise UsageError(f"{path}: cannot write ({exc.strerror})") from exc
        raise


def _write_error(path: Path, target: Path, exc: OSError) -> PeditError:
    """A write that failed: the file (or its folder) deleted while pedit ran is a conflict
    (exit 4), anything else a write error (exit 2); either way nothing was written."""
    if isinstance(exc, FileNotFoundError) and not target.exists():
        return ConflictError(f"{path}: deleted while pedit ran; nothing written")
    return UsageError(f"{path}: cannot write ({exc.strerror}); the file is unchanged")


STALE_SECONDS = 3600  # a temporary file without a process id (an older pedit's) this old is left over
_TEMP = re.compile(r"(?:(?P<pid>\d+)\.)?[a-z0-9_]{8}")  # between .NAME. and .pedit: mkstemp's 8 characters


def _remove_stale(target: Path) -> None:
    """Remove the temporary files of `target` that a killed pedit left: `.NAME.PID.*.pedit`
    whose process is gone (or, with no process id in the name, older than STALE_SECONDS).
    A live pedit's are kept; nothing here stops a write."""
    prefix = f".{target.name}."
    try:
        names = [n for n in os.listdir(target.parent) if n.startswith(prefix) and n.endswith(".pedit")]
    except OSError:
        return
    for name in names:
        mine = _TEMP.fullmatch(name[len(prefix) : -len(".pedit")])  # not another file's (NAME.x)
        if mine is None:
            continue
        path = target.parent / name
        try:
            if mine["pid"]:
                stale = not _alive(int(mine["pid"]))
            else:
                stale = time.time() - path.lstat().st_mtime > STALE_SECONDS
            if stale and path.is_file() and not path.is_symlink():
                path.unlink()
        except OSError:
            pass


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # another user's: alive
    return True


def _same_metadata(fd: int, target: Path, path: Path) -> None:
    """Owner and group, then mode (chown clears set-id bits, so it comes first), then
    extended attributes (ACLs are among them on Linux) of `target` onto the open file."""
    st = target.stat()
    mine = os.fstat(fd)
    if (mine.st_uid, mine.st_gid) != (st.st_uid, st.st_gid):
        try:
            os.fchown(fd, st.st_uid, st.st_gid)
        except PermissionError:
            raise UsageError(
                f"{path}: owned by {st.st_uid}:{st.st_gid}; pedit cannot keep its owner, so it writes nothing"
            ) from None
    os.fchmod(fd, stat.S_IMODE(st.st_mode))
    try:
        names = os.listxattr(target)
    except OSError as exc:
        if exc.errno in (errno.ENOTSUP, errno.EOPNOTSUPP):
            return
        raise
    for name in names:
        try:
            os.setxattr(fd, name, os.getxattr(target, name))
        except OSError as exc:
            if exc.errno not in (errno.ENOTSUP, errno.EOPNOTSUPP):
                raise UsageError(
                    f"{path}: cannot keep its extended attribute {name} ({exc.strerror}); not written"
                ) from exc


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
