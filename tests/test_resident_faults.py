"""Issue 69: the resident model under faults, neighbours and strangers, with real processes
(the CLI as a user runs it, the resident process, other users' processes where the tests
run as root). A command outlives its resident; the resident trusts only its user; nothing
is freed under a request or held forever."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from test_resident import ESSAY, PEDIT, REF, _connect_as, alive, daemons, gone, pedit, runtime  # noqa: F401

from pedit.app import config
from pedit.resident import protocol
from pedit.resident.client import resident_for

NOBODY = 65534
as_root = pytest.mark.skipif(os.getuid() != 0, reason="another user's process needs root")


def holder_pid(state: str = "ready") -> int | None:
    """The pid in the resident's lock note (protocol.holder) when it is in `state`."""
    keys = [n.removesuffix(".lock") for n in protocol.runtime().names() if n.endswith(".lock")]
    for k in keys:
        note = protocol.holder(k)
        if note is not None and note["state"] == state:
            return note["pid"]
    return None


def many(tmp_path: Path, n: int = 120) -> list[str]:
    names = []
    for i in range(n):
        name = f"s{i:03}.txt"
        (tmp_path / name).write_text(f"Their is a eror in sentence {i}.\n")
        names.append(name)
    return names


def records(stdout: str) -> list[dict]:
    return [{k: r.get(k) for k in ("file", "changed", "written", "error")} for r in json.loads(stdout)]


@pytest.fixture(scope="module")
def alone(tmp_path_factory) -> list[dict]:
    """The 120 files' records from a command that loads its own model (no resident)."""
    where = tmp_path_factory.mktemp("alone")
    names = many(where)
    done = pedit("fix", *names, "--json", *REF, cwd=where, PEDIT_KEEP_ALIVE="0", PEDIT_ANSWER_CACHE="off")
    assert done.returncode == 0, done.stderr
    return records(done.stdout)


@pytest.mark.parametrize("fault", ["killed", "stopped"])
def test_a_command_of_120_files_outlives_its_resident(tmp_path, runtime, fault, alone):
    """Case 1 of the issue: while `pedit fix` runs over 120 files, its resident is killed
    (SIGKILL, then `pedit daemon stop` every second), or stopped (SIGSTOP) for 30 s. Every
    file is answered, the same records as a command with no resident, exit 0, no internal
    error: the files left run in the command's own process."""
    names = many(tmp_path)
    args = ["fix", *names, "--json", *REF]
    proc = subprocess.Popen([*PEDIT, *args], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)  # fmt: skip
    stopped: list[int] = []

    def hostile():
        while proc.poll() is None and holder_pid() is None:
            time.sleep(0.05)
        time.sleep(1.0)  # ready, and some files answered by it
        pid = holder_pid()
        if pid is None:
            return
        if fault == "killed":
            os.kill(pid, signal.SIGKILL)
            while proc.poll() is None:
                subprocess.run([*PEDIT, "daemon", "stop"], capture_output=True, timeout=60)
                time.sleep(1.0)
        else:
            os.kill(pid, signal.SIGSTOP)
            stopped.append(pid)
            deadline = time.monotonic() + 30
            while proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.1)
            os.kill(pid, signal.SIGCONT)

    thread = threading.Thread(target=hostile)
    thread.start()
    out, err = proc.communicate(timeout=600)
    thread.join()
    assert proc.returncode == 0, err
    assert "internal error" not in err
    if fault == "killed":  # stopped, it may have been mid-request: its client waits for it
        assert "run in this process" in err or "stopped in the middle" in err
    assert records(out) == alone and len(alone) == 120


def test_a_model_given_by_a_relative_path_is_the_resident_s_too(tmp_path, runtime, tiny_gguf):
    """Case 2: `-m ./m.gguf` in the file's folder; the resident (in `/`) is told its
    absolute path, and answers as a command that loads it itself."""
    shutil.copy(tiny_gguf, tmp_path / "m.gguf")
    (tmp_path / "a.md").write_text(ESSAY)
    args = ["fix", "a.md", "-m", "./m.gguf", "--stdout"]
    alone = pedit(*args, cwd=tmp_path, PEDIT_KEEP_ALIVE="0")
    there = pedit(*args, cwd=tmp_path)  # the tiny random model's answer: whatever it is, the same
    assert alone.returncode == there.returncode and there.stdout == alone.stdout
    assert there.stderr.splitlines()[-1] == alone.stderr.splitlines()[-1] and "this process" not in there.stderr
    (found,) = daemons()
    assert found["model"] == str(tmp_path / "m.gguf")


