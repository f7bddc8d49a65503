"""The client of the resident process: find it, or start it, and have it answer a file's
job, its events streamed back as an in-process job's are (app/outcome.Answering). Imports
no numpy, no llama_cpp, no torch: a command that finds its model resident starts in a
fraction of the time.

    resident = Resident(load, keep_alive=300)
    begun = resident.begin(request)      # starts or reuses the process; the file's tokens
    outcome = ui.runs.answer(begun.stream, show)

Faults, each ending where an in-process run would (the CLI runs the file, and the files
after it, here instead): ResidentUnavailable when it cannot be reached or started, is
busy or stopping, does not answer its hello in time, is another user's, or is stuck
loading (a model that does not load: the in-process run then fails with today's line and
exit code); ResidentLost when it dies mid-request. Whether one is alive, and what it is
doing, is its lock file's note (protocol.holder), never the lock taken. A stale socket
(no live holder) is removed; clients starting at once take turns on `<key>.start`'s lock
(held only to decide, not while the resident loads), and the later ones wait for the
first's process.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Generator
from dataclasses import asdict, dataclass
from pathlib import Path

from ..app.config import ENV
from . import protocol
from .protocol import Failure, LoadSettings, ProtocolError, Request

START_TIMEOUT = 900.0  # seconds a starting resident may take to listen (a first load may build or verify)
STOP_TIMEOUT = 30.0  # seconds an old version's resident may take to go


class ResidentUnavailable(Exception):
    """The resident process cannot be reached or started (the message says why)."""


class ResidentLost(Exception):
    """The resident process went away in the middle of a request."""


@dataclass(frozen=True)
class Begun:
    """A request the resident accepted: the file's tokens (None: not counted), the runs a
    summary is cut in, and the stream of its runs' events, whose value is the Outcome."""

    tokens: int | None
    pieces: int
    stream: Generator
    backend: str
    device: str
    cached: bool = False  # the answer cache's (app/answercache.py): no model ran


