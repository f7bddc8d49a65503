"""A folder of answers by key (the answer cache, the hook's results): text pedit may write
into a user's file, so it is trusted only when no one else could have put it there.

- **The folder is the user's.** It is opened once, without following a link, and used
  only when the handle's folder belongs to this user and no one else may write it (not
  group- or world-writable). Otherwise the store is off for the process, said in one
  line: a shared XDG_CACHE_HOME, or a CI cache restored from another branch, chooses no
  text. Everything after is reached through that handle.
- **An entry is read whole or not at all**: a regular file (no link followed), at most
  ENTRY_MAX bytes; anything else is a miss.
- **Bounded.** At most `limit` bytes of entries; past it, the least recently used go
  (a hit touches its entry's time). The folder is measured once per process, at its first
  write, and kept count of after.

Entries live in 256 subfolders by the key's first two hex digits, written atomically (a
temporary file renamed over the entry).
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .cachefile import warn_stderr

ENTRY_MAX = 16 * 1024 * 1024  # an entry longer than this is not one pedit wrote for a file it rewrites
DEFAULT_LIMIT = 256 * 1024 * 1024  # the folder's bytes, by default (config answer_cache_mb)
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class Untrusted(Exception):
    """The folder is another user's, or others may write it."""


def opened(directory: Path) -> int:
    """The folder's handle (made 0700 when absent); Untrusted when it is not this user's
    alone, OSError when it cannot be made or opened."""
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(directory, DIR_FLAGS)
    st = os.fstat(fd)
    if st.st_uid != os.getuid() or st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        os.close(fd)
        who = "another user's" if st.st_uid != os.getuid() else "writable by others"
        raise Untrusted(f"{directory} is {who}")
    return fd


@dataclass
class _Size:
    total: int
    measured: bool


class EntryStore:
    def __init__(
        self, directory: Path, what: str, limit: int = DEFAULT_LIMIT, warn: Callable[[str], None] = warn_stderr
    ):
        self.directory, self.what, self.limit = directory, what, limit
        self._warn = warn
        self._fd: int | None = None
        self._off = False  # said once: untrusted or unwritable, the store is off
        self._size = _Size(0, False)

    # -- the folder ---------------------------------------------------------------------
    def _folder(self) -> int | None:
        if self._off:
            return None
        if self._fd is None:
            try:
                self._fd = opened(self.directory)
            except Untrusted as exc:
                self._stop(f"{self.what} is not used: {exc} (it must be yours alone, no link)")
                return None
            except OSError as exc:
                self._stop(f"cannot write {self.what} ({exc}); going on without it")
                return None
        return self._fd

    def _stop(self, line: str) -> None:
        self._off = True
        self._warn(line)

    def close(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None

    def __del__(self):
        self.close()

    # -- entries ------------------------------------------------------------------------
    def read(self, key: str) -> str | None:
        """The entry's text, or None: absent, a link, not a regular file, too long, not text."""
        fd = self._folder()
        if fd is None:
            return None
        try:
            sub = os.open(key[:2], DIR_FLAGS, dir_fd=fd)
        except OSError:
            return None
        try:
            entry = os.open(f"{key}.json", os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, dir_fd=sub)
        except OSError:
            return None
        finally:
            os.close(sub)
        try:
            st = os.fstat(entry)
            if not stat.S_ISREG(st.st_mode) or st.st_size > ENTRY_MAX:
                return None
            with os.fdopen(entry, "rb", closefd=False) as f:
                data = f.read(ENTRY_MAX + 1)
            if len(data) > ENTRY_MAX:
                return None
            with contextlib.suppress(OSError):
                os.utime(entry)  # used now: the last to go
            return data.decode("utf-8")
        except (OSError, UnicodeDecodeError):
            return None
        finally:
            os.close(entry)

    def write(self, key: str, text: str) -> None:
        """Keep the entry (atomically); when the folder cannot be written, say so once and
        go on without it."""
        fd = self._folder()
        if fd is None:
            return
        data = text.encode("utf-8")
        if len(data) > ENTRY_MAX:
            return
        try:
            with contextlib.suppress(FileExistsError):
                os.mkdir(key[:2], 0o700, dir_fd=fd)
            sub = os.open(key[:2], DIR_FLAGS, dir_fd=fd)
            try:
                where = f"/proc/self/fd/{sub}"
                where = where if os.path.isdir(where) else str(self.directory / key[:2])
                tmp_fd, tmp = tempfile.mkstemp(dir=where, prefix=f".{key}.", suffix=".tmp")
                name = os.path.basename(tmp)
                try:
                    with os.fdopen(tmp_fd, "wb") as f:
                        f.write(data)
                    os.rename(name, f"{key}.json", src_dir_fd=sub, dst_dir_fd=sub)
                except BaseException:
                    with contextlib.suppress(OSError):
                        os.unlink(name, dir_fd=sub)
                    raise
            finally:
                os.close(sub)
        except OSError as exc:
            self._stop(f"cannot write {self.what} ({exc}); going on without it")
            return
        self._grew(len(data))

    # -- the bound ----------------------------------------------------------------------
    def entries(self) -> list[tuple[float, int, str, str]]:
        """Every entry: (last used, bytes, subfolder, name), oldest first."""
        fd = self._folder()
        if fd is None:
            return []
        found = []
        for sub in os.listdir(fd):
            with contextlib.suppress(OSError):
                sfd = os.open(sub, DIR_FLAGS, dir_fd=fd)
                try:
                    for name in os.listdir(sfd):
                        with contextlib.suppress(OSError):
                            st = os.stat(name, dir_fd=sfd, follow_symlinks=False)
                            if stat.S_ISREG(st.st_mode) and name.endswith(".json"):
                                found.append((st.st_mtime, st.st_size, sub, name))
                finally:
                    os.close(sfd)
        return sorted(found)

    def size(self) -> tuple[int, int]:
        """The entries' count and bytes."""
        found = self.entries()
        return len(found), sum(e[1] for e in found)

    def _grew(self, added: int) -> None:
        if not self._size.measured:
            self._size = _Size(self.size()[1], True)
        else:
            self._size.total += added
        if self._size.total > self.limit:
            self._evict()

    def _evict(self) -> None:
        """The least recently used entries out, down to 90% of the limit."""
        fd = self._folder()
        if fd is None:
            return
        found = self.entries()
        total = sum(e[1] for e in found)
        for _used, size, sub, name in found:
            if total <= self.limit * 0.9:
                break
            with contextlib.suppress(OSError):
                sfd = os.open(sub, DIR_FLAGS, dir_fd=fd)
                try:
                    os.unlink(name, dir_fd=sfd)
                    total -= size
                finally:
                    os.close(sfd)
        self._size = _Size(total, True)
