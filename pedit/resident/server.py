"""The resident process: one model kept loaded for one user and load settings, answering
the requests of pedit's commands over a Unix socket (protocol.py), until it has been idle
for the keep-alive.

    python -m pedit.resident.server '<LoadSettings as JSON>' KEEP_ALIVE_SECONDS

The client starts it (client.py) in its own session, in `/`, with no config layer of its
starter's: each request carries the settings it was made with (the template, the
instruction, the engine's options), and the resident adds only its model and cost model.
It never opens a user's file: the client reads the file, sends its text, and writes the
answer after its own checks.

One request runs at a time (one model); up to QUEUE more wait, and one beyond gets a
Failure("busy"). A status or stop request is answered at once, from its own thread.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from ..identity import build
from . import protocol
from .protocol import Failure, LoadSettings, ProtocolError, Request

QUEUE = 4  # requests that may wait for the model
POLL = 0.1  # seconds between checks of the keep-alive and of a stop (SIGTERM, daemon stop)


@dataclass
class State:
    load: LoadSettings
    keep_alive: float  # seconds idle before it exits; < 0: never
    loaded: object = None  # app.loading.Loaded
    described: dict = field(default_factory=dict)  # the backend's name and device, for the client's legend
    started: float = field(default_factory=time.time)
    last: float = field(default_factory=time.monotonic)  # the last request's end (or start-up)
    waiting: int = 0  # requests waiting for the model, and the one running
    served: int = 0
    stopping: bool = False
    owner: str = ""  # "pedit serve" when a server holds the model (beside()); "" for the resident process
    model_lock: threading.Lock = field(default_factory=threading.Lock)
    count_lock: threading.Lock = field(default_factory=threading.Lock)
    # the model's turn for one request: the lock, or a server's own turn (beside())
    turn: Callable[[], contextlib.AbstractContextManager] | None = None

    def held(self) -> contextlib.AbstractContextManager:
        return self.model_lock if self.turn is None else self.turn()

    def idle(self) -> float:
        return 0.0 if self.waiting else time.monotonic() - self.last

    def status(self) -> dict:
        return {
            "pid": os.getpid(), "version": build(), "model": self.load.model,
            "backend": self.load.backend, "n_ctx": self.load.n_ctx, "threads": self.load.threads,
            "rss_bytes": _rss(), "idle_seconds": round(self.idle(), 1), "busy": self.waiting > 0,
            "queue": max(0, self.waiting - 1), "served": self.served, "keep_alive": self.keep_alive,
            "uptime_seconds": round(time.time() - self.started, 1), "owner": self.owner,
        }  # fmt: skip


def _rss() -> int:
    """The resident's resident set size, in bytes (Linux; 0 where /proc has none)."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
    except (OSError, ValueError, IndexError):
        return 0
    return pages * os.sysconf("SC_PAGE_SIZE")


def load_model(load: LoadSettings):
    """The model and its cost model, from the load settings alone (no config file, no
    environment layer: config.resolve over nothing but them); fix's tools are built while
    it loads, as a command loading its own model builds them (cli/rewrite._here), so that
    the first request does not wait for them after the load."""
    from ..app import config
    from ..app.loading import load_with_cost
    from ..models.progress import quietly
    from ..tools import grammarcheck

    given = {"model": load.model, "backend": load.backend, "n_ctx": load.n_ctx, "threads": load.threads,
             "speculate": "off" if load.speculate_off else "auto"}  # fmt: skip
    settings = config.resolve(given, env={}, path=Path(os.devnull), project=None)
    return quietly(load_with_cost(settings, beside=grammarcheck.warm))


def answer(state: State, conn: socket.socket, req: Request) -> None:
    """Run one request on the model, its events streamed; the client gone (closed, or
    Ctrl-C on its side) stops it at the next event."""
    from ..app import wholefile
    from ..app.answercache import AnswerCache
    from ..app.jobs import Job
    from ..app.refactor import rewrite
    from ..engine.costmodel import repriced
    from ..machine import calibration
    from ..models import cache_root
    from .failures import failure

    # priced again by the passes every request before it made (a new process reads them from the cache)
    loaded = state.loaded = replace(state.loaded, cost=repriced(state.loaded.cost))
    answers = AnswerCache(cache_root() / "answers", limit=req.answer_cache_mb << 20) if req.answer_cache else None
    job = Job(
        backend=loaded.backend, template=req.template, instruction=req.instruction,
        options=req.options.costed(loaded.cost), system=req.system, force=req.force,
        chunk_tokens=req.chunk_tokens, answers=answers,
    )  # fmt: skip
    stream = None
    conn.settimeout(protocol.stall_seconds())  # a client that takes nothing this long is dropped
    try:
        tokens = loaded.backend.count_tokens(req.text) if req.count else None
        pieces = len(job.pieces(req.text, req.name, req.kind)) if req.kind == "summary" else 1
        _send(conn, "ready", {"tokens": tokens, "pieces": pieces})
        if req.kind == "summary":
            stream = wholefile.summarize(job, req.text, req.name)
        else:
            stream = rewrite(job, req.text, req.name, req.spans)
        while True:
            try:
                ev = next(stream)
            except StopIteration as done:
                _send(conn, "outcome", done.value)
                return
            _send(conn, "event", ev)
    except _Gone:
        return  # the client went away, or stopped reading: the request ends here
    except Exception as exc:  # the request's failure, as the client raises it
        with contextlib.suppress(OSError):
            protocol.send_message(conn, "error", failure(exc))
    finally:
        if stream is not None:
            stream.close()
        with contextlib.suppress(Exception):
            calibration.keep(loaded.cost)  # this request's passes, for the next plans