class Resident:
    def __init__(self, load: LoadSettings, keep_alive: float, log=lambda line: None):
        self.load, self.keep_alive, self.key = load, keep_alive, load.key()
        self._say = log  # one-line notes (a stale socket removed, a resident of another build)
        self.info: dict = {}
        self.started = False  # this client started the process

    # -- reaching it ----------------------------------------------------------------------
    def _reach(self) -> socket.socket | None:
        """A connection past the hello; None when nothing listens (or a resident of another
        build answered: it stops, and is gone when this returns)."""
        try:
            found = connect(self.key)
        except _Mismatch as old:
            self._say(f"the resident model is another pedit build's ({old}); starting this build's")
            self._wait_gone()
            return None
        if found is None:
            return None
        sock, self.info = found
        return sock

    def connect(self) -> socket.socket:
        """A connection to the resident, started when none runs (or one of another build
        ran: it is stopped first). ResidentUnavailable when none answers in time."""
        try:
            protocol.runtime()
        except (ProtocolError, OSError) as exc:
            raise ResidentUnavailable(str(exc)) from exc
        sock = self._reach()
        if sock is not None:
            return sock
        return self._start()

    def _wait_gone(self) -> None:
        deadline = time.monotonic() + STOP_TIMEOUT
        while protocol.holder(self.key) is not None:
            if time.monotonic() > deadline:
                raise ResidentUnavailable("the resident model that was asked to stop does not stop")
            time.sleep(0.05)

    def _start(self, again: bool = True) -> socket.socket:
        """Start the resident unless one is starting already (one client at a time decides:
        the start lock, held only for that), then wait for it to listen."""
        rt = protocol.runtime()
        fd = rt.open(f"{self.key}.start", os.O_RDWR | os.O_CREAT)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)  # another client deciding: a moment
            sock = self._reach()
            if sock is not None:
                return sock
            proc = None
            if protocol.holder(self.key) is None:  # none alive: a socket left is stale
                if protocol.socket_name(self.key) in rt.names():
                    rt.unlink(protocol.socket_name(self.key))
                    self._say("removed a stale resident socket (its process had died)")
                proc = self._spawn(rt)
                self.started = True
        finally:
            os.close(fd)
        return self._await(proc, again)

    def _spawn(self, rt: protocol.Runtime) -> subprocess.Popen:
        # the config's environment layer stays with the client, and so does git's (a hook's starter)
        layers = {*ENV.values(), "PEDIT_API_KEY"}
        env = {k: v for k, v in os.environ.items() if k not in layers and not k.startswith("GIT_")}
        log = rt.open(f"{self.key}.log", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)  # the child's stderr
        load = json.dumps(asdict(self.load))
        argv = [sys.executable, "-m", "pedit.resident.server", load, str(self.keep_alive)]
        try:
            return subprocess.Popen(
                argv,
                cwd="/", env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log,
                start_new_session=True,
            )  # fmt: skip
        except OSError as exc:
            raise ResidentUnavailable(f"cannot start the resident model: {exc}") from exc
        finally:
            os.close(log)

    def _await(self, proc: subprocess.Popen | None, again: bool) -> socket.socket:
        """Wait for the resident this client started (`proc`), or another's, to listen; what
        it is doing is its lock file's note (protocol.holder), read, never taken."""
        deadline = time.monotonic() + START_TIMEOUT
        lost = None  # when no live holder was seen: our process lost the start, or none is left
        waited = None  # the pid of another's resident seen loading
        while time.monotonic() < deadline:
            sock = self._reach()
            if sock is not None:
                return sock
            code = proc.poll() if proc is not None else None
            if code not in (None, 0):  # ours did not load: its error, as an in-process load raises it
                self._failed()
                raise ResidentUnavailable(f"the resident model did not start (exit {code}{self._last_line()})")
            note = protocol.holder(self.key)
            if note is not None:
                lost = None
                if proc is None or note["pid"] != proc.pid:
                    waited = note["pid"]
                if note.get("state") == "loading" and note["age"] > protocol.STUCK:
                    raise ResidentUnavailable(f"the resident model (pid {note['pid']}) is stuck loading")
                if note.get("state") == "stopping":
                    self._wait_gone()
                    if again:
                        return self._start(again=False)
                    raise ResidentUnavailable("the resident model is stopping")
            elif proc is not None and code is None:
                pass  # ours, before it took the lock
            elif waited is not None:  # the one we waited for went without listening
                self._failed()
                raise ResidentUnavailable("the resident model another command started did not start")
            elif lost is None:
                lost = time.monotonic()  # lost the start to another one: it is writing its note
            elif time.monotonic() - lost > 1.0:
                if again:
                    return self._start(again=False)
                raise ResidentUnavailable("the resident model did not start (it exited)")
            time.sleep(0.05)
        raise ResidentUnavailable("the resident model did not start in time")

    def _failed(self) -> None:
        """Raise the error the resident's load failed with, when it left one."""
        try:
            f = json.loads(protocol.runtime().read_text(f"{self.key}.failed"))
            failure = Failure(str(f["kind"]), str(f["message"]), int(f["code"]), dict(f.get("extra") or {}))
        except (OSError, ValueError, KeyError, TypeError, ProtocolError):
            return
        _raise(failure)

    def _last_line(self) -> str:
        try:
            lines = protocol.runtime().read_text(f"{self.key}.log").strip().splitlines()
        except (OSError, ProtocolError):
            return ""
        return f": {lines[-1]}" if lines else ""

    # -- asking it --------------------------------------------------------------------------
    def begin(self, req: Request, retried: bool = False) -> Begun:
        """Send one file's job; the resident's first answer says it began. ResidentLost: it
        died (or stopped taking the request) before that; ResidentUnavailable: it cannot
        take it (busy, stopping); a Failure there is raised as the error it stands for."""
        sock = self.connect()
        try:
            sock.settimeout(protocol.stall_seconds())  # the request, sent to one that takes it
            protocol.send_message(sock, "answer", req)
            sock.settimeout(None)  # its answer takes as long as the model takes
            kind, value = protocol.receive_message(sock)
        except (ProtocolError, OSError) as exc:
            sock.close()
            raise ResidentLost(str(exc)) from exc
        if kind == "error":
            sock.close()
            if isinstance(value, Failure) and value.kind == "stopping" and not retried:
                self._wait_gone()  # it was told to stop (another build's client, pedit daemon stop)
                return self.begin(req, retried=True)
            if isinstance(value, Failure) and value.kind in ("busy", "stopping"):
                raise ResidentUnavailable(value.message)
            _raise(value)
        if kind != "ready":
            sock.close()
            raise ResidentLost(f"unexpected {kind!r}")
        backend, device = self.info.get("backend", self.load.backend), self.info.get("device", "")
        return Begun(value["tokens"], value["pieces"], _events(sock), backend, device)


