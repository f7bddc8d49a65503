"""`backends/` installs as `pedit.backends`, never as a top-level `backends` (a PyPI project
owns that name), in a normal (wheel) install and in an editable install.

Each case builds a throwaway virtual environment, installs pedit without dependencies
(numpy is added, since pedit.backends imports it) and imports from a neutral directory.
"""

from __future__ import annotations

import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import numpy
import pytest

pytestmark = pytest.mark.install
REPO = Path(__file__).resolve().parents[1]
PROBE = (
    "import importlib.util, pedit.backends, pedit.backends.reference as r\n"
    "assert importlib.util.find_spec('backends') is None, 'a top-level backends module exists'\n"
    "print(pedit.backends.__file__)\n"
)


def make_env(where: Path) -> Path:
    venv.EnvBuilder(with_pip=True).create(where)
    py = where / "bin" / "python"
    pip_install(py, f"numpy=={numpy.__version__}", "setuptools>=77")
    return py


def pip_install(py: Path, *args: str) -> None:
    cmd = [py, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-deps", *args]
    subprocess.run(cmd, check=True)


def probe(py: Path, cwd: Path) -> Path:
    out = subprocess.run([py, "-c", PROBE], cwd=cwd, check=True, capture_output=True, text=True)
    return Path(out.stdout.strip())


def test_wheel_install(tmp_path):
    wheels = tmp_path / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", wheels, REPO],
        check=True,
    )
    (wheel,) = wheels.glob("pedit-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "pedit/backends/llama_cpp.py" in names and "pedit/backends/base.py" in names
    assert not [n for n in names if n.startswith("backends/")]
    # every module and the benchmark corpus are in the wheel, not only in the source tree
    for path in REPO.joinpath("pedit").rglob("*.py"):
        if "corpus" not in path.parts:
            assert path.relative_to(REPO).as_posix() in names
    assert "pedit/bench/corpus/tasks.toml" in names and "pedit/bench/corpus/walden.txt" in names
    data = ("pedit/machine/prior_costs.json", "pedit/tools/harper_rules.json", "pedit/tui/app.tcss")
    assert all(d in names for d in data), [d for d in data if d not in names]
    py = make_env(tmp_path / "env")
    pip_install(py, str(wheel))
    where = probe(py, tmp_path)
    assert where.parent.name == "backends" and where.parent.parent.name == "pedit"
    assert "site-packages" in where.parts
    assert not list((tmp_path / "env").glob("lib/python*/site-packages/backends"))


def test_editable_install(tmp_path):
    py = make_env(tmp_path / "env")
    pip_install(py, "--no-build-isolation", "-e", str(REPO))
    assert probe(py, tmp_path) == REPO / "backends" / "__init__.py"


def test_no_module_imports_a_top_level_backends():
    """Only the repository's root on sys.path makes `import backends` work (a test that ran
    after one that put it there passed here and failed in CI's fresh checkout): every source
    file in the repository imports `pedit.backends`."""
    import ast

    wrong = []
    for folder in ("pedit", "backends", "tests", "scripts"):
        for path in REPO.joinpath(folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
                if isinstance(node, ast.ImportFrom) and node.level == 0:
                    names = [node.module or ""]
                if any(n == "backends" or n.startswith("backends.") for n in names):
                    wrong.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert not wrong, wrong
