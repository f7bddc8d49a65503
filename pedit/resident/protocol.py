"""What the client and the resident process say to each other, and where they meet. Both
import this module, and it imports no numpy, no llama_cpp and no torch.

Where: a Unix socket in a per-user runtime folder (platformdirs: `$XDG_RUNTIME_DIR/pedit`,
else `/tmp/runtime-$UID/pedit`), made 0700, opened once without following a link and
refused when it is another user's or open to others, or when a folder above it could be
changed by another user (Runtime: every file in it is reached through that handle). There
is no TCP port. One resident process per user, model and backend settings: the socket's
name is a hash of them (`key`), and `<key>.lock`, held with flock for the resident's whole
life, holds its note (pid, start time, state: loading, ready, stopping), which clients
read to know whether one is alive and what it does, never by taking the lock.

How: frames of a 4-byte big-endian length and a payload. Each end first checks the other's
uid (SO_PEERCRED): another user's process is sent and read nothing. The client's first
frame is a JSON hello {"version": the build, "key"} (identity.py; at most HELLO_MAX bytes,
in HELLO_SECONDS); the resident answers {"ok": true, pid, build} or {"ok": false, "why"}:
a client of another build (or for another key) makes the resident stop, and the client
starts one of its own build (mypy's dmypy does this). Every later frame is a pickle of a
tuple (kind, value). Pickle, because the events, the options and the outcome are pedit's
own dataclasses and both ends run the same build (the hello checked it), and only this
user's processes get that far (the peer check and the 0700 folder): the trust pickle needs.

A request is ("answer", Request); the resident streams ("event", Started | Event) frames,
then ("outcome", Outcome), or ("error", Failure); each send has a deadline (stall_seconds:
a client that takes nothing that long is dropped). ("status", None) gets ("status", dict);
("stop", None) gets ("stopped", pid). The client cancels by closing the connection: the
resident stops the request at its next event.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import pickle
import socket
import stat
import struct
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..app.config import stall_seconds  # noqa: F401 (the resident's and its client's)
from ..identity import build

MAX_FRAME = 256 * 1024 * 1024  # a frame longer than this is a broken peer, not a file
HELLO_MAX = 4096  # a hello is a few short fields
HELLO_SECONDS = 10.0  # a hello not sent or answered in this long is a stuck or stopped peer
NOTE_BYTES = 512  # the lock file's note: the holder's pid, start time, state and build
BEAT = 2.0  # seconds between a loading resident's touches of its lock file
STUCK = 120.0  # a loading resident whose lock file is this old is stuck: the command loads its own
HEADER = struct.Struct(">I")


class ProtocolError(Exception):
    """The peer sent what this protocol does not allow, or went away mid-frame."""


@dataclass(frozen=True, kw_only=True)
class LoadSettings:
    """What the resident's model is: the settings that choose and load it (a request with
    other ones goes to another resident). Nothing else of the starter's settings reaches
    the resident: each request carries its own."""

    model: str
    backend: str
    n_ctx: int
    threads: int | None
    speculate_off: bool  # no cost model measured or learned (speculate = "off")

    def key(self) -> str:
        """The socket's name: the settings' hash (the version is checked in the hello)."""
        text = json.dumps([self.model, self.backend, self.n_ctx, self.threads, self.speculate_off])
        return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(frozen=True, kw_only=True)
class Request:
    """One file's job, as the resident runs it: the command's template, instruction and
    options, and the text (the client read the file; the resident never opens it)."""

    kind: str  # "rewrite" or "summary"
    template: Any  # app.templates.Template
    instruction: str | None
    options: Any  # app.options.EngineOptions (the resident adds its cost model)
    system: str | None
    force: bool
    chunk_tokens: int | None
    text: str
    name: str  # the file's name: its kind (Markdown, Python) and the guard's
    count: bool = True  # the file's tokens, for the live view and the record
    keep_alive: float | None = None  # the resident's keep-alive from this request on (None: as it is)
    spans: list[tuple[int, int]] | None = None  # the hook's: only these parts of the text (None: whole)
    answer_cache: bool = False  # a file cut in runs keeps its pieces' answers (app/answercache.py)
    answer_cache_mb: int = 256  # the cache's bound (config answer_cache_mb)


@dataclass(frozen=True)
class Failure:
    """A request that failed in the resident: the error's class name, its message and exit
    code, so that the client raises what an in-process run raises."""

    kind: str  # "usage", "model", "refused", "backend", "context", "other"
    message: str
    code: int = 3
    extra: dict = field(default_factory=dict)


class Runtime:
    """The per-user runtime folder, opened once without following a link: every file in it
    (the socket, the lock, the log, the failed load's note) is reached through that handle,
    so a folder renamed or replaced after the checks is not followed. Sockets are bound and
    reached as /proc/self/fd/N/NAME on Linux (the handle's folder, and a short path)."""

    def __init__(self, path: Path, fd: int):
        self.path, self.fd = path, fd

    def where(self, name: str) -> str:
        """The address of `name` in the folder (a socket's)."""
        proc = f"/proc/self/fd/{self.fd}"
        return f"{proc}/{name}" if os.path.isdir(proc) else str(self.path / name)

    def open(self, name: str, flags: int, mode: int = 0o600) -> int:
        return os.open(name, flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=self.fd)

    def read_text(self, name: str, limit: int = 1 << 16) -> str:
        """The file's first `limit` bytes (a regular file of this folder, no link), as text."""
        fd = self.open(name, os.O_RDONLY | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise OSError(f"{name} is not a regular file")
            return f.read(limit).decode("utf-8", errors="replace")

    def write_text(self, name: str, text: str) -> None:
        fd = self.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)

    def unlink(self, name: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name, dir_fd=self.fd)

    def names(self) -> list[str]:
        return sorted(os.listdir(self.fd))


_RUNTIMES: dict[str, Runtime] = {}


def runtime() -> Runtime:
    """The per-user runtime folder (platformdirs: `$XDG_RUNTIME_DIR/pedit`, else
    `/tmp/runtime-$UID/pedit`), made 0700 when absent and opened once per process;
    ProtocolError when it is not this user's private folder, or when a folder above it
    could be changed by another user (not root's or this user's, or writable by others
    without the sticky bit)."""
    import platformdirs

    with warnings.catch_warnings():  # no XDG_RUNTIME_DIR: platformdirs warns, then falls back to /tmp
        warnings.simplefilter("ignore")
        path = Path(os.path.abspath(platformdirs.user_runtime_dir("pedit")))
    found = _RUNTIMES.get(str(path))
    if found is not None:
        return found
    parent = Path(os.path.realpath(path.parent))
    if not parent.exists():
        parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    for above in (parent, *parent.parents):
        _safe_above(above)
    pfd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        with contextlib.suppress(FileExistsError):
            os.mkdir(path.name, 0o700, dir_fd=pfd)
        try:
            fd = os.open(path.name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=pfd)
        except OSError as exc:
            raise ProtocolError(f"{path} is not a private directory of this user (mode 0700): {exc}") from exc
    finally:
        os.close(pfd)
    st = os.fstat(fd)
    if st.st_uid != os.getuid() or st.st_mode & 0o077:
        os.close(fd)
        raise ProtocolError(f"{path} is not a private directory of this user (mode 0700)")
    found = _RUNTIMES[str(path)] = Runtime(path, fd)
    return found


def _safe_above(folder: Path) -> None:
    """A folder above the runtime folder must be root's or this user's, and not writable by
    others unless sticky (as /tmp is: others cannot rename or remove what is ours)."""
    st = os.stat(folder)
    if st.st_uid not in (0, os.getuid()):
        raise ProtocolError(f"{folder} (above pedit's runtime folder) belongs to another user")
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH) and not st.st_mode & stat.S_ISVTX:
        raise ProtocolError(f"{folder} (above pedit's runtime folder) is writable by others")


def runtime_dir() -> Path:
    """The runtime folder's path (checked and opened: runtime())."""
    return runtime().path


def socket_name(key: str) -> str:
    return f"{key}.sock"


def lock_name(key: str) -> str:
    return f"{key}.lock"


def process_start(pid: int) -> int | None:
    """The process's start time, in clock ticks since boot (/proc/PID/stat's 22nd field):
    with its pid, it names one process even after the pid is reused. None where there is
    no /proc."""
    found = _stat(pid)
    return found[1] if found else None


def _stat(pid: int) -> tuple[str, int] | None:
    """The process's state letter and start time (/proc/PID/stat), or None."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return fields[0], int(fields[19])
    except (OSError, IndexError, ValueError):
        return None


def holder(key: str) -> dict | None:
    """The note of the live process that holds the key's lock ({"pid", "since", "state":
    "loading" | "ready" | "stopping", "build", "age": seconds since its file was touched}),
    read from the lock file, never by taking the lock; None when no live process wrote it."""
    try:
        rt = runtime()
        fd = rt.open(lock_name(key), os.O_RDONLY | os.O_NONBLOCK)
    except (OSError, ProtocolError):
        return None
    try:
        st = os.fstat(fd)
        note = json.loads(os.pread(fd, NOTE_BYTES, 0).decode("utf-8", errors="replace").strip() or "null")
    except (OSError, ValueError):
        return None
    finally:
        os.close(fd)
    if not isinstance(note, dict) or not isinstance(note.get("pid"), int):
        return None
    pid = note["pid"]
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        pass  # alive, another user's: its start time says whether it is the holder
    found = _stat(pid)
    if found is not None and (found[0] in ("Z", "X") or found[1] != note.get("since", found[1])):
        return None  # dead and not yet reaped by its parent, or the pid is another process's now
    return {**note, "age": max(0.0, time.time() - st.st_mtime)}


def hello(key: str) -> dict:
    return {"version": build(), "key": key}


def peer_is_this_user(sock: socket.socket) -> bool:
    """Whether the process at the other end of a Unix socket runs as this user (SO_PEERCRED,
    read from the kernel: it cannot be forged). Checked by both ends before the hello."""
    if not hasattr(socket, "SO_PEERCRED"):
        return True  # no such check where the platform has none (the folder's 0700 remains)
    _pid, uid, _gid = struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))
    return uid == os.getuid()


def send(sock: socket.socket, payload: bytes) -> None:
    sock.sendall(HEADER.pack(len(payload)) + payload)


def receive(sock: socket.socket, limit: int = MAX_FRAME) -> bytes:
    """One frame's payload; ProtocolError when the peer closed or sent nonsense, or a frame
    longer than `limit`."""
    (size,) = HEADER.unpack(_exactly(sock, HEADER.size))
    if size > limit:
        raise ProtocolError(f"a frame of {size} bytes")
    return _exactly(sock, size)


def _exactly(sock: socket.socket, n: int) -> bytes:
    chunks, left = [], n
    while left:
        chunk = sock.recv(min(left, 1 << 20))
        if not chunk:
            raise ProtocolError("the other end closed the connection")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def send_json(sock: socket.socket, value: dict) -> None:
    send(sock, json.dumps(value).encode())


def receive_json(sock: socket.socket) -> dict:
    """A hello (a few kB at most)."""
    try:
        value = json.loads(receive(sock, HELLO_MAX))
    except ValueError as exc:
        raise ProtocolError("a hello that is not JSON") from exc
    if not isinstance(value, dict):
        raise ProtocolError("a hello that is not an object")
    return value


def send_message(sock: socket.socket, kind: str, value: object = None) -> None:
    send(sock, pickle.dumps((kind, value), protocol=pickle.HIGHEST_PROTOCOL))


def receive_message(sock: socket.socket) -> tuple[str, Any]:
    try:
        kind, value = pickle.loads(receive(sock))
    except ProtocolError:
        raise
    except Exception as exc:  # a pickle of another version's classes, or garbage
        raise ProtocolError(f"a message that cannot be read ({exc})") from exc
    return kind, value