class _Mismatch(Exception):
    pass


def connect(key: str) -> tuple[socket.socket, dict] | None:
    """A connection to the resident of `key` past the hello, and the hello's answer; None
    when nothing listens; _Mismatch when a resident of another build answered;
    ResidentUnavailable when one listens but does not answer in time (stopped, or a
    machine too busy), or another user's process holds the socket."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(protocol.HELLO_SECONDS)
    try:
        rt = protocol.runtime()
        sock.connect(rt.where(protocol.socket_name(key)))
    except (ProtocolError, OSError):
        sock.close()
        return None
    try:
        if not protocol.peer_is_this_user(sock):
            raise ResidentUnavailable("the resident socket is another user's process")
        protocol.send_json(sock, protocol.hello(key))
        reply = protocol.receive_json(sock)
    except TimeoutError:
        sock.close()
        raise ResidentUnavailable(
            f"the resident model did not answer in {protocol.HELLO_SECONDS:.0f} s (stopped, or the machine is busy)"
        ) from None
    except (ProtocolError, OSError):
        sock.close()
        return None
    except ResidentUnavailable:
        sock.close()
        raise
    if not reply.get("ok"):
        sock.close()
        raise _Mismatch(str(reply.get("why", "")))
    return sock, reply


def ask(key: str, kind: str) -> object:
    """A status or stop request's answer from the resident of `key`; ResidentUnavailable
    when none answers (never starts one)."""
    try:
        found = connect(key)
    except _Mismatch as old:
        raise ResidentUnavailable(f"a resident of another pedit version ({old})") from None
    if found is None:
        raise ResidentUnavailable("no resident model")
    sock = found[0]
    with sock:
        try:
            protocol.send_message(sock, kind)
            return protocol.receive_message(sock)[1]
        except (ProtocolError, OSError) as exc:
            raise ResidentUnavailable(str(exc)) from exc


def residents() -> list[str]:
    """The keys of this user's resident sockets (some may be stale)."""
    try:
        return [n.removesuffix(".sock") for n in protocol.runtime().names() if n.endswith(".sock")]
    except (ProtocolError, OSError):
        return []


def _events(sock: socket.socket) -> Generator:
    """The request's events as they come; returns its Outcome. Closing it (the consumer
    stopped: Ctrl-C, an error) closes the connection, which stops the request there."""
    with sock:
        while True:
            try:
                kind, value = protocol.receive_message(sock)
            except (ProtocolError, OSError) as exc:
                raise ResidentLost(str(exc)) from exc
            if kind == "event":
                yield value
            elif kind == "outcome":
                return value
            elif kind == "error":
                _raise(value)
            else:
                raise ResidentLost(f"unexpected {kind!r}")


def _raise(value: object) -> None:
    from .failures import reraise

    if not isinstance(value, Failure):
        raise ResidentLost(f"an error that is not one: {value!r}")
    reraise(value)



def resident_for(settings) -> LoadSettings | None:
    """The load settings of the resident that answers these settings' (app.config.Settings)
    commands; None when none should: keep_alive 0, or a server's model (-b openai: it is
    resident already)."""
    if settings.keep_alive == 0 or settings.on_server:
        return None
    model = _here(settings.model)
    if model is None:
        return None
    return LoadSettings(
        model=model, backend=settings.backend, n_ctx=settings.n_ctx, threads=settings.threads,
        speculate_off=settings.speculate == "off",
    )  # fmt: skip


def _here(spec: str) -> str | None:
    """The model as the resident (which runs in `/`) must be told it: a file or folder that
    exists here by its absolute path (`./m.gguf`, or a folder named like a hub repo,
    `owner/name`); a name of pedit's models or a hub repo id as given. None for a path that
    does not exist here: the command loads it itself, and says so as it always has."""
    from ..models.registry import REGISTRY

    if spec in REGISTRY:
        return spec
    path = Path(spec).expanduser()
    if path.exists():
        return str(path.resolve())
    if spec.startswith((".", "/", "~")) or (spec.lower().endswith(".gguf") and ":" not in spec):
        return None
    return spec