def test_a_path_that_does_not_exist_here_is_the_command_s_own_error(tmp_path, runtime):
    done = pedit("fix", "a.md", "-m", "./none.gguf", "--stdout", cwd=tmp_path)
    alone = pedit("fix", "a.md", "-m", "./none.gguf", "--stdout", cwd=tmp_path, PEDIT_KEEP_ALIVE="0")
    assert done.returncode == alone.returncode
    assert done.stderr.strip().splitlines()[-1] == alone.stderr.strip().splitlines()[-1]
    assert daemons() == []


def _listen_as(uid: int, where: Path, ready: Path) -> int:
    """A child of user `uid` that listens on a Unix socket at `where` (in a folder it owns)
    and writes to `ready` what it is sent, until killed; its pid."""
    pid = os.fork()
    if pid == 0:
        try:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                s.bind(str(where))
                s.listen(4)
                ready.write_bytes(b"")
                while True:
                    conn, _ = s.accept()
                    conn.settimeout(3)
                    got = b""
                    try:
                        while chunk := conn.recv(4096):
                            got += chunk
                    except OSError:
                        pass
                    with open(ready, "ab") as f:
                        f.write(b"connection:" + got + b"\n")
        finally:
            os._exit(0)
    return pid


@as_root
def test_a_socket_of_another_user_is_never_sent_a_byte(tmp_path, runtime):
    """Case 4, the client's end: another user's process listening at the resident's socket
    (moved there by root, beside a live holder of the key's lock) is seen by SO_PEERCRED
    before the hello: the command says so and runs in its own process; the stranger gets
    no byte."""
    (tmp_path / "a.md").write_text(ESSAY)
    want = pedit("fix", "a.md", "--stdout", *REF, cwd=tmp_path, PEDIT_KEEP_ALIVE="0").stdout
    load = resident_for(config.resolve({"backend": "reference"}))
    theirs = Path(tempfile_dir(tmp_path))
    pid = _listen_as(NOBODY, theirs / "s.sock", theirs / "got")
    rt = protocol.runtime()
    hold = subprocess.Popen([sys.executable, "-c", _HOLD, rt.path.as_posix(), load.key()])
    try:
        deadline = time.monotonic() + 30
        while (not (theirs / "got").exists() or protocol.holder(load.key()) is None) and time.monotonic() < deadline:
            time.sleep(0.05)
        os.rename(theirs / "s.sock", rt.path / protocol.socket_name(load.key()))
        done = pedit("fix", "a.md", "--stdout", *REF, cwd=tmp_path)
    finally:
        hold.kill()
        hold.wait()
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        got = (theirs / "got").read_bytes()
        shutil.rmtree(theirs)
    assert done.returncode == 0 and done.stdout == want
    assert "another user's" in done.stderr and "this process" in done.stderr
    assert got in (b"", b"connection:\n")


# a process that holds a key's lock and says it is ready (as a resident would), for as long as it lives
_HOLD = """
import fcntl, json, os, sys, time
from pedit.resident import protocol
fd = os.open(os.path.join(sys.argv[1], sys.argv[2] + ".lock"), os.O_RDWR | os.O_CREAT, 0o600)
fcntl.flock(fd, fcntl.LOCK_EX)
state = sys.argv[3] if len(sys.argv) > 3 else "ready"
note = {"pid": os.getpid(), "since": protocol.process_start(os.getpid()), "state": state}
os.pwrite(fd, json.dumps(note).encode().ljust(protocol.NOTE_BYTES), 0)
if state == "loading":
    os.utime(fd, (time.time() - 600, time.time() - 600))
time.sleep(600)
"""


def tempfile_dir(tmp_path: Path) -> str:
    """A folder the other user owns, in /tmp (which they can reach; their socket is made
    there), removed after the test with tmp_path."""
    import tempfile

    where = tempfile.mkdtemp(prefix="theirs", dir="/tmp")
    os.chown(where, NOBODY, NOBODY)
    (tmp_path / "theirs").symlink_to(where)
    return where


