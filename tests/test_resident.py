"""Issue 56: the resident model. Real processes and a real Unix socket: the CLI as a user
runs it (a new process per command), the resident process the first command starts, and
`pedit daemon`. Answers are compared on the reference backend (its answer depends only on
the prefix, so the resident's must equal an in-process run's exactly); the tiny llama.cpp
model shows the real backend resident."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from pedit.app import config
from pedit.resident import protocol
from pedit.resident.client import resident_for

PEDIT = [sys.executable, "-m", "pedit"]
REF = ["-b", "reference"]
ESSAY = "Their is a eror in this sentence.\n\nAnother paragraph, with a typo.\n"


@pytest.fixture
def runtime(monkeypatch):
    """A short runtime directory (a socket's path has at most 107 bytes), the resident on;
    every resident the test started is stopped after it."""
    run = Path(tempfile.mkdtemp(prefix="pr", dir="/tmp"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(run))
    monkeypatch.setenv("PEDIT_KEEP_ALIVE", "120")
    monkeypatch.setenv("PEDIT_ANSWER_CACHE", "off")  # the resident runs its model each time (a test turns it on)
    yield run
    subprocess.run([*PEDIT, "daemon", "stop"], capture_output=True, timeout=60)
    shutil.rmtree(run, ignore_errors=True)


def pedit(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*PEDIT, *args], cwd=cwd, capture_output=True, text=True, timeout=300, env=os.environ | env
    )


def answer(stdout: str, as_json: bool) -> str:
    """The command's answer: --json's records without their figures (times differ)."""
    if not as_json:
        return stdout
    return json.dumps([{k: v for k, v in r.items() if k != "stats"} for r in json.loads(stdout)])


def daemons() -> list[dict]:
    done = subprocess.run([*PEDIT, "daemon", "status", "--json"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def alive(pid: int) -> bool:
    """Running (a process killed but not yet reaped by its parent, a zombie, is not)."""
    try:
        os.kill(pid, 0)
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (ProcessLookupError, FileNotFoundError):
        return False
    return state not in ("Z", "X")


def gone(pid: int, within: float = 30.0) -> bool:
    deadline = time.monotonic() + within
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not alive(pid)


@pytest.mark.parametrize(
    "args",
    [
        ["fix", "a.md", "--stdout"],
        ["edit", "a.md", "Make it formal.", "--stdout"],
        ["summarize", "a.md"],
        ["fix", "a.md", "--json"],
    ],
)
def test_the_resident_answers_as_a_model_loaded_in_the_command_would(tmp_path, runtime, args):
    (tmp_path / "a.md").write_text(ESSAY)
    here = pedit(*args, *REF, cwd=tmp_path, PEDIT_KEEP_ALIVE="0")
    there = pedit(*args, *REF, cwd=tmp_path)
    again = pedit(*args, *REF, cwd=tmp_path)  # the same resident, its caches warm
    answers = {(d.returncode, answer(d.stdout, "--json" in args)) for d in (here, there, again)}
    assert len(answers) == 1
    (found,) = daemons()
    assert found["served"] == 2 and found["backend"] == "reference" and found["version"]


def test_a_written_file_is_the_same_and_the_resident_never_opens_it(tmp_path, runtime):
    for d in ("here", "there"):
        (tmp_path / d).mkdir()
        (tmp_path / d / "a.md").write_text(ESSAY)
    assert pedit("fix", "a.md", "-y", *REF, cwd=tmp_path / "here", PEDIT_KEEP_ALIVE="0").returncode == 0
    assert pedit("fix", "a.md", "-y", *REF, cwd=tmp_path / "there").returncode == 0
    assert (tmp_path / "there" / "a.md").read_bytes() == (tmp_path / "here" / "a.md").read_bytes()
    (found,) = daemons()
    opened = [os.readlink(f"/proc/{found['pid']}/fd/{fd}") for fd in os.listdir(f"/proc/{found['pid']}/fd")]
    assert not [p for p in opened if str(tmp_path) in p]
    assert Path(f"/proc/{found['pid']}/cwd").resolve() == Path("/")  # not its starter's directory


def test_the_tiny_llama_cpp_model_stays_loaded_between_commands(tmp_path, runtime, tiny_gguf):
    (tmp_path / "a.md").write_text(ESSAY)
    args = ["fix", "a.md", "--stdout", "-m", str(tiny_gguf), "-b", "llama.cpp", "--max-tokens", "8"]
    first = pedit(*args, "--stats-json", "s1.json", cwd=tmp_path)
    second = pedit(*args, "--stats-json", "s2.json", cwd=tmp_path)
    assert first.returncode in (0, 5) and second.returncode == first.returncode, first.stderr + second.stderr
    (found,) = daemons()
    assert found["served"] == 2 and found["backend"] == "llama.cpp" and found["rss_bytes"] > 0
    assert found["model"] == str(tiny_gguf) and not found["busy"] and found["queue"] == 0
    stats = json.loads((tmp_path / "s2.json").read_text())
    assert stats["device"].startswith("cpu")  # the resident's backend, named as an in-process run names it


def test_the_prompts_shared_start_stays_in_memory(tmp_path, runtime):
    """The second command reads none of the start its prompt shares with the first (chat
    template, system prompt, instruction): the resident holds it in memory. The file's part
    is read again, as every command reads it (jobs.Job._events: what ran before never
    changes how a prompt is read)."""
    (tmp_path / "a.md").write_text(ESSAY)
    (tmp_path / "b.md").write_text(ESSAY.replace("typo.", "typo!"))
    args = ["edit", "Make it formal.", "--stdout", *REF, "--no-prompt-cache"]  # none on disk
    first = pedit(args[0], "a.md", *args[1:], "--stats-json", "1.json", cwd=tmp_path)
    second = pedit(args[0], "b.md", *args[1:], "--stats-json", "2.json", cwd=tmp_path)
    assert first.returncode == second.returncode == 0
    one, two = (json.loads((tmp_path / f"{i}.json").read_text()) for i in (1, 2))
    assert one["cached_tokens"] == 0 < two["cached_tokens"] < two["prompt_tokens"]


def test_status_shows_it_and_stop_stops_it(tmp_path, runtime):
    (tmp_path / "a.md").write_text(ESSAY)
    assert daemons() == []
    assert pedit("fix", "a.md", "--stdout", *REF, cwd=tmp_path).returncode == 0
    (found,) = daemons()
    assert found["keep_alive"] == 120 and found["idle_seconds"] >= 0
    wide = os.environ | {"COLUMNS": "200"}
    shown = subprocess.run([*PEDIT, "daemon", "status"], capture_output=True, text=True, timeout=60, env=wide)
    assert str(found["pid"]) in shown.stdout and "reference" in shown.stdout
    stopped = subprocess.run([*PEDIT, "daemon", "stop"], capture_output=True, text=True, timeout=60)
    assert stopped.stdout.strip() == "stopped 1 resident model"
    assert gone(found["pid"]) and daemons() == []
    assert not list(runtime.glob("pedit/*.sock"))


def test_it_exits_after_the_keep_alive(tmp_path, runtime):
    (tmp_path / "a.md").write_text(ESSAY)
    assert pedit("fix", "a.md", "--stdout", *REF, cwd=tmp_path, PEDIT_KEEP_ALIVE="1s").returncode == 0
    (found,) = daemons()
    assert found["keep_alive"] == 1 and gone(found["pid"], within=20)


def test_keep_alive_zero_starts_no_resident(tmp_path, runtime):
    (tmp_path / "a.md").write_text(ESSAY)
    assert pedit("fix", "a.md", "--stdout", *REF, cwd=tmp_path, PEDIT_KEEP_ALIVE="0").returncode == 0
    assert daemons() == [] and not list(runtime.glob("pedit/*.sock"))


def test_a_bad_keep_alive_is_a_usage_error(tmp_path, runtime):
    (tmp_path / "a.md").write_text(ESSAY)
    done = pedit("fix", "a.md", "--stdout", *REF, cwd=tmp_path, PEDIT_KEEP_ALIVE="soon")
    assert done.returncode == 2
    assert done.stderr.strip().endswith(
        "env PEDIT_KEEP_ALIVE: must be seconds or a duration like 90s, 5m, 2h (got 'soon')"
    )


def test_a_stale_socket_is_removed_and_a_new_resident_answers(tmp_path, runtime):
    (tmp_path / "a.md").write_text(ESSAY)
    expected = pedit("fix", "a.md", "--stdout", *REF, cwd=tmp_path, PEDIT_KEEP_ALIVE="0").stdout
    assert pedit("fix", "a.md", "--stdout", *REF, cwd=tmp_path).returncode == 0
    (old,) = daemons()
    os.kill(old["pid"], signal.SIGKILL)
    assert gone(old["pid"]) and list(runtime.glob("pedit/*.sock"))  # left behind
    done = pedit("fix", "a.md", "--stdout", *REF, cwd=tmp_path)
    assert done.returncode == 0 and done.stdout == expected
    assert "removed a stale resident socket" in done.stderr
    (new,) = daemons()
    assert new["pid"] != old["pid"]


def test_two_clients_starting_at_once_end_with_one_resident(tmp_path, runtime):
    (tmp_path / "a.md").write_text(ESSAY)
    expected = pedit("fix", "a.md", "--stdout", *REF, cwd=tmp_path, PEDIT_KEEP_ALIVE="0").stdout
    both = [
        subprocess.Popen([*PEDIT, "fix", "a.md", "--stdout", *REF], cwd=tmp_path, stdout=subprocess.PIPE)
        for _ in range(2)
    ]
    outs = [p.communicate(timeout=300)[0].decode() for p in both]
    assert [p.returncode for p in both] == [0, 0] and outs == [expected, expected]
    (found,) = daemons()
    assert found["served"] == 2


def another_build(tmp_path: Path) -> dict:
    """pedit's package copied with one source file changed (a comment added), as a `git
    pull` of one commit leaves an editable install: the environment that runs it."""
    import pedit

    copy = tmp_path / "build2"
    shutil.copytree(Path(pedit.__file__).parent, copy / "pedit", ignore=shutil.ignore_patterns("__pycache__"))
    with open(copy / "pedit" / "engine" / "decode.py", "a") as f:
        f.write("\n# a line of a newer commit\n")
    return {"PYTHONPATH": str(copy)}


def test_a_resident_and_the_answers_of_another_build_are_not_used(tmp_path, runtime):
    """One source file changed, the version string the same: the old build's resident
    stops and this build's starts, and no answer the old build kept is served."""
    from pedit import identity

    (tmp_path / "a.md").write_text(ESSAY)
    (tmp_path / "b.md").write_text(ESSAY)
    env = {"PEDIT_ANSWER_CACHE": "on"}
    expected = pedit("fix", "a.md", "--stdout", *REF, cwd=tmp_path, PEDIT_KEEP_ALIVE="0").stdout
    first = pedit("fix", "a.md", "--stdout", *REF, cwd=tmp_path, **env)
    assert first.returncode == 0 and first.stdout == expected
    (old,) = daemons()
    assert old["version"] == identity.build()
    again = pedit("fix", "a.md", "--stdout", *REF, cwd=tmp_path, **env)
    assert "answered before" in again.stderr  # the old build's answer is kept, for the old build
    newer = another_build(tmp_path)
    done = pedit("fix", "a.md", "--stdout", *REF, cwd=tmp_path, **env, **newer)
    assert done.returncode == 0 and done.stdout == expected
    assert "another pedit build" in done.stderr, done.stderr
    assert "answered before" not in done.stderr  # the newer build ran its model
    assert gone(old["pid"])
    status = pedit("daemon", "status", "--json", cwd=tmp_path, **newer)  # not in this tree: its pedit first
    (found,) = json.loads(status.stdout)
    assert found["pid"] != old["pid"]
    assert found["version"].split("+")[0] == old["version"].split("+")[0] and found["version"] != old["version"]


def test_a_model_that_does_not_load_fails_as_it_does_without_a_resident(tmp_path, runtime):
    (tmp_path / "a.md").write_text(ESSAY)
    args = ["fix", "a.md", "--stdout", "-b", "llama.cpp", "-m", str(tmp_path / "missing.gguf")]
    here = pedit(*args, cwd=tmp_path, PEDIT_KEEP_ALIVE="0")
    there = pedit(*args, cwd=tmp_path)
    assert here.returncode == there.returncode == 3
    assert there.stderr.strip().splitlines()[-1] == here.stderr.strip().splitlines()[-1]
    assert daemons() == []


def test_a_resident_killed_mid_request_leaves_the_file_to_this_process(tmp_path, runtime, monkeypatch):
    """The client says so in one line and runs the file here: the same answer, written
    after its checks as ever."""
    from typer.testing import CliRunner

    from pedit.cli.app import app
    from pedit.resident import client

    (tmp_path / "a.md").write_text(ESSAY)
    (tmp_path / "b.md").write_text(ESSAY)
    assert pedit("fix", "b.md", "-y", *REF, cwd=tmp_path, PEDIT_KEEP_ALIVE="0").returncode == 0
    begin = client.Resident.begin

    def killed(self, req):
        begun = begin(self, req)
        os.kill(self.info["pid"], signal.SIGKILL)  # it began, and dies before its answer
        gone(self.info["pid"])
        return begun

    monkeypatch.setattr(client.Resident, "begin", killed)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["fix", "a.md", "-y", *REF])
    assert result.exit_code == 0, result.output
    assert "the resident model stopped in the middle of a.md" in result.output
    assert (tmp_path / "a.md").read_bytes() == (tmp_path / "b.md").read_bytes()


CODE = "def total(xs):\n    s = 0\n    for x in xs:\n        s += x\n    return s\n"


@pytest.mark.parametrize(
    ("name", "text", "argv"),
    [("a.md", ESSAY, ["fix"]), ("a.py", CODE, ["refactor", "a.py", "rename s to acc"])],
    ids=["fix", "rename"],
)
def test_the_command_imports_no_numpy_when_its_model_is_resident(tmp_path, runtime, name, text, argv):
    """Nor the tools the model's side runs: a rename's names are checked before the request
    (a name the file lacks), the rename itself (rope) is the resident's."""
    (tmp_path / name).write_text(text)
    argv = argv if len(argv) > 1 else [*argv, name]
    assert pedit(*argv, "--stdout", *REF, cwd=tmp_path).returncode == 0  # started
    probe = (
        "import sys, atexit\n"
        "heavy = ('numpy', 'llama_cpp', 'torch', 'rope')\n"
        "seen = lambda: repr([m for m in heavy if m in sys.modules])\n"
        "atexit.register(lambda: open('imported.json', 'w').write(seen()))\n"
        f"sys.argv = ['pedit', *{argv!r}, '--stdout', '-b', 'reference']\n"
        "from pedit.cli.app import main\n"
        "main()\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "imported.json").read_text() == "[]"


def test_the_runtime_directory_must_be_private(tmp_path, monkeypatch):
    run = Path(tempfile.mkdtemp(prefix="pr", dir="/tmp"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(run))
    (run / "pedit").mkdir(mode=0o755)
    (run / "pedit").chmod(0o755)
    with pytest.raises(protocol.ProtocolError, match="not a private directory"):
        protocol.runtime_dir()
    (run / "pedit").chmod(0o700)
    assert protocol.runtime_dir() == run / "pedit"
    shutil.rmtree(run)


def test_frames_round_trip_and_a_broken_peer_is_an_error():
    import socket

    a, b = socket.socketpair()
    with a, b:
        protocol.send_message(a, "event", {"x": [1, 2, 3]})
        assert protocol.receive_message(b) == ("event", {"x": [1, 2, 3]})
        a.sendall(protocol.HEADER.pack(protocol.MAX_FRAME + 1))
        with pytest.raises(protocol.ProtocolError, match="a frame of"):
            protocol.receive(b)
        a.sendall(protocol.HEADER.pack(5) + b"nope!")
        with pytest.raises(protocol.ProtocolError, match="cannot be read"):
            protocol.receive_message(b)
        a.close()
        with pytest.raises(protocol.ProtocolError, match="closed"):
            protocol.receive(b)


@pytest.mark.parametrize(("text", "seconds"), [("300", 300.0), ("90s", 90.0), ("5m", 300.0), ("2h", 7200.0),
                                              ("0", 0.0), ("-1", -1.0), (" 1.5m ", 90.0)])  # fmt: skip
def test_keep_alive_reads_as_ollama_reads_its_own(text, seconds):
    assert config.duration(text) == seconds
    assert config.resolve({}, env={"PEDIT_KEEP_ALIVE": text}, project=None).keep_alive == seconds


def test_the_hook_asks_the_resident_model_and_loads_none_itself(tmp_path, runtime):
    """Two commits in two repositories (no hook cache hit between them): the hook loads no
    model in either, the resident answers both, and what is committed is what a hook that
    loads its own model commits."""
    from gitrepo import COPYING, NOTES, commit, committed, install, make_repo, sh

    repos = {}
    for name, keep in (("here", "0"), ("a", "120"), ("b", "120")):
        repo = make_repo(tmp_path / name, extra="restage = true\n", pyproject=COPYING)
        install(repo)
        text = NOTES if name != "b" else NOTES.replace("fox", "cat")
        (repo / "notes.md").write_text(text)
        sh("git", "add", "notes.md", cwd=repo)
        done = commit(repo, env={"PEDIT_KEEP_ALIVE": keep, "XDG_CACHE_HOME": str(tmp_path / f"cache-{name}")})
        assert done.returncode == 0, done.stderr
        assert ("loading" in done.stderr) == (keep == "0")
        repos[name] = repo
    assert committed(repos["a"], "notes.md") == committed(repos["here"], "notes.md")
    (found,) = daemons()
    assert found["served"] == 2


def test_the_resident_runs_only_the_pieces_that_changed(tmp_path, runtime, monkeypatch):
    monkeypatch.setenv("PEDIT_ANSWER_CACHE", "on")
    (tmp_path / "pyproject.toml").write_text("[tool.pedit]\nchunk_tokens = 16\n")
    paragraphs = [f"Paragraph {i} is about the {w}." for i, w in enumerate(["sea", "hills", "town"])]
    (tmp_path / "a.md").write_text("\n\n".join(paragraphs) + "\n")
    args = ["fix", "a.md", "--stdout", *REF, "--no-spelling"]
    assert pedit(*args, "--stats-json", "1.json", cwd=tmp_path).returncode == 0
    (tmp_path / "a.md").write_text("\n\n".join(paragraphs).replace("hills", "dales") + "\n")
    second = pedit(*args, "--stats-json", "2.json", cwd=tmp_path)
    fresh = pedit(*args, cwd=tmp_path, PEDIT_ANSWER_CACHE="off", PEDIT_KEEP_ALIVE="0")
    assert second.returncode == 0 and second.stdout == fresh.stdout
    assert [json.loads((tmp_path / f"{i}.json").read_text())["runs"] for i in (1, 2)] == [3, 1]
    (found,) = daemons()
    assert found["served"] == 2
    # it read the changed piece's prompt past the start the resident holds: the piece and its
    # frame (its name, its part note, the fences), nothing of the others
    stats = json.loads((tmp_path / "2.json").read_text())
    changed, piece = _changed_piece((tmp_path / "a.md").read_text(), "a.md", "dales")
    assert stats["prompt_tokens"] - stats["cached_tokens"] == changed > piece


def _changed_piece(text: str, name: str, new: str) -> tuple[int, int]:
    """For a fix of `text` cut in runs of 16 tokens on the reference backend (no spelling):
    the prompt tokens of the one piece that holds `new`, past its job's shared start, and
    that piece's own tokens."""
    from pedit.app.jobs import Job
    from pedit.app.options import EngineOptions
    from pedit.app.templates import BUILTIN
    from pedit.backends import open_backend
    from pedit.engine.prompt import build_prompt
    from pedit.tools.options import ToolOptions

    backend = open_backend("reference")
    try:
        job = Job(
            backend, BUILTIN["fix"], None, EngineOptions(tools=ToolOptions(spelling=False)), chunk_tokens=16
        )
        pieces = job.pieces(text, name, "rewrite")
        (i, piece) = next((i, p) for i, p in enumerate(pieces, 1) if new in p)
        prompt = build_prompt(backend, job.request(piece, name, f"part {i} of {len(pieces)}")).tokens
        return len(prompt) - len(job.stem(prompt, "rewrite")), backend.count_tokens(piece)
    finally:
        backend.close()


def test_ctrl_c_stops_the_request_and_the_resident_answers_the_next(tmp_path, runtime, monkeypatch):
    """Ctrl-C in the command while the resident answers: exit 130, the file untouched, the
    connection closed (the resident stops the request there), and the resident answers
    the next command as before."""
    from typer.testing import CliRunner

    from pedit.cli import rewrite
    from pedit.cli.app import app

    (tmp_path / "a.md").write_text(ESSAY)
    expected = pedit("fix", "a.md", "--stdout", *REF, cwd=tmp_path, PEDIT_KEEP_ALIVE="0").stdout

    class Interrupted(rewrite.LiveView):
        def run(self, events, label):
            next(iter(events))  # the first event came from the resident: then the user presses Ctrl-C
            raise KeyboardInterrupt

    monkeypatch.setattr(rewrite, "LiveView", Interrupted)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["fix", "a.md", "-y", *REF])
    assert result.exit_code == 130 and (tmp_path / "a.md").read_text() == ESSAY
    (found,) = daemons()
    assert not found["busy"]
    after = pedit("fix", "a.md", "--stdout", *REF, cwd=tmp_path)
    assert after.returncode == 0 and after.stdout == expected
    (again,) = daemons()
    assert again["pid"] == found["pid"]


def test_a_full_queue_gets_one_clear_line():
    """The resident's queue (server.QUEUE requests waiting) turns the next away at once, and
    the client raises it as one line, exit 3."""
    import socket

    from pedit.errors import ModelError
    from pedit.resident import client, server
    from pedit.resident.protocol import LoadSettings, Request

    load = LoadSettings(model="m", backend="reference", n_ctx=512, threads=None, speculate_off=False)
    state = server.State(load=load, keep_alive=60)
    state.waiting = server.QUEUE + 1
    req = Request(kind="rewrite", template=None, instruction=None, options=None, system=None, force=False,
                  chunk_tokens=None, text="x", name="a.md")  # fmt: skip
    a, b = socket.socketpair()
    with a, b:
        server.queued(state, a, req)
        kind, failure = protocol.receive_message(b)
    assert kind == "error" and state.waiting == server.QUEUE + 1  # turned away: nothing ran
    with pytest.raises(ModelError) as raised:
        client._raise(failure)
    assert raised.value.message == f"the resident model has {server.QUEUE} requests waiting; try again"
    assert raised.value.exit_code == 3


def test_no_runtime_directory_means_every_command_runs_in_its_own_process(tmp_path, runtime):
    """Where no resident can start (pedit's runtime directory cannot be made: here a file
    stands where it would be), the command says so in one line and loads its model itself,
    with the answer a command with no resident gives."""
    (tmp_path / "a.md").write_text(ESSAY)
    (tmp_path / "run").mkdir(mode=0o700)
    blocked = tmp_path / "run" / "pedit"
    blocked.write_text("not a directory\n")
    args = ["fix", "a.md", "--stdout", *REF]
    got = pedit(*args, cwd=tmp_path, XDG_RUNTIME_DIR=str(blocked.parent))
    want = pedit(*args, cwd=tmp_path, PEDIT_KEEP_ALIVE="0")
    assert got.returncode == want.returncode == 0 and got.stdout == want.stdout
    assert "loading the model in this process" in got.stderr
    assert blocked.read_text() == "not a directory\n"


@pytest.mark.skipif(os.getuid() != 0, reason="switching to another user needs root")
def test_another_user_cannot_connect(tmp_path, runtime):
    """The socket is in this user's 0700 directory and is 0600 itself: a process of another
    user (nobody) cannot reach it, while this user's can."""
    (tmp_path / "a.md").write_text(ESSAY)
    assert pedit("fix", "a.md", "--stdout", *REF, cwd=tmp_path).returncode == 0
    (found,) = daemons()
    (sock,) = (runtime / "pedit").glob("*.sock")
    assert (runtime / "pedit").stat().st_mode & 0o777 == 0o700 and sock.stat().st_mode & 0o777 == 0o600
    runtime.chmod(0o755)  # only pedit's own directory and socket keep the other user out
    assert (_connect_as(65534, sock), _connect_as(os.getuid(), sock)) == ("refused", "connected")
    assert alive(found["pid"])


def _connect_as(uid: int, sock: Path) -> str:
    """Connect to `sock` from a child process of user `uid` (its own group, no other):
    'refused' (no permission), 'connected', or what else happened."""
    import socket

    pid = os.fork()
    if pid == 0:  # the child: become the user, try, and say how it went in the exit code
        code = 3
        try:
            if uid != os.getuid():
                os.setgroups([])
                os.setgid(uid)
                os.setuid(uid)
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                s.connect(str(sock))
            code = 0
        except PermissionError:
            code = 1
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return {0: "connected", 1: "refused"}.get(os.waitstatus_to_exitcode(status), f"status {status}")


def test_pedit_serve_is_the_resident_model_while_it_runs(tmp_path, runtime):
    """One process both: `pedit serve` answers the commands of its settings as the resident
    does (a resident process already running stops and leaves it the key), between its
    own HTTP requests; `pedit daemon stop` leaves it serving; once it stops, a command
    starts its own resident again. Every answer is the one a command gives alone."""
    import openai

    (tmp_path / "a.md").write_text(ESSAY)
    args = ["fix", "a.md", "--stdout", *REF]
    want = pedit(*args, cwd=tmp_path, PEDIT_KEEP_ALIVE="0")
    assert pedit(*args, cwd=tmp_path).stdout == want.stdout
    (before,) = daemons()
    serve = [*PEDIT, "serve", "-b", "reference", "--port", "0"]
    proc = subprocess.Popen(
        serve, stderr=subprocess.PIPE, text=True, env=os.environ | {"PYTHONUNBUFFERED": "1"}
    )
    try:
        url, said, deadline = None, [], time.monotonic() + 120
        while url is None and time.monotonic() < deadline:
            said.append(proc.stderr.readline())
            found = re.search(r"Uvicorn running on (http://127\.0\.0\.1:\d+)", said[-1])
            url = found.group(1) if found else None
        assert url, "".join(said)
        assert gone(before["pid"])
        assert any("pedit commands with these settings use this server's model" in line for line in said)
        got = pedit(*args, cwd=tmp_path)
        assert got.returncode == 0 and got.stdout == want.stdout
        (mine,) = daemons()
        assert (mine["pid"], mine["owner"], mine["served"]) == (proc.pid, "pedit serve", 1)
        client = openai.OpenAI(base_url=url + "/v1", api_key="none", max_retries=0)
        reply = client.chat.completions.create(model="x", messages=[{"role": "user", "content": "Hi"}],
                                               temperature=0, max_tokens=4)  # fmt: skip
        assert reply.usage.completion_tokens >= 1
        stop = subprocess.run([*PEDIT, "daemon", "stop"], capture_output=True, text=True, timeout=60)
        assert stop.stdout.strip() == "stopped 0 resident models"
        assert f"pedit serve (pid {proc.pid}) holds this model: stop it there" in stop.stderr
        assert proc.poll() is None and pedit(*args, cwd=tmp_path).stdout == want.stdout
    finally:
        proc.terminate()
        proc.wait(30)
    again = pedit(*args, cwd=tmp_path)
    assert again.stdout == want.stdout
    (after,) = daemons()
    assert after["pid"] != proc.pid and not after["owner"]


async def test_the_interactive_session_lends_its_model_to_the_commands(tmp_path, runtime):
    """`pedit FILE`'s model answers the commands of its settings while the session runs
    (`pedit fix` in another terminal loads no second copy), between the session's own turns,
    with the answer a command gives alone; it is the resident no more once the session ends."""
    import asyncio

    from pedit.app.loading import load_with_cost
    from pedit.cli.tui import share
    from pedit.models.progress import quietly
    from pedit.tui.app import PeditApp

    (tmp_path / "a.md").write_text(ESSAY)
    (tmp_path / "notes.txt").write_text("One line of notes.\n")
    args = ["fix", "a.md", "--stdout", *REF]
    want = pedit(*args, cwd=tmp_path, PEDIT_KEEP_ALIVE="0")
    settings = config.resolve({"backend": "reference"})
    app = PeditApp(
        tmp_path / "notes.txt", load=lambda spec: quietly(load_with_cost(settings, model=spec)),
        model=settings.model, share=share(settings),
    )  # fmt: skip
    async with app.run_test(size=(80, 24)) as pilot:
        for _ in range(1500):
            if app.shared is not None and not app.instruction.disabled:
                break
            await pilot.pause(0.02)
        assert app.shared is not None
        got = await asyncio.to_thread(pedit, *args, cwd=tmp_path)
        assert got.returncode == 0 and got.stdout == want.stdout
        (found,) = await asyncio.to_thread(daemons)
        assert (found["pid"], found["owner"], found["served"]) == (
            os.getpid(),
            "pedit (interactive session)",
            1,
        )
        app.instruction.value = "Make it formal."
        app.instruction.focus()
        await pilot.press("enter")
        for _ in range(1500):
            if app.session.pending is not None or not app.running:
                break
            await pilot.pause(0.02)
        assert app.session.pending is not None  # the session's own turn, after the command's
    assert not list(runtime.glob("pedit/*.sock"))
