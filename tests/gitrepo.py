"""A real git repository for the hook's tests (test_hook*.py, test_markup.py, test_resident.py):
one made with a pyproject.toml of hook rules, pedit's hook installed in it, real commits, and
a fix seeded in the hook's result cache where the reference model (which copies its input)
should make one."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from pedit import models
from pedit.app import config
from pedit.app.templates import templates
from pedit.hook.cache import ResultCache
from pedit.hook.rules import load

REPO_ROOT = Path(__file__).resolve().parents[1]
PEDIT = [sys.executable, "-m", "pedit"]

PYPROJECT = """\
[tool.pedit]
backend = "reference"

[tool.pedit.hook]
{extra}
[[tool.pedit.hook.rules]]
files = ["*.md"]
"""

PARAGRAPHS = [
    "# Notes\n",
    "The quick brown fox jumps over the lazy dog.\nIt was the best of times, it was the worst of times.\n",
    "And so it goes, and so it went.\nOne more line here.\n",
    "A third paragraph, far from the others.\nIt has two lines.\n",
    "The last paragraph of the file.\n",
]
NOTES = "\n".join(PARAGRAPHS)
FIXED = NOTES.replace("The quick brown fox", "The quick, brown fox")  # a fix the model might make
# Where the model runs on a file (no answer seeded), without the tools' suggestions, which
# lead the random model off the file (conftest.copying_tiny_models) and change the cache key
COPYING = PYPROJECT.replace('backend = "reference"\n', 'backend = "reference"\nspelling = false\n')


def sh(*args, cwd: Path, check: bool = True, env: dict | None = None) -> subprocess.CompletedProcess:
    result = subprocess.run(args, cwd=cwd, capture_output=True, text=True, env={**os.environ, **(env or {})})
    if check and result.returncode != 0:
        raise AssertionError(f"{args} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
    return result


def make_repo(path: Path, extra: str = "", pyproject: str = PYPROJECT) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    sh("git", "init", "-q", "-b", "main", cwd=path)
    for key, value in (("user.name", "Test"), ("user.email", "t@example.com"), ("commit.gpgsign", "false")):
        sh("git", "config", key, value, cwd=path)
    (path / "pyproject.toml").write_text(pyproject.format(extra=extra))
    sh("git", "add", "pyproject.toml", cwd=path)
    sh("git", "commit", "-q", "-m", "config", "--no-verify", cwd=path)
    return path


def install(repo: Path) -> None:
    sh(*PEDIT, "hook", "install", cwd=repo)


def commit(repo: Path, message: str = "change", env: dict | None = None) -> subprocess.CompletedProcess:
    """A real `git commit` (the hook's output arrives on git's stderr)."""
    return sh("git", "commit", "-m", message, cwd=repo, check=False, env=env)


def staged(repo: Path, path: str) -> str:
    return sh("git", "show", f":{path}", cwd=repo).stdout


def committed(repo: Path, path: str) -> str:
    return sh("git", "show", f"HEAD:{path}", cwd=repo).stdout


def seed_fix(repo: Path, path: str, text: str, fixed: str) -> None:
    """Put `fixed` in the result cache as the model's answer for `text` (the reference model
    copies its input, so a real change comes from here); commits run with this test's
    XDG_CACHE_HOME (conftest.py) and the repository's settings, so they find it."""
    hook_config, settings = load(repo), config.resolve({}, project=repo / "pyproject.toml")
    cache = ResultCache(models.cache_root() / "hook")
    rule = hook_config.rule_for(path)
    bias = templates(settings.templates)[rule.command].bias(settings.keep_bias)  # as the hook keys it
    recipe = (settings.spelling, settings.chunk_tokens, settings.skeleton)  # as the hook keys it
    cache.put(cache.key(text, rule, hook_config, settings.model, "reference", bias, recipe), fixed)