@as_root
def test_the_resident_reads_nothing_from_another_user(tmp_path, runtime):
    """Case 4, the resident's end: its socket made reachable to another user (a link to it
    in an open folder, the socket opened to all), that user's process sends a hello and a
    pickle that would write a file: the resident closes the connection having read
    nothing, and answers its user as before."""
    (tmp_path / "a.md").write_text(ESSAY)
    assert pedit("fix", "a.md", "--stdout", *REF, cwd=tmp_path).returncode == 0
    (found,) = daemons()
    (sock,) = [runtime / "pedit" / n for n in os.listdir(runtime / "pedit") if n.endswith(".sock")]
    import tempfile

    open_dir = Path(tempfile.mkdtemp(prefix="open", dir="/tmp"))  # reachable by anyone, as /tmp is
    open_dir.chmod(0o777)
    os.link(sock, open_dir / "s.sock")
    (open_dir / "s.sock").chmod(0o777)
    marker = open_dir / "pwned"
    code = _send_as(NOBODY, open_dir / "s.sock", found, marker)
    assert code == "closed unanswered"
    assert not marker.exists() and alive(found["pid"])
    shutil.rmtree(open_dir)
    again = pedit("fix", "a.md", "--stdout", *REF, cwd=tmp_path)
    assert again.returncode == 0 and "this process" not in again.stderr


def _send_as(uid: int, sock: Path, found: dict, marker: Path) -> str:
    import pickle

    class Pwn:
        def __reduce__(self):
            return (open, (str(marker), "w"))

    pid = os.fork()
    if pid == 0:
        code = 3
        try:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                s.settimeout(10)
                s.connect(str(sock))
                hello = json.dumps({"version": found["version"], "key": found.get("key", "")}).encode()
                protocol.send(s, hello)
                protocol.send(s, pickle.dumps(("answer", Pwn())))
                try:
                    code = 0 if s.recv(1) == b"" else 1
                except (ConnectionResetError, BrokenPipeError):
                    code = 0
        except (ConnectionResetError, BrokenPipeError):
            code = 0  # closed while it sent
        except OSError:
            code = 2
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return {0: "closed unanswered", 1: "answered", 2: "refused"}.get(os.waitstatus_to_exitcode(status), "?")


def test_a_folder_above_the_runtime_folder_that_others_may_write_is_refused(tmp_path, monkeypatch):
    """Case 4's folders: the runtime folder under a parent writable by all and not sticky
    (platformdirs 4.14 refuses such an XDG_RUNTIME_DIR itself and falls back to /tmp;
    older ones return it, as this one is made to) is refused: no resident, and the command
    says why in one line. Under a sticky one (as /tmp) it is used."""
    import platformdirs

    run = tmp_path / "run"
    run.mkdir()
    run.chmod(0o777)
    monkeypatch.setattr(platformdirs, "user_runtime_dir", lambda name: str(run / name))
    with pytest.raises(protocol.ProtocolError, match="writable by others"):
        protocol.runtime()
    assert not (run / "pedit").exists()
    run.chmod(0o1777)
    assert protocol.runtime().path == run / "pedit"


def test_a_linked_runtime_folder_is_refused(tmp_path, monkeypatch):
    run = tmp_path / "run"
    run.mkdir(mode=0o700)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    (run / "pedit").symlink_to(elsewhere)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(run))
    with pytest.raises(protocol.ProtocolError, match="not a private directory"):
        protocol.runtime()


def test_a_planted_answer_in_a_cache_others_may_write_is_never_used(tmp_path, runtime):
    """Case 5: an entry rewritten by someone else in a group-writable answer cache, and one
    replaced by a link: neither is served; the model answers."""
    (tmp_path / "a.md").write_text(ESSAY)
    on = {"PEDIT_ANSWER_CACHE": "on", "PEDIT_KEEP_ALIVE": "0"}
    first = pedit("fix", "a.md", "--stdout", *REF, cwd=tmp_path, **on)
    assert first.returncode == 0
    answers = Path(os.environ["XDG_CACHE_HOME"]) / "pedit" / "answers"
    (entry,) = answers.glob("*/*.json")
    planted = json.loads(entry.read_text()) | {"text": "rm -rf / # planted\n"}
    entry.write_text(json.dumps(planted))
    answers.chmod(0o770)
    done = pedit("fix", "a.md", "--stdout", *REF, cwd=tmp_path, **on)
    assert done.returncode == 0 and done.stdout == first.stdout
    assert "the answer cache is not used" in done.stderr and "writable by others" in done.stderr
    answers.chmod(0o700)
    (tmp_path / "elsewhere.json").write_text(json.dumps(planted))
    entry.unlink()
    entry.symlink_to(tmp_path / "elsewhere.json")
    done = pedit("fix", "a.md", "--stdout", *REF, cwd=tmp_path, **on)
    assert done.returncode == 0 and done.stdout == first.stdout and "answered before" not in done.stderr


