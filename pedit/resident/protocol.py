"""What the client and the resident process say to each other, and where they meet. Both
import this module, and it imports no numpy, no llama_cpp and no torch.

Where: a Unix socket in a per-user runtime directory (platformdirs: `$XDG_RUNTIME_DIR/pedit`,
else `/tmp/runtime-$UID/pedit`), made 0700 and refused when another user owns it or others
may enter it. There is no TCP port. One resident process per user, model and backend
settings: the socket's name is a hash of them (`key`), and `<name>.lock`, held with flock
for the resident's whole life, says whether one is alive (a socket with no lock held is
stale, and removed).

How: frames of a 4-byte big-endian length and a payload. The client's first frame is a
JSON hello {"version", "key"}; the resident answers {"ok": true, pid} or {"ok": false,
"why"}: a client of another pedit version (or for another key) makes the resident stop,
and the client starts one of its own version (mypy's dmypy does this). Every later frame
is a pickle of a tuple (kind, value). Pickle, because the events, the options and the
outcome are pedit's own dataclasses and both ends run the same pedit (the hello checked
it); only this user can reach the socket (the directory is theirs, 0700), which is the
trust pickle needs.

A request is ("answer", Request); the resident streams ("event", Started | Event) frames,
then ("outcome", Outcome), or ("error", Failure). ("status", None) gets ("status", dict);
("stop", None) gets ("stopped", pid). The client cancels by closing the connection: the
resident stops the request at its next event.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import socket
import stat
import struct
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import __version__

MAX_FRAME = 256 * 1024 * 1024  # a frame longer than this is a broken peer, not a file
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


@dataclass(frozen=True)
class Failure:
    """A request that failed in the resident: the error's class name, its message and exit
    code, so that the client raises what an in-process run raises."""

    kind: str  # "usage", "model", "refused", "backend", "context", "other"
    message: str
    code: int = 3
    extra: dict = field(default_factory=dict)


def runtime_dir() -> Path:
    """The per-user 0700 directory the sockets live in (made when absent); ProtocolError
    when it is another user's or open to others."""
    import platformdirs

    with warnings.catch_warnings():  # no XDG_RUNTIME_DIR: platformdirs warns, then falls back to /tmp
        warnings.simplefilter("ignore")
        path = Path(platformdirs.user_runtime_dir("pedit"))
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    st = path.lstat()
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        raise ProtocolError(f"{path} is not a private directory of this user (mode 0700)")
    return path


def socket_path(key: str) -> Path:
    return runtime_dir() / f"{key}.sock"


def lock_path(key: str) -> Path:
    return runtime_dir() / f"{key}.lock"


def hello(key: str) -> dict:
    return {"version": __version__, "key": key}


def send(sock: socket.socket, payload: bytes) -> None:
    sock.sendall(HEADER.pack(len(payload)) + payload)


def receive(sock: socket.socket) -> bytes:
    """One frame's payload; ProtocolError when the peer closed or sent nonsense."""
    (size,) = HEADER.unpack(_exactly(sock, HEADER.size))
    if size > MAX_FRAME:
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
    try:
        value = json.loads(receive(sock))
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