class _Gone(Exception):
    """The client closed the connection, or took nothing for the send deadline."""


def _send(conn: socket.socket, kind: str, value: object) -> None:
    try:
        protocol.send_message(conn, kind, value)
    except OSError as exc:  # closed, reset, or the deadline passed (TimeoutError)
        raise _Gone(str(exc)) from exc


def handle(state: State, conn: socket.socket) -> None:
    """One connection: the peer's user checked (before a byte of it is read), the hello
    (a few kB, in a few seconds), then one message."""
    with conn:
        try:
            if not protocol.peer_is_this_user(conn):
                return  # another user's process: not a byte is read, nothing is said
            conn.settimeout(protocol.HELLO_SECONDS)
            hi = protocol.receive_json(conn)
            if hi.get("version") != build() or hi.get("key") != state.load.key():
                protocol.send_json(conn, {"ok": False, "why": f"pedit {build()} for {state.load.key()}"})
                # another build's client for this key: this one goes, and the client starts its own
                # (a server's stays: that client runs its model in its own process)
                state.stopping = state.stopping or (hi.get("key") == state.load.key() and not state.owner)
                return
            protocol.send_json(conn, {"ok": True, "pid": os.getpid(), "build": build(), **state.described})
            kind, value = protocol.receive_message(conn)
        except (ProtocolError, OSError):
            return
        try:
            if kind == "status":
                protocol.send_message(conn, "status", state.status())
            elif kind == "stop" and state.owner:  # its model is the server's, unloaded with it
                why = f"{state.owner} (pid {os.getpid()}) holds this model: stop it there"
                protocol.send_message(conn, "error", Failure("other", why))
            elif kind == "stop":
                state.stopping = True
                protocol.send_message(conn, "stopped", os.getpid())
            elif kind == "answer" and isinstance(value, Request):
                queued(state, conn, value)
            else:
                protocol.send_message(conn, "error", Failure("other", f"unknown request {kind!r}"))
        except OSError:
            return


def queued(state: State, conn: socket.socket, req: Request) -> None:
    with state.count_lock:
        if state.stopping:  # the client waits for it to go and starts another
            protocol.send_message(conn, "error", Failure("stopping", "the resident model is stopping"))
            return
        if state.waiting > QUEUE:
            full = Failure("busy", f"the resident model has {state.waiting - 1} requests waiting; try again")
            protocol.send_message(conn, "error", full)
            return
        state.waiting += 1
    try:
        with state.held():
            if state.stopping:  # told to stop while it waited: the model may be freed after this turn
                with contextlib.suppress(OSError):
                    protocol.send_message(conn, "error", Failure("stopping", "the resident model is stopping"))
                return
            answer(state, conn, req)
            state.served += 1
    finally:
        with state.count_lock:
            state.waiting -= 1
            state.last = time.monotonic()
            if req.keep_alive is not None and not state.owner:  # a server's lasts as long as it
                state.keep_alive = req.keep_alive


def serve(load: LoadSettings, keep_alive: float) -> int:
    """Hold the key's lock, load the model, listen until idle past the keep-alive (or told
    to stop). Exit 0 when another resident holds the lock (it won the start)."""
    key = load.key()
    lock = _lock(key)
    if lock is None:
        return 0
    state = _STATE["state"] = State(load=load, keep_alive=keep_alive)
    rt = protocol.runtime()
    failed = f"{key}.failed"
    rt.unlink(failed)
    try:
        with lock.beating():
            state.loaded = load_model(load)
    except Exception as exc:  # the client raises it as an in-process load would (same line, same code)
        from .failures import failure

        f = failure(exc)
        rt.write_text(failed, json.dumps(asdict(f)))
        return int(f.code)
    from ..machine import build as machine

    state.described = {"backend": state.loaded.backend.name, "device": machine.device(state.loaded.backend)}
    try:
        listen(state, _listener(key), lock)
    finally:
        state.loaded.close()
    return 0


