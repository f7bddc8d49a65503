"""The llama.cpp build check (pedit/models/buildcheck.py): the real build passes once and is
remembered; a build that dies of a signal is one line with the rebuild command and exit 3,
from the real command line, with the file untouched; only llama.cpp is checked."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from pedit import models
from pedit.errors import ExitCode, ModelError
from pedit.models import buildcheck, nativebuild, probe
from pedit.models.progress import quietly

ROOT = Path(__file__).resolve().parent.parent
PEDIT = Path(sys.executable).parent / "pedit"


def counting(outcomes: list):
    """run= for ensure_runs: the real probe, each run recorded in `outcomes`."""

    def run():
        outcomes.append(buildcheck.run_probe())
        return outcomes[-1]

    return run


def entries(cache: Path) -> list[Path]:
    return sorted((cache / "pedit" / "builds").glob("*.json"))


def test_the_real_build_passes_once_and_is_remembered(isolated_dirs):
    outcomes: list = []
    where = models.cache_root() / "builds"
    quietly(buildcheck.ensure_runs(where, run=counting(outcomes)))
    assert [o.returncode for o in outcomes] == [0]
    [entry] = entries(isolated_dirs / "cache")
    record = json.loads(entry.read_text())
    assert record["passed"] is True and record["cpu"] == buildcheck.cpu()
    assert any("libllama" in lib for lib in record["libraries"])
    quietly(buildcheck.ensure_runs(where, run=counting(outcomes)))  # a cache hit: no child
    assert len(outcomes) == 1 and entries(isolated_dirs / "cache") == [entry]


def test_loading_a_llama_cpp_model_checks_the_build_and_no_other_backend_does(
    isolated_dirs, tiny_gguf, tiny_hf
):
    quietly(models.load(str(tiny_hf), "transformers", n_ctx=256)).close()
    quietly(models.load("x", "reference")).close()
    assert entries(isolated_dirs / "cache") == []
    quietly(models.load(str(tiny_gguf), "llama.cpp", n_ctx=256)).close()
    assert len(entries(isolated_dirs / "cache")) == 1


def crashing(sig: int):
    """A probe command that kills itself with `sig`, as a build for the wrong CPU does."""
    return lambda folder: [sys.executable, "-c", f"import os; os.kill(os.getpid(), {int(sig)})"]


@pytest.mark.parametrize("sig", [signal.SIGSEGV, signal.SIGILL, signal.SIGBUS])
def test_a_probe_that_dies_of_a_signal_is_a_model_error_with_the_rebuild_command(isolated_dirs, sig):
    with pytest.raises(ModelError) as err:
        quietly(
            buildcheck.ensure_runs(
                models.cache_root() / "builds", run=lambda: buildcheck.run_probe(crashing(sig))
            )
        )
    message = err.value.message
    assert err.value.exit_code == ExitCode.MODEL == 3 and "\n" not in message
    assert f"died of {sig.name}" in message and buildcheck.cpu_name() in message
    assert message.endswith(f"build it for this CPU: {sys.executable} -m pedit.models.nativebuild")
    assert entries(isolated_dirs / "cache") == []  # a crash is not remembered


@pytest.mark.parametrize(
    ("code", "said"),
    [("raise SystemExit('no room')", "ended with code 1: no room"),
     ("import os, sys; print('oom', file=sys.stderr); os.kill(os.getpid(), 9)",
      "was stopped by SIGKILL: oom"),
     ("import os; os.abort()", "was stopped by SIGABRT: no output")],
)  # fmt: skip
def test_a_probe_that_fails_otherwise_is_a_warning_and_is_checked_again(isolated_dirs, code, said):
    warned: list[str] = []
    command = lambda folder: [sys.executable, "-c", code]  # noqa: E731
    for _ in range(2):
        quietly(
            buildcheck.ensure_runs(
                models.cache_root() / "builds", run=lambda: buildcheck.run_probe(command), warn=warned.append
            )
        )
    assert warned == [f"the llama.cpp build check {said}; checked again next time"] * 2
    assert entries(isolated_dirs / "cache") == []


def test_the_check_can_be_skipped(isolated_dirs, monkeypatch):
    monkeypatch.setenv("PEDIT_BUILD_CHECK", "off")
    quietly(buildcheck.ensure_runs(models.cache_root() / "builds", run=lambda: pytest.fail("the probe ran")))


def test_the_entry_follows_the_library_files(tmp_path, monkeypatch):
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "libllama.so").write_bytes(b"one build")
    monkeypatch.setenv("LLAMA_CPP_LIB_PATH", str(lib))
    first = buildcheck.entry_path(buildcheck.find_build(), tmp_path)
    assert buildcheck.entry_path(buildcheck.find_build(), tmp_path) == first
    (lib / "libllama.so").write_bytes(b"another build")
    assert buildcheck.entry_path(buildcheck.find_build(), tmp_path) != first


def test_the_probe_has_the_bundled_models_tensor_types(tmp_path):
    import gguf

    quantized = probe.quantize(probe.probe_model(tmp_path / "f32.gguf"), tmp_path / "q.gguf")
    types = {t.tensor_type.name for t in gguf.GGUFReader(quantized).tensors}
    assert types == {"F32", "Q4_K", "Q6_K", "Q5_0", "Q8_0"}


def test_the_makefile_builds_llama_cpp_with_nativebuild_at_the_pinned_version():
    makefile = (ROOT / "Makefile").read_text()
    pin = re.search(r'"llama-cpp-python==([0-9.]+)"', (ROOT / "pyproject.toml").read_text())
    assert pin.group(1) == nativebuild.VERSION
    install = makefile.index("pedit/models/nativebuild.py install")
    assert install < makefile.index("pip install -e") < makefile.index("-m pedit.models.nativebuild check")
    assert "CMAKE_ARGS" not in makefile  # the tiers' flags are nativebuild's alone


# --- from the real command line: a llama_cpp that dies of SIGSEGV when it is loaded --------


@pytest.fixture
def segfaulting_llama_cpp(tmp_path) -> Path:
    """A llama_cpp package that kills its process with SIGSEGV on import, with a library
    folder (its build's identity). pedit itself must never import it before the check."""
    package = tmp_path / "fake" / "llama_cpp"
    (package / "lib").mkdir(parents=True)
    (package / "lib" / "libllama.so").write_bytes(b"a build for another CPU")
    (package / "__init__.py").write_text("import os\nimport signal\n\nos.kill(os.getpid(), signal.SIGSEGV)\n")
    return package.parent


def pedit_cli(args, cwd: Path, cache: Path, pythonpath: Path):
    env = {**os.environ, "XDG_CACHE_HOME": str(cache), "PYTHONPATH": str(pythonpath), "HF_HUB_OFFLINE": "1"}
    env.pop("PEDIT_BUILD_CHECK", None)
    return subprocess.run([str(PEDIT), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def test_a_segfaulting_build_is_exit_3_and_one_line_from_the_cli(tmp_path, tiny_gguf, segfaulting_llama_cpp):
    essay = tmp_path / "n.md"
    essay.write_bytes(b"Their is a eror.\n")
    for _ in range(2):  # a crash is not remembered: the second command says it again
        done = pedit_cli(
            ["fix", "n.md", "--stdout", "-m", str(tiny_gguf), "-b", "llama.cpp", "--speculate", "off"],
            tmp_path, tmp_path / "cache", segfaulting_llama_cpp,
        )  # fmt: skip
        assert done.returncode == 3, done.stderr
        errors = [line for line in done.stderr.splitlines() if line.startswith("pedit: error:")]
        assert len(errors) == 1 and "died of SIGSEGV" in errors[0] and done.stdout == ""
        assert errors[0].endswith(f"build it for this CPU: {sys.executable} -m pedit.models.nativebuild")
        assert essay.read_bytes() == b"Their is a eror.\n"
    assert not (tmp_path / "cache" / "pedit" / "builds").exists()


def test_the_reference_backend_never_runs_the_check(tmp_path, segfaulting_llama_cpp):
    (tmp_path / "n.md").write_bytes(b"Their is a eror.\n")
    done = pedit_cli(
        ["fix", "n.md", "--stdout", "-b", "reference", "--max-tokens", "5"],
        tmp_path, tmp_path / "cache", segfaulting_llama_cpp,
    )  # fmt: skip
    assert done.returncode == 5, done.stderr  # cut off by --max-tokens: the model ran
    assert "llama.cpp" not in done.stderr and not (tmp_path / "cache" / "pedit" / "builds").exists()
