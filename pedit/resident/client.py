"""The client of the resident process: find it, or start it, and have it answer a file's
job, its events streamed back as an in-process job's are (app/outcome.Answering). Imports
no numpy, no llama_cpp, no torch: a command that finds its model resident starts in a
fraction of the time.

    resident = Resident(load, keep_alive=300)
    begun = resident.begin(request)      # starts or reuses the process; the file's tokens
    outcome = ui.runs.answer(begun.stream, show)

Faults, each ending where an in-process run would (the CLI runs the file here instead):
ResidentUnavailable when it cannot be reached or started (a model that does not load: the
in-process run then fails with today's line and exit code); ResidentLost when it dies
mid-request. A stale socket (no process holds its lock) is removed; two clients starting
at once take turns on `<key>.start`'s lock, and the second finds the first's process.
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
        self._say = log  # one-line notes (a stale socket removed, a resident of another version)
        self.info: dict = {}
        self.started = False  # this client started the process

    # -- reaching it ----------------------------------------------------------------------
    def _connect(self) -> socket.socket | None:
        """A connection past the hello; None when nothing listens; _Mismatch when a
        resident of another version answered (it stops: the caller starts anew)."""
        found = connect(self.key)
        if found is None:
            return None
        sock, self.info = found
        return sock

    def connect(self) -> socket.socket:
        """A connection to the resident, started when none runs (or one of another version
        ran: it is stopped first)."""
        try:
            sock = self._connect()
        except _Mismatch as old:
            self._say(f"the resident model is another pedit's ({old}); starting this version's")
            self._wait_gone()
            sock = None
        if sock is not None:
            return sock
        return self._start()

    def _alive(self) -> bool:
        """Whether a resident process holds the key's lock."""
        try:
            with open(protocol.lock_path(self.key), "a") as f:
                try:
                    fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    return True
                fcntl.flock(f, fcntl.LOCK_UN)
                return False
        except OSError:
            return False

    def _wait_gone(self) -> None:
        deadline = time.monotonic() + STOP_TIMEOUT
        while self._alive():
            if time.monotonic() > deadline:
                raise ResidentUnavailable("the resident model of another pedit version does not stop")
            time.sleep(0.05)

    def _start(self) -> socket.socket:
        """Start the resident (one client at a time: the start lock) and connect to it."""
        try:
            directory = protocol.runtime_dir()
        except (ProtocolError, OSError) as exc:
            raise ResidentUnavailable(str(exc)) from exc
        with open(directory / f"{self.key}.start", "a") as starting:
            fcntl.flock(starting, fcntl.LOCK_EX)  # another client starting it: wait for it
            with contextlib.suppress(_Mismatch):
                sock = self._connect()
                if sock is not None:
                    return sock
            if not self._alive():
                stale = protocol.socket_path(self.key)
                if stale.exists():
                    stale.unlink(missing_ok=True)
                    self._say("removed a stale resident socket (its process had died)")
            proc = self._spawn(directory)
            self.started = True
            return self._await(proc)

    def _spawn(self, directory: Path) -> subprocess.Popen:
        # the config's environment layer stays with the client, and so does git's (a hook's starter)
        layers = {*ENV.values(), "PEDIT_API_KEY"}
        env = {k: v for k, v in os.environ.items() if k not in layers and not k.startswith("GIT_")}
        log = open(directory / f"{self.key}.log", "wb")  # noqa: SIM115 (the child's stderr)
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
            log.close()

    def _await(self, proc: subprocess.Popen) -> socket.socket:
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            try:
                sock = self._connect()
            except _Mismatch as other:
                raise ResidentUnavailable(f"another pedit's resident model answered ({other})") from None
            if sock is not None:
                return sock
            code = proc.poll()
            if code is not None and not self._alive():
                self._failed()  # the model did not load: its error, as an in-process load raises it
                why = f"exit {code}{self._last_line()}"
                raise ResidentUnavailable(f"the resident model did not start ({why})")
            time.sleep(0.05)
        raise ResidentUnavailable("the resident model did not start in time")

    def _failed(self) -> None:
        """Raise the error the resident's load failed with, when it left one."""
        try:
            f = json.loads((protocol.runtime_dir() / f"{self.key}.failed").read_text())
            failure = Failure(str(f["kind"]), str(f["message"]), int(f["code"]), dict(f.get("extra") or {}))
        except (OSError, ValueError, KeyError, TypeError, ProtocolError):
            return
        _raise(failure)

    def _last_line(self) -> str:
        try:
            log = protocol.runtime_dir() / f"{self.key}.log"
            lines = log.read_text(errors="replace").strip().splitlines()
        except (OSError, ProtocolError):
            return ""
        return f": {lines[-1]}" if lines else ""

    # -- asking it --------------------------------------------------------------------------
    def begin(self, req: Request, retried: bool = False) -> Begun:
        """Send one file's job; the resident's first answer says it began (ResidentLost: it
        died before that; a Failure there is raised as the error it stands for)."""
        sock = self.connect()
        try:
            protocol.send_message(sock, "answer", req)
            kind, value = protocol.receive_message(sock)
        except (ProtocolError, OSError) as exc:
            sock.close()
            raise ResidentLost(str(exc)) from exc
        if kind == "error":
            sock.close()
            if isinstance(value, Failure) and value.kind == "stopping" and not retried:
                self._wait_gone()  # it was told to stop (another version's client, pedit daemon stop)
                return self.begin(req, retried=True)
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
    when nothing listens; _Mismatch when a resident of another version answered."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(str(protocol.socket_path(key)))
        protocol.send_json(sock, protocol.hello(key))
        reply = protocol.receive_json(sock)
    except (ProtocolError, OSError):
        sock.close()
        return None
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
        return sorted(p.stem for p in protocol.runtime_dir().glob("*.sock"))
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
    return LoadSettings(
        model=settings.model, backend=settings.backend, n_ctx=settings.n_ctx, threads=settings.threads,
        speculate_off=settings.speculate == "off",
    )  # fmt: skip