@dataclass
class Holder:
    """The key's lock, held for the holder's life, and its note: the holder's pid, its
    process's start time and its state ("loading", "ready", "stopping"), which clients read
    to know a resident is alive and what it is doing, without taking the lock. While it
    loads, the note's file is touched every BEAT seconds."""

    fd: int
    key: str

    def say(self, state: str) -> None:
        note = {"pid": os.getpid(), "since": protocol.process_start(os.getpid()), "state": state,
                "build": build()}  # fmt: skip
        with contextlib.suppress(OSError):
            os.pwrite(self.fd, json.dumps(note).encode().ljust(protocol.NOTE_BYTES), 0)

    @contextlib.contextmanager
    def beating(self):
        self.say("loading")
        done = threading.Event()

        def beat():
            while not done.wait(protocol.BEAT):
                with contextlib.suppress(OSError):
                    os.utime(self.fd)

        thread = threading.Thread(target=beat, name="pedit-loading", daemon=True)
        thread.start()
        try:
            yield
        finally:
            done.set()

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.fd)


def _lock(key: str) -> Holder | None:
    """The key's lock, held, or None: another process holds it."""
    fd = protocol.runtime().open(protocol.lock_name(key), os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return Holder(fd, key)


def _listener(key: str) -> socket.socket:
    """The key's socket, bound (a stale one removed: the lock says none is alive), 0600."""
    rt = protocol.runtime()
    name = protocol.socket_name(key)
    rt.unlink(name)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)  # made 0600, never wider for a moment
    try:
        listener.bind(rt.where(name))
    finally:
        os.umask(old)
    listener.listen(16)
    listener.settimeout(POLL)
    return listener


def listen(state: State, listener: socket.socket, lock: Holder) -> None:
    """Answer each connection in a thread of its own until idle past the keep-alive, or
    told to stop (`pedit daemon stop`, SIGTERM, another build's client); the running
    request ends first, then the socket is removed."""
    name = protocol.socket_name(state.load.key())
    state.last = time.monotonic()
    lock.say("ready")
    try:
        while not state.stopping and (state.keep_alive < 0 or state.idle() < state.keep_alive):
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            conn.settimeout(None)
            threading.Thread(target=handle, args=(state, conn), daemon=True).start()
        state.stopping = True
        lock.say("stopping")
        with state.held():  # the request running ends first (those waiting are turned away)
            pass
    finally:
        protocol.runtime().unlink(name)  # ours: only the lock's holder binds it
        listener.close()


class Beside:
    """A model loaded by another shell (`pedit serve`) answering the commands' requests as
    the resident process would, from a thread of its own, for as long as that shell runs:
    `turn` gives it the model between the shell's own requests. close() stops it (its
    running request first) and frees the key."""

    def __init__(self, state: State, lock: Holder, listener: socket.socket):
        self.state, self._lock = state, lock
        self._thread = threading.Thread(
            target=listen, args=(state, listener, lock), name="pedit-resident", daemon=True
        )
        self._thread.start()

    def close(self) -> None:
        """Stop answering; return once no request runs or waits on the model (the caller
        frees it next). A request's sends have their deadline, so this ends."""
        self.state.stopping = True
        self._thread.join()
        while self.state.waiting:
            time.sleep(0.02)
        self._lock.close()


STOP_WAIT = 30.0  # seconds a resident process of the same key may take to go when a server takes its place


def beside(loaded, load: LoadSettings, turn, owner: str, say=lambda line: None) -> Beside | None:
    """Answer the commands whose load settings are `load` with `loaded` (app.loading.Loaded),
    taking the model's `turn` for each request; a resident process of the same key is asked
    to stop first (its running request ends), so that one copy of the model is loaded.
    None (said in one line) when the key cannot be taken: the commands then start their own."""
    from ..machine import build
    from .client import ResidentUnavailable, ask

    key = load.key()
    try:
        lock = _lock(key)
        if lock is None:
            with contextlib.suppress(ResidentUnavailable):
                ask(key, "stop")
            deadline = time.monotonic() + STOP_WAIT
            while (lock := _lock(key)) is None and time.monotonic() < deadline:
                time.sleep(0.05)
        if lock is None:
            say("pedit: a resident model of these settings did not stop; pedit commands keep using it")
            return None
        listener = _listener(key)
    except (ProtocolError, OSError) as exc:
        say(f"pedit: pedit commands cannot use this server's model ({exc})")
        return None
    state = State(load=load, keep_alive=-1.0, loaded=loaded, owner=owner, turn=turn)
    state.described = {"backend": loaded.backend.name, "device": build.device(loaded.backend)}
    return Beside(state, lock, listener)


_STATE: dict[str, State] = {}  # the resident process's state, once it has one (SIGTERM's)


def _terminated(signum, frame) -> None:
    """SIGTERM: stop as `pedit daemon stop` asks (the running request first); while the
    model loads, no request runs: exit at once."""
    state = _STATE.get("state")
    if state is None or state.loaded is None:
        sys.exit(143)
    state.stopping = True


def main(argv: list[str]) -> int:
    signal.signal(signal.SIGHUP, signal.SIG_IGN)  # its starter's terminal closing is not its end
    signal.signal(signal.SIGTERM, _terminated)
    load = LoadSettings(**json.loads(argv[1]))
    return serve(load, float(argv[2]))


if __name__ == "__main__":
    sys.exit(main(sys.argv))
