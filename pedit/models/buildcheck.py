"""Does this llama.cpp build run on this CPU? Checked once per build and CPU, in a child.

llama-cpp-python compiles llama.cpp when it is installed, and a build can use instructions
the machine will not run: one compiled on another CPU (a wheel pip cached there), or with
-march=native where a kernel the compiler enabled faults (nativebuild.py). A signal kills
Python with no word, so before pedit opens a model on a build it has not seen, it runs the
probe (probe.py: a tiny model quantized by the build and run through pedit's own backend, a
fraction of a second) in a child process. A child killed by SIGSEGV, SIGILL or SIGBUS is
ModelError (exit 3) with the command that builds for this CPU (nativebuild.py); a pass is
remembered in the user cache (`builds/`), keyed by the build's libraries (path, size,
mtime) and the CPU, so later commands only stat a few files.
PEDIT_BUILD_CHECK=off skips the check (for a CI that tests its build once).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import ModelError
from .cachefile import warn_stderr, write_cache_file
from .nativebuild import cpuinfo
from .progress import Began, Step, running, task

PROBE_FORMAT = 1  # a changed probe checks every build again
TIMEOUT = 120.0  # seconds; the probe takes well under one
# What running another CPU's instructions ends in: #UD is SIGILL, a #GP (an AMX tile the
# kernel has not enabled) SIGSEGV, a misaligned access SIGBUS. An abort (a GGML_ASSERT)
# says why on stderr itself and is no sign of the wrong CPU: it proves nothing here.
CRASHES = (signal.SIGSEGV, signal.SIGILL, signal.SIGBUS)


@dataclass(frozen=True)
class Build:
    version: str  # llama-cpp-python's
    libraries: tuple[str, ...]  # "path|size|mtime_ns" of each file in its library folder


@dataclass(frozen=True)
class Outcome:
    returncode: int | None  # None: timed out; negative: killed by that signal
    stderr: str


def find_build() -> Build | None:
    """The installed llama.cpp build, found without importing it (importing loads it);
    None when llama_cpp is not installed (opening the backend then says so)."""
    spec = importlib.util.find_spec("llama_cpp")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(os.environ.get("LLAMA_CPP_LIB_PATH") or Path(spec.submodule_search_locations[0]) / "lib")
    try:
        files = sorted(p for p in folder.iterdir() if p.is_file())
        libraries = tuple(f"{p}|{p.stat().st_size}|{p.stat().st_mtime_ns}" for p in files)
    except OSError:
        return None
    from importlib import metadata  # here: a command its resident answers never reads it

    try:
        version = metadata.version("llama-cpp-python")
    except metadata.PackageNotFoundError:
        version = "unknown"
    return Build(version, libraries) if libraries else None


def cpu() -> str:
    """The CPU as the build sees it: architecture, model name and feature flags (Linux
    /proc/cpuinfo; elsewhere what platform knows)."""
    name = cpuinfo("model name") or platform.processor() or "unknown CPU"
    flags = cpuinfo("flags") or cpuinfo("Features")
    return f"{platform.machine()}|{name}|{hashlib.sha256(flags.encode()).hexdigest()[:16]}"


def cpu_name() -> str:
    return cpu().split("|")[1]


def signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def probe_command(folder: Path) -> list[str]:
    """The child: this interpreter, without the current directory on its path (-P)."""
    return [sys.executable, "-P", "-m", "pedit.models.probe", str(folder)]


def run_probe(command: Callable[[Path], Sequence[str]] = probe_command) -> Outcome:
    """Run the probe in a child, in a temporary folder removed whatever the outcome."""
    with tempfile.TemporaryDirectory(prefix="pedit-buildcheck-") as tmp:
        try:
            done = subprocess.run(list(command(Path(tmp))), capture_output=True, timeout=TIMEOUT, check=False)
        except subprocess.TimeoutExpired as exc:
            return Outcome(None, (exc.stderr or b"").decode("utf-8", "replace"))
    return Outcome(done.returncode, done.stderr.decode("utf-8", "replace"))


def rebuild_command() -> str:
    """nativebuild: the fastest build that runs here, each crashing one left behind."""
    return f"{sys.executable} -m pedit.models.nativebuild"


def crash_message(build: Build, sig: int) -> str:
    return (
        f"llama.cpp (llama-cpp-python {build.version}) crashes on this CPU ({cpu_name()}): a test pass on a "
        f"tiny model died of {signal_name(sig)} (as a build for instructions this process cannot run "
        f"does); build it for this CPU: {rebuild_command()}"
    )


def entry_path(build: Build, cache_dir: Path) -> Path:
    key = "\n".join([build.version, *build.libraries, cpu(), str(PROBE_FORMAT)])
    return cache_dir / f"{hashlib.sha256(key.encode()).hexdigest()[:24]}.json"


def passed(path: Path) -> bool:
    try:
        return json.loads(path.read_text(encoding="utf-8")).get("passed") is True
    except (OSError, ValueError, AttributeError):  # absent, unreadable, not ours: check again
        return False


def failure(outcome: Outcome) -> str:
    """What a probe that did not pass and did not crash did, for a warning line."""
    code = outcome.returncode
    if code is None:
        return f"timed out after {TIMEOUT:.0f} s"
    last = (outcome.stderr.strip().splitlines() or ["no output"])[-1]
    return f"was stopped by {signal_name(-code)}: {last}" if code < 0 else f"ended with code {code}: {last}"


def ensure_runs(
    cache_dir: Path,
    *,
    run: Callable[[], Outcome] = run_probe,
    warn: Callable[[str], None] = warn_stderr,
) -> Generator[Step, None, None]:
    """Check the installed llama.cpp build on this CPU unless a pass is in cache_dir;
    ModelError when the probe dies of a crash signal. A probe that fails otherwise (an
    error, a timeout) proves nothing: one warning line, checked again next time."""
    if os.environ.get("PEDIT_BUILD_CHECK", "").lower() == "off":
        return
    build = find_build()
    if build is None:
        return
    path = entry_path(build, cache_dir)
    if passed(path):
        return
    start = time.perf_counter()
    outcome = yield from task(Began("checking this llama.cpp build (once)", None), running(run))
    code = outcome.returncode
    if code is not None and code < 0 and -code in CRASHES:
        raise ModelError(crash_message(build, -code))
    if code != 0:
        warn(f"the llama.cpp build check {failure(outcome)}; checked again next time")
        return
    record = {"passed": True, "llama_cpp": build.version, "libraries": build.libraries, "cpu": cpu()}
    record["seconds"] = round(time.perf_counter() - start, 3)
    try:
        write_cache_file(path, json.dumps(record, indent=1))
    except OSError as exc:
        warn(f"cannot write the llama.cpp build check's result ({exc}); checked again next time")
