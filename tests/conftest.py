"""Shared fixtures: tiny models built once per session, one backend of each kind, and an
isolated user cache/config for every test (the real default model gets its own session
cache, so CI assembles it from the installed chunk packages exactly as a user's first run)."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from pathlib import Path

import pytest

os.environ["HF_HUB_OFFLINE"] = "1"  # tests never reach a model hub
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# The defaults are the user's: the resident model and the answer cache are on for every
# command a test runs as a user does (a new process). A command run inside the test's own
# process (typer's CliRunner, the hook's run) loads its model there and asks no cache: the
# test's doubles and monkeypatches live in this process and reach no other (in_process
# below); a test about the resident in this process sets PEDIT_KEEP_ALIVE itself.
for _var in ("PEDIT_KEEP_ALIVE", "PEDIT_ANSWER_CACHE", "PEDIT_REUSE"):
    os.environ.pop(_var, None)
sys.path.insert(0, str(Path(__file__).parent))
# a hang-up and Ctrl-C act as in a user's terminal in the tests of signals: a suite started
# under nohup (SIGHUP ignored) or as a background job (SIGINT ignored), which pedit rightly
# keeps ignored, would fail them otherwise
signal.signal(signal.SIGHUP, signal.SIG_DFL)
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

import tiny  # noqa: E402
from pedit import models  # noqa: E402
from pedit.backends import open_backend  # noqa: E402
from pedit.tools import confusables  # noqa: E402
from scripted import Answering  # noqa: E402

KINDS = ["reference", "llama.cpp", "transformers"]


@pytest.fixture(autouse=True)
def isolated_dirs(tmp_path_factory, monkeypatch):
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / "cache"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / "state"))  # the session's recovery files
    monkeypatch.setenv("HF_HOME", str(home / "hf"))
    run = home / "run"  # the resident models' sockets: private, as platformdirs requires, and the test's own
    run.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(run))
    for var in ("PEDIT_MODEL", "PEDIT_BACKEND"):
        monkeypatch.delenv(var, raising=False)
    return home


def processes_of(marker: str) -> list[int]:
    """The processes (not this one) whose environment has `marker` in it: everything a test
    started, directly or not, carries its own XDG_RUNTIME_DIR."""
    found = []
    needle = marker.encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                env = f.read()
            with open(f"/proc/{entry}/stat", "rb") as f:
                zombie = f.read().rsplit(b")", 1)[1].split()[0] == b"Z"
        except OSError:
            continue
        if needle in env and not zombie:
            found.append(int(entry))
    return found


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


@pytest.fixture(autouse=True)
def no_process_left(isolated_dirs):
    """After each test: the resident models it started are stopped (SIGTERM: as `pedit daemon
    stop`), and any other process it started that still runs fails it (and is killed)."""
    yield
    marker = f"XDG_RUNTIME_DIR={os.environ.get('XDG_RUNTIME_DIR', isolated_dirs / 'run')}\0"
    left = processes_of(marker)
    if not left:
        return
    residents = [p for p in left if "pedit.resident.server" in _cmdline(p)]
    strays = {p: _cmdline(p) for p in left if p not in residents}
    for pid in left:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM if pid in residents else signal.SIGKILL)
    deadline = time.monotonic() + 30
    while processes_of(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    stuck = processes_of(marker)
    for pid in stuck:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    assert not strays, f"the test left processes running: {strays}"
    assert not stuck, f"resident models that did not stop on SIGTERM: {stuck}"


@pytest.fixture(autouse=True)
def in_process(monkeypatch):
    """In the test's own process (CliRunner, the hook run in-process, the session through
    Pilot, pedit serve's app), where its doubles and monkeypatches live, the defaults of
    keep_alive and answer_cache are off: a command there loads its model there. Any
    process the test starts has the user's defaults (this patch does not reach it), and
    an environment layer the test sets (PEDIT_KEEP_ALIVE) is above either."""
    from dataclasses import replace

    from pedit.app import config

    monkeypatch.setitem(config.KEYS, "keep_alive", replace(config.KEYS["keep_alive"], default=0.0))
    monkeypatch.setitem(config.KEYS, "answer_cache", replace(config.KEYS["answer_cache"], default=False))


@pytest.fixture(autouse=True)
def copying_tiny_models(request, monkeypatch):
    """The tiny random models read some of Harper's suggestions as 9 nats likelier or more
    (their log-probs are wide and random), and fix's β of 10 on those (confusables.sure)
    leads them off the file, where the shells' tests need a fix that copies. The sure
    suggestions are tested where they are made (test_confusables.py, test_lossless.py), and
    the real model (the `slow` tests) runs with every default."""
    if request.node.get_closest_marker("slow") or request.module.__name__ == "test_confusables":
        return
    monkeypatch.setattr(confusables, "SURE_THRESHOLD", float("inf"))


@pytest.fixture(scope="session")
def tiny_hf(tmp_path_factory) -> Path:
    return tiny.build_hf_model(tmp_path_factory.mktemp("tiny-hf"))


@pytest.fixture(scope="session")
def tiny_gguf(tiny_hf, tmp_path_factory) -> Path:
    return tiny.write_gguf(tiny_hf, tmp_path_factory.mktemp("tiny-gguf") / "tiny.gguf")


def model_for(kind: str, tiny_hf: Path, tiny_gguf: Path):
    return {"llama.cpp": tiny_gguf, "transformers": tiny_hf}.get(kind)


@pytest.fixture(params=KINDS)
def backend(request, tiny_hf, tiny_gguf):
    b = open_backend(request.param, model_for(request.param, tiny_hf, tiny_gguf), n_ctx=512)
    yield b
    b.close()


@pytest.fixture(scope="session")
def real_cache(tmp_path_factory) -> Path:
    """A user cache shared by the slow tests: the default model is assembled into it once."""
    return tmp_path_factory.mktemp("real-cache")


@pytest.fixture
def default_model_env(real_cache, monkeypatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(real_cache))
    return real_cache


@pytest.fixture
def answering(monkeypatch):
    """use(answer, at_pass=None): pedit's model becomes an Answering backend (scripted.py):
    the reference backend made to answer with a given text, for the shells' safety tests."""

    def use(answer: str, at_pass=None, fence: str = "```"):
        backend = Answering(answer, fence, at_pass)
        monkeypatch.setattr(models, "load", tiny.model_work(lambda: backend))
        return backend

    return use


@pytest.fixture
def small_disk(tmp_path):
    """mount(size) -> a real, empty tmpfs of `size` bytes (whole 4 KiB pages; directories
    take none), unmounted after the test; skipped where mounting is not permitted."""
    import subprocess

    mounts = []

    def mount(size: int) -> Path:
        where = tmp_path / f"disk{len(mounts)}"
        where.mkdir()
        cmd = ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode:
            pytest.skip(f"mounting a small tmpfs is not permitted here ({r.stderr.strip()}); no full disk")
        mounts.append(where)
        return where

    yield mount
    for where in mounts:
        subprocess.run(["umount", str(where)], check=True)