def test_the_answer_cache_keeps_its_bound_least_recently_used_out(tmp_path):
    from pedit.models.entrystore import EntryStore

    store = EntryStore(tmp_path / "answers", "the answer cache", limit=10_000, warn=pytest.fail)
    keys = [f"{i:02x}" + "0" * 62 for i in range(20)]
    for i, key in enumerate(keys):
        store.write(key, "x" * 1000)
        os.utime(store.directory / key[:2] / f"{key}.json", (1000 + i, 1000 + i))  # written in order
        if i == 5:
            assert store.read(keys[0]) == "x" * 1000  # used: now the most recent
    count, size = store.size()
    assert size <= 10_000 and count < 20
    assert store.read(keys[0]) is not None and store.read(keys[-1]) is not None and store.read(keys[1]) is None
    (store.directory / "ff").mkdir()
    big = store.directory / "ff" / ("ff" + "0" * 62 + ".json")
    big.write_bytes(b"x" * (16 * 1024 * 1024 + 1))
    assert store.read("ff" + "0" * 62) is None  # longer than an entry may be


def test_sigterm_lets_the_running_request_finish(tmp_path, runtime):
    """Case 6: SIGTERM in the middle of a request stops the resident as `daemon stop`
    does: the request ends first (the command is answered by it, not run again here), then
    the resident exits."""
    text = "\n\n".join(f"Paragraph {i}: their is a eror in this sentance." for i in range(120)) + "\n"
    (tmp_path / "long.md").write_text(text)
    (tmp_path / "a.md").write_text(ESSAY)
    assert pedit("fix", "a.md", "--stdout", *REF, cwd=tmp_path).returncode == 0
    (found,) = daemons()
    proc = subprocess.Popen([*PEDIT, "fix", "long.md", "--stdout", *REF], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    deadline = time.monotonic() + 60
    while not daemons()[0]["busy"] and time.monotonic() < deadline:  # the request is running
        time.sleep(0.1)
    os.kill(found["pid"], signal.SIGTERM)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0 and out == text
    assert "stopped in the middle" not in err and "this process" not in err
    assert gone(found["pid"])


def test_a_client_that_stops_reading_is_dropped_at_the_deadline(tmp_path, runtime):
    """Case 7: a client asks for a long file's answer and is stopped (SIGSTOP) without
    reading it; the resident drops it after the send deadline (PEDIT_STALL_SECONDS, 3 s
    here), and the next command is answered by the resident within that and its own time."""
    text = "\n\n".join(f"Paragraph {i}: their is a eror in this sentance." for i in range(600)) + "\n"
    (tmp_path / "long.md").write_text(text)
    (tmp_path / "a.md").write_text(ESSAY)
    stall = {"PEDIT_STALL_SECONDS": "3"}
    assert pedit("fix", "a.md", "--stdout", *REF, cwd=tmp_path, **stall).returncode == 0
    reader = subprocess.Popen([sys.executable, "-c", _STALLED, str(tmp_path / "long.md")], cwd=tmp_path,
                              stdout=subprocess.PIPE, env=os.environ | stall)  # fmt: skip
    assert reader.stdout.readline().strip() == b"began"
    os.kill(reader.pid, signal.SIGSTOP)
    try:
        time.sleep(1.0)
        t0 = time.monotonic()
        done = pedit("fix", "a.md", "--stdout", *REF, cwd=tmp_path, **stall)
        took = time.monotonic() - t0
    finally:
        os.kill(reader.pid, signal.SIGKILL)
        reader.wait()
    assert done.returncode == 0 and "this process" not in done.stderr
    assert took < 3 + 20
    (found,) = daemons()
    assert found["served"] >= 2


# a client that begins a long file's request and never reads the answer
_STALLED = """
import sys
from pathlib import Path
from pedit.app import config
from pedit.app.options import EngineOptions
from pedit.resident.client import Resident, resident_for
from pedit.resident.protocol import Request
settings = config.resolve({"backend": "reference"})
template = settings.prompt_templates()["fix"]
req = Request(kind="rewrite", template=template, instruction=None, options=settings.engine_options(EngineOptions()),
              system=None, force=False, chunk_tokens=None, text=Path(sys.argv[1]).read_text(), name="long.md")
begun = Resident(resident_for(settings), 120).begin(req)
print("began", flush=True)
import time
time.sleep(600)
"""


def test_a_resident_stuck_loading_is_seen_from_its_note_and_the_command_goes_on(tmp_path, runtime):
    """Case 8: a process holds the key's lock and says it is loading, and has not touched
    its note for minutes: the command does not wait 15 minutes, nor take the lock; it
    says so and loads the model itself."""
    (tmp_path / "a.md").write_text(ESSAY)
    load = resident_for(config.resolve({"backend": "reference"}))
    rt = protocol.runtime()
    hold = subprocess.Popen([sys.executable, "-c", _HOLD, rt.path.as_posix(), load.key(), "loading"])
    try:
        deadline = time.monotonic() + 30
        while protocol.holder(load.key()) is None and time.monotonic() < deadline:
            time.sleep(0.05)
        t0 = time.monotonic()
        done = pedit("fix", "a.md", "--stdout", *REF, cwd=tmp_path)
        took = time.monotonic() - t0
        assert hold.poll() is None  # its lock was never taken from it
    finally:
        hold.kill()
        hold.wait()
    assert done.returncode == 0 and "stuck loading" in done.stderr and "this process" in done.stderr
    assert took < 60


def test_a_request_waiting_when_the_resident_is_told_to_stop_is_turned_away():
    """Case 6: a request queued behind the running one, when `stopping` is set, gets
    "stopping" (its client goes elsewhere) instead of the model, which may be freed next."""
    from pedit.resident import server
    from pedit.resident.protocol import Request

    state = server.State(load=resident_for(config.resolve({"backend": "reference"})), keep_alive=60)
    a, b = socket.socketpair()
    req = Request(kind="rewrite", template=None, instruction=None, options=None, system=None, force=False,
                  chunk_tokens=None, text="x", name="a.md")  # fmt: skip
    with state.model_lock:  # the running request
        t = threading.Thread(target=server.queued, args=(state, a, req))
        t.start()
        time.sleep(0.2)
        state.stopping = True
    t.join(timeout=10)
    kind, failure = protocol.receive_message(b)
    assert (kind, failure.kind, state.served) == ("error", "stopping", 0)


def test_commands_at_once_on_a_model_that_does_not_load_each_fail_at_once(tmp_path, runtime):
    """Three commands start together on a model file that is no model: the one that starts
    the resident, and the two waiting for it, each end with the load's own error and exit
    code (as without a resident), none waiting on another's retries."""
    (tmp_path / "bad.gguf").write_bytes(b"GGUF" + b"\0" * 64)
    (tmp_path / "a.md").write_text(ESSAY)
    args = [*PEDIT, "fix", "a.md", "-m", "./bad.gguf", "--stdout"]
    alone = pedit(*args[3:], cwd=tmp_path, PEDIT_KEEP_ALIVE="0")
    t0 = time.monotonic()
    procs = [subprocess.Popen(args, cwd=tmp_path, stderr=subprocess.PIPE, text=True) for _ in range(3)]
    errs = [p.communicate(timeout=300)[1] for p in procs]
    took = time.monotonic() - t0
    assert [p.returncode for p in procs] == [alone.returncode] * 3 and alone.returncode == 3
    # the same line, the model named by the path the resident was given (absolute: it runs in /)
    lines = {e.strip().splitlines()[-1].replace(str(tmp_path / "bad.gguf"), "./bad.gguf", 1) for e in errs}
    assert lines == {alone.stderr.strip().splitlines()[-1]}
    assert took < 120
