"""Reading a user's file faithfully and writing it back safely.

Reading (black and pip are the anchors): bytes first; the encoding is kept (UTF-8, UTF-8
with a BOM, UTF-16 with its BOM, latin-1 as the last resort for 8-bit text), and so are
the newline style (LF or CRLF) and whether the file ends with a newline. The model sees
plain "\\n" text; `render()` puts the original conventions back on its answer, even when
the model changed them.

Writing: the new bytes go to a temporary file in the same directory, which is flushed,
fsynced and given the original's permission bits, then `os.replace`d over the target in
one atomic step (black's writes are not atomic, its issue #2479). The temporary file is
removed on any exception, KeyboardInterrupt included, so the original is either untouched
or entirely replaced. A symlink is written through to its target; a file with other hard
links is refused unless forced (replacing it would silently split the links).
"""

from __future__ import annotations

import codecs
import os
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .errors import UsageError

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

    @property
    def name(self) -> str:
        return self.path.name if self.path else "stdin"

    def render(self, text: str) -> str:
        """The model's text with this file's trailing-newline state and newline style."""
        text = text.replace("\r\n", "\n")
        if self.trailing_newline and text and not text.endswith("\n"):
            text += "\n"
        elif not self.trailing_newline:
            text = text.rstrip("\n")
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
        if b"\0" in data[:8192]:
            raise UsageError(f"{name}: looks binary (contains NUL bytes)")
        try:
            data.decode("utf-8")
            encoding = "utf-8"
        except UnicodeDecodeError:
            encoding = "latin-1"
            controls = sum(b < 32 and b not in (9, 10, 12, 13) for b in data[:8192])
            if controls > 0:
                raise UsageError(f"{name}: looks binary (not UTF-8, has control bytes)") from None
    text = data.decode(encoding)
    newline = "\r\n" if text.count("\r\n") * 2 > text.count("\n") else "\n"
    return Source(
        text=text.replace("\r\n", "\n"),
        encoding=encoding,
        newline=newline,
        trailing_newline=text.endswith("\n"),
        path=path,
    )


def read(path: Path, *, force: bool = False) -> Source:
    """Read a file that pedit may rewrite; refuse, with one line, what it must not."""
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
    try:
        data = target.read_bytes()
    except OSError as exc:
        raise UsageError(f"{path}: cannot read ({exc.strerror})") from exc
    return decode(data, str(path), path)


def check_writable(path: Path) -> None:
    """Fail before any model work if the file could not or should not be replaced. A file
    or directory without write permission bits is refused even for root: read-only is the
    owner's statement of intent."""
    target = path.resolve()
    if not target.stat().st_mode & 0o222 or not os.access(target, os.W_OK):
        raise UsageError(f"{path}: read-only file, not written")
    parent = target.parent
    if not parent.stat().st_mode & 0o222 or not os.access(parent, os.W_OK | os.X_OK):
        raise UsageError(f"{path}: its directory is read-only (pedit writes a temporary file beside it)")


def write(source: Source, text: str) -> None:
    """Atomically replace the file with `text` in the source's encoding and conventions."""
    assert source.path is not None
    write_bytes(source.path, source.encode(text))


def write_bytes(path: Path, data: bytes) -> None:
    """Atomically replace the file at `path` (through a symlink) with `data`, keeping its mode:
    a temporary file beside it, fsync, rename; the temporary file removed on any failure."""
    source_path = path
    target = path.resolve()  # through a symlink to the file it points at
    mode = stat.S_IMODE(target.stat().st_mode)
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".pedit")
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException as exc:
        tmp.unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise UsageError(f"{source_path}: cannot write ({exc.strerror}); the file is unchanged") from exc
        raise
    _fsync_dir(target.parent)


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
