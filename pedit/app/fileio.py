"""Reading a user's file faithfully and writing it back safely.

Reading (black and pip are the anchors): bytes first; the encoding is kept (UTF-8, UTF-8
with a BOM, UTF-16 with its BOM, latin-1 as the last resort for 8-bit text), and so are
the newline style (LF or CRLF) and whether the file ends with a newline. The model sees
plain "\\n" text; `render()` puts the original conventions back on its answer, even when
the model changed them. A file with both endings keeps each line's own: a line of the
answer takes the ending of the line it matches in the file (difflib's alignment of the
lines; a replaced line the ending of the one in its place, an added line the file's most
common ending), so a rewrite changes no ending the user did not see change in the diff.

Writing (atomic.py: `write_bytes`, `Stamp`, `written`, `uninterrupted`): the new bytes go
to a temporary file in the same directory, which is flushed,
fsynced and given the original's permission bits, then `os.replace`d over the target in
one atomic step (black's writes are not atomic, its issue #2479). The temporary file is
removed on any exception, KeyboardInterrupt included, so the original is either untouched
or entirely replaced. The last check, the rename, the directory's fsync and the record of
the write (`written()`, what a message on Ctrl-C or SIGTERM names) are one step that a
signal does not split: Ctrl-C and SIGTERM wait until it is done (`uninterrupted`). A
temporary file left by a pedit that was killed (SIGKILL, a power cut) carries its process
id in its name and is removed by the next write of that file.

A symlink is written through to its target; a file with other hard links is refused unless
forced (replacing it would silently split the links). The temporary file takes the
original's owner and group (refused when they cannot be kept: a file never changes hands),
mode bits and extended attributes (POSIX ACLs among them).

No lost updates: `read` remembers what it read (a `Stamp`: the link's target, device,
inode, size, mtime_ns and sha256 of the bytes) and `write` checks, just before the
replace, that the path still leads to that same file with those same bytes; otherwise
it writes nothing (ConflictError, exit 4). `locked` holds an advisory lock (flock) on the
file while pedit works on it, so a second pedit on the same file stops at once instead
of racing the first.
"""

from __future__ import annotations

import codecs
import contextlib
import difflib
import fcntl
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from ..errors import ConflictError, UsageError
from .atomic import Stamp, create_bytes, write_bytes

TEXT_BYTES = bytes([9, 10, 12, 13, *range(32, 256)])
BOMS = [
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
]


@dataclass(frozen=True)
class Source:
    """A text file as read: its text with "\\n" newlines, and how to write it back."""

    text: str
    encoding: str  # a Python codec name: utf-8, utf-8-sig, utf-16, latin-1
    newline: str  # "\n" or "\r\n"
    trailing_newline: bool
    path: Path | None = None  # None for stdin
    stamp: Stamp | None = None  # what was read (None for stdin)
    label: str = "stdin"  # the name of what has no path (--stdin-filename)
    endings: tuple[str, ...] = ()  # a file with both endings: each line's ("\n" or "\r\n"); () if one style

    @property
    def name(self) -> str:
        return self.path.name if self.path else self.label

    def render(self, text: str) -> str:
        """The model's text with this file's trailing-newline state and newline style."""
        text = text.replace("\r\n", "\n")
        if self.trailing_newline and text and not text.endswith("\n"):
            text += "\n"
        elif not self.trailing_newline:
            text = text.rstrip("\n")
        if self.endings:
            return _with_endings(text, self.text, self.endings, self.newline)
        return text.replace("\n", self.newline) if self.newline != "\n" else text

    def encode(self, text: str) -> bytes:
        """render() and encode the way the original was encoded; a clear error when the
        new text has characters the original encoding cannot hold (latin-1)."""
        try:
            return self.render(text).encode(self.encoding)
        except UnicodeEncodeError as exc:
            raise UsageError(
                f"{self.name}: the rewrite has characters {self.encoding} cannot encode "
                f"({exc.object[exc.start : exc.end]!r}); the file is unchanged"
            ) from exc


def decode(data: bytes, name: str = "stdin", path: Path | None = None) -> Source:
    """Bytes to a Source; UsageError for what is not text."""
    encoding = next((enc for bom, enc in BOMS if data.startswith(bom)), None)
    if encoding is None:
        if b"\0" in data:  # the whole file (a memchr: cheap)
            raise UsageError(f"{name}: looks binary (contains NUL bytes)")
        try:
            data.decode("utf-8")
            encoding = "utf-8"
        except UnicodeDecodeError:
            encoding = "latin-1"
            if data.translate(None, TEXT_BYTES):  # control bytes other than \t \n \f \r
                raise UsageError(f"{name}: looks binary (not UTF-8, has control bytes)") from None
    text = data.decode(encoding)
    newline = "\r\n" if text.count("\r\n") * 2 > text.count("\n") else "\n"
    return Source(
        text=text.replace("\r\n", "\n"),
        encoding=encoding,
        newline=newline,
        trailing_newline=text.endswith("\n"),
        path=path,
        label=name,
        endings=line_endings(text),
    )


def line_endings(text: str) -> tuple[str, ...]:
    """Each line's ending in `text` ("\\r\\n" or "\\n") when it has both, else ()."""
    crlf = text.count("\r\n")
    if crlf == 0 or crlf == text.count("\n"):
        return ()
    return tuple("\r\n" if line.endswith("\r") else "\n" for line in text.split("\n")[:-1])


def _with_endings(new: str, old: str, endings: tuple[str, ...], common: str) -> str:
    """`new` ("\\n" newlines) with each line ending as the line of `old` it matches did."""
    old_lines, new_lines = old.split("\n"), new.split("\n")
    ends = [common] * (len(new_lines) - 1)
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag in ("equal", "replace"):
            for j in range(j1, min(j2, len(ends))):
                i = min(i1 + j - j1, i2 - 1)  # the line in its place (past the old block's end: its last)
                if i < len(endings):
                    ends[j] = endings[i]
    return "".join(line + end for line, end in zip(new_lines, [*ends, ""], strict=True))


MAX_BYTES = 16 * 1024 * 1024  # ~4M tokens: a day of decoding on a laptop; more is a mistake
TOO_LARGE = f"larger than {MAX_BYTES // (1024 * 1024)} MB, more than pedit rewrites"


def read_stream(stream, name: str = "stdin") -> Source:
    """A file from a stream (standard input), read up to MAX_BYTES: an endless or huge
    stream (`< /dev/zero`) is refused, not read into memory until the process dies."""
    data = stream.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise UsageError(f"{name}: {TOO_LARGE}")
    return decode(data, name)


def read(path: Path, *, force: bool = False) -> Source:
    """Read a file that pedit may rewrite; refuse, with one line, what it must not. The
    Source remembers what was read (its Stamp)."""
    if not path.exists() and not path.is_symlink():
        raise UsageError(f"{path}: no such file")
    if path.is_symlink() and not path.exists():
        raise UsageError(f"{path}: a broken symlink")
    if path.is_dir():
        raise UsageError(f"{path}: is a directory")
    target = path.resolve()
    st = target.stat()
    if not stat.S_ISREG(st.st_mode):
        raise UsageError(f"{path}: not a regular file")
    if st.st_nlink > 1 and not force:
        raise UsageError(f"{path}: has {st.st_nlink} hard links; rewriting would split them (--force)")
    if st.st_size > MAX_BYTES:
        raise UsageError(f"{path}: {TOO_LARGE}")
    try:
        with open(target, "rb") as f:
            st = os.fstat(f.fileno())
            data = f.read(MAX_BYTES + 1)
            if len(data) > MAX_BYTES:  # grown since its stat
                raise UsageError(f"{path}: {TOO_LARGE}")
    except OSError as exc:
        raise UsageError(f"{path}: cannot read ({exc.strerror})") from exc
    return replace(decode(data, str(path), path), stamp=Stamp.of(target, st, data))


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """An advisory exclusive lock on the file `path` leads to, held while pedit works on
    it: another pedit that tries the same file gets ConflictError at once. (The lock is on
    the inode; after the replace a newcomer locks the new file, and a pedit that locked
    the old one fails its Stamp check.)"""
    try:
        fd = os.open(path.resolve(), os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        yield  # read() says what is wrong with it
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ConflictError(f"{path}: another pedit is rewriting it; not touched") from None
        except OSError:
            pass  # a file system without locks: the Stamp check still guards the write
        yield
    finally:
        os.close(fd)


def check_writable(path: Path, *, force: bool = False) -> None:
    """Fail if the file could not or should not be replaced: before any model work, and
    again at every write (`write`: the CLI's and the interactive session's save alike). A
    file or directory without write permission bits is refused even for root: read-only is
    the owner's statement of intent. A file pedit could not give back to its owner and
    group is refused too, and one with other hard links unless forced (replacing it would
    split them)."""
    target = path.resolve()
    try:
        st = target.stat()
    except FileNotFoundError:
        raise ConflictError(f"{path}: deleted while pedit ran; nothing written") from None
    if not stat.S_ISREG(st.st_mode):  # read as a file: replaced since by a folder or a device
        raise ConflictError(f"{path}: changed on disk since pedit read it; nothing written")
    if st.st_nlink > 1 and not force:
        raise UsageError(f"{path}: has {st.st_nlink} hard links; rewriting would split them (--force)")
    if not st.st_mode & 0o222 or not os.access(target, os.W_OK):
        raise UsageError(f"{path}: read-only file, not written")
    parent = target.parent
    if not parent.stat().st_mode & 0o222 or not os.access(parent, os.W_OK | os.X_OK):
        raise UsageError(f"{path}: its directory is read-only (pedit writes a temporary file beside it)")
    if os.geteuid() != 0 and (st.st_uid != os.geteuid() or st.st_gid not in {os.getegid(), *os.getgroups()}):
        raise UsageError(f"{path}: owned by {st.st_uid}:{st.st_gid}; pedit could not keep its owner")


def write(source: Source, text: str, *, force: bool = False) -> Source:
    """Atomically replace the file with `text` in the source's encoding and conventions,
    if it may still be written (check_writable, at this moment; `force`: a hard-linked file
    may) and is still what was read (its Stamp); the Source of what is on disk now."""
    assert source.path is not None
    check_writable(source.path, force=force)
    data = source.encode(text)
    stamp = write_bytes(source.path, data, source.stamp)
    endings = line_endings(source.render(text)) if source.endings else ()  # one style stays one
    return replace(source, text=text, stamp=stamp, endings=endings)


def write_new(source: Source, text: str, path: Path) -> None:
    """`text` to a new file at `path`, in the source's encoding and conventions, never over
    an existing file (atomic.create_bytes): where accepted work goes when its own file
    refuses it."""
    if path.is_dir():
        raise UsageError(f"{path}: is a directory")
    create_bytes(path, source.encode(text))
