"""The pre-commit hook in real temporary git repositories, with real `git commit`s: native
install / uninstall / chaining, fix (staged or left for review) and check modes, a
partially staged file, the result cache, skipped files, the time budget, SKIP; and the
pre-commit framework itself running the shipped .pre-commit-hooks.yaml (what never loses
or damages a file: test_hook_safety.py; the repositories: gitrepo.py).

The model here is the reference backend: it copies its input (greedy), so these tests
cover everything but a real change; tests/test_hook_real.py makes real changes with the
default model (fix, review, check with a diff, a partially staged file).
"""

from __future__ import annotations

import json

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gitrepo import (
    COPYING,
    FIXED,
    NOTES,
    PARAGRAPHS,
    PEDIT,
    PYPROJECT,
    REPO_ROOT,
    commit,
    committed,
    install,
    make_repo,
    seed_fix,
    sh,
    staged,
)
from pedit.app import config
from pedit.errors import UsageError
from pedit.hook import git as hgit
from pedit.hook.cache import ResultCache
from pedit.hook.rewriter import changed_spans
from pedit.hook.rules import HookConfig, Rule, load, parse, with_overrides


@pytest.fixture
def repo(tmp_path) -> Path:
    return make_repo(tmp_path / "repo")


# --- rules and spans (no git commit) ---------------------------------------------------------


def test_rules_from_config_files(tmp_path):
    repo = make_repo(tmp_path / "r", extra='mode = "check"\nbudget = 10\n')
    config = load(repo)
    assert config.mode == "check" and config.budget == 10 and config.rules[0].files == ("*.md",)
    (repo / ".pedit.toml").write_text('[hook]\nrestage = true\n[[hook.rules]]\nfiles = ["docs/**/*.md"]\n')
    config = load(repo)  # .pedit.toml wins
    assert config.restage and config.rule_for("docs/a.md") and config.rule_for("docs/x/y/a.md")
    assert config.rule_for("README.md") is None
    assert Rule().matches("deep/down/notes.txt")
    with pytest.raises(UsageError, match="unknown key"):
        parse({"mdoe": "fix"}, "here")
    with pytest.raises(UsageError, match="needs an instruction"):
        parse({"rules": [{"command": "edit"}]}, "here")
    with pytest.raises(UsageError, match="mode must be one of"):
        parse({"mode": "rewrite"}, "here")
    over = with_overrides(HookConfig(), command="edit", instruction="Use British spelling", mode="check")
    assert over.mode == "check" and over.rule_for("x.py").instruction == "Use British spelling"


def test_only_the_blocks_with_changes_are_rewritten():
    lines = NOTES.count("\n")
    assert changed_spans(NOTES, None) is None  # a new file: all of it
    third = NOTES.index("A third")
    line = NOTES[:third].count("\n")
    spans = changed_spans(NOTES, [hgit.Lines(line + 1, 1)])
    assert spans == [(third, third + len(PARAGRAPHS[3]) + 1)]
    assert changed_spans(NOTES, [hgit.Lines(0, lines)]) is None  # most of the file: all of it
    assert changed_spans(NOTES, []) == []


# --- native hook ----------------------------------------------------------------------------


def test_install_chains_to_an_existing_hook_and_uninstall_restores_it(repo):
    hooks = repo / ".git" / "hooks"
    old = "#!/bin/sh\necho legacy ran > legacy-ran\n"
    (hooks / "pre-commit").write_text(old)
    (hooks / "pre-commit").chmod(0o755)
    out = sh(*PEDIT, "hook", "install", cwd=repo).stdout
    assert "pre-commit.legacy" in out and (hooks / "pre-commit.legacy").read_text() == old
    (repo / "plain.txt").write_text("not selected by the rules\n")
    sh("git", "add", "plain.txt", cwd=repo)
    assert commit(repo).returncode == 0
    assert (repo / "legacy-ran").exists()  # the previous hook ran first
    sh(*PEDIT, "hook", "install", cwd=repo)  # again: replaces itself, keeps the legacy hook
    assert (hooks / "pre-commit.legacy").read_text() == old
    sh(*PEDIT, "hook", "uninstall", cwd=repo)
    assert (hooks / "pre-commit").read_text() == old and not (hooks / "pre-commit.legacy").exists()
    again = sh(*PEDIT, "hook", "uninstall", cwd=repo, check=False)
    assert again.returncode == 2 and "not installed by pedit" in again.stderr


def test_install_refuses_core_hookspath_unless_told_where(repo):
    sh("git", "config", "core.hooksPath", ".githooks", cwd=repo)
    result = sh(*PEDIT, "hook", "install", cwd=repo, check=False)
    assert result.returncode == 2 and "core.hooksPath" in result.stderr
    assert not (repo / ".githooks").exists()
    sh(*PEDIT, "hook", "install", "--hooks-dir", ".githooks", cwd=repo)
    assert "pedit-hook" in (repo / ".githooks" / "pre-commit").read_text()
    sh(*PEDIT, "hook", "uninstall", "--hooks-dir", ".githooks", cwd=repo)
    assert not (repo / ".githooks" / "pre-commit").exists()


def test_cache_hit_on_an_unchanged_file(tmp_path):
    cache = tmp_path / "shared-cache"
    env = {"XDG_CACHE_HOME": str(cache)}
    results = []
    for name in ("a", "b"):  # two repositories, the same file: the second is a cache hit
        repo = make_repo(tmp_path / name, extra="restage = true\n", pyproject=COPYING)
        install(repo)
        (repo / "notes.md").write_text(NOTES)
        sh("git", "add", "notes.md", cwd=repo)
        results.append((commit(repo, env=env), repo))
    (first, a), (second, b) = results
    assert first.returncode == second.returncode == 0
    assert "(cached)" not in first.stderr and "(cached)" in second.stderr
    assert committed(a, "notes.md") == committed(b, "notes.md")
    # the model ran once, for the first (the user's default: the resident model's request)
    status = sh(*PEDIT, "daemon", "status", "--json", cwd=tmp_path, env=env)
    assert [s["served"] for s in json.loads(status.stdout)] == [1]


def test_files_it_cannot_handle_are_skipped_and_never_touched(tmp_path):
    repo = make_repo(tmp_path / "r", extra="max_bytes = 2000\n")
    install(repo)
    (repo / "binary.md").write_bytes(b"\x00\x01\x02 not text")
    (repo / "big.md").write_text("word " * 1000)
    sh("git", "add", "binary.md", "big.md", cwd=repo)
    result = commit(repo)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "skipped binary.md: not text" in result.stderr and "skipped big.md" in result.stderr
    assert (repo / "binary.md").read_bytes() == b"\x00\x01\x02 not text"
    assert committed(repo, "big.md") == "word " * 1000


@pytest.mark.parametrize("on_budget, code", [("pass", 0), ("fail", 1)])
def test_time_budget_fails_open_or_closed(tmp_path, on_budget, code):
    repo = make_repo(tmp_path / "r", extra=f'budget = 0\non_budget = "{on_budget}"\n')
    install(repo)
    (repo / "notes.md").write_text(NOTES)
    sh("git", "add", "notes.md", cwd=repo)
    result = commit(repo)
    assert result.returncode == code and "over the time budget" in result.stderr
    assert (repo / "notes.md").read_text() == NOTES == staged(repo, "notes.md")


def test_skip_and_no_verify(repo):
    install(repo)
    (repo / "notes.md").write_text(NOTES)
    sh("git", "add", "notes.md", cwd=repo)
    result = commit(repo, env={"SKIP": "pedit"})
    assert result.returncode == 0 and "skipped (SKIP=pedit)" in result.stderr
    assert committed(repo, "notes.md") == NOTES


def status(repo: Path, path: str) -> str:
    return sh("git", "status", "--short", "--", path, cwd=repo).stdout


@pytest.mark.parametrize("restage", [True, False])
def test_a_commit_that_names_its_files_never_leaves_the_index_undoing_the_fix(tmp_path, restage):
    """`git commit -m x q.md` runs the hook on a temporary index that git drops after the
    commit, keeping its own (locked meanwhile) with the text from before the fix. A fix
    staged there was committed, then undone by the next commit that skipped the hook
    (issue 37). Now, as pre-commit does for every fix, it is left in the working tree for
    review and the commit stops; committing again the same way commits the fix, and the
    index keeps it."""
    repo = make_repo(tmp_path / "r", extra=f"restage = {str(restage).lower()}\n")
    (repo / "q.md").write_text("Partial.\n")
    (repo / "r.md").write_text("Other.\n")
    sh("git", "add", "q.md", "r.md", cwd=repo)
    sh("git", "commit", "-qm", "init", "--no-verify", cwd=repo)
    install(repo)
    (repo / "q.md").write_text(NOTES)
    seed_fix(repo, "q.md", NOTES, FIXED)
    first = sh("git", "commit", "-m", "partial", "q.md", cwd=repo, check=False)
    assert first.returncode == 1, first.stderr
    note = " (not staged: a commit that names its files commits a temporary index git then drops)"
    review = "; review and `git add` it, then commit again"
    assert f"fixed q.md: 1 change(s) (cached){note if restage else ''}{review}" in first.stderr.splitlines()
    assert committed(repo, "q.md") == "Partial.\n" == staged(repo, "q.md")  # nothing committed or staged
    assert (repo / "q.md").read_text() == FIXED and status(repo, "q.md") == " M q.md\n"
    seed_fix(repo, "q.md", FIXED, FIXED)  # the model's answer to its fix: no change
    second = sh("git", "commit", "-m", "partial", "q.md", cwd=repo, check=False)  # after review
    assert second.returncode == 0 and "ok q.md: no changes (cached)" in second.stderr, second.stderr
    assert committed(repo, "q.md") == FIXED == staged(repo, "q.md") and status(repo, "q.md") == ""
    (repo / "r.md").write_text("Other, changed.\n")
    sh("git", "add", "r.md", cwd=repo)
    assert commit(repo, "next", env={"SKIP": "pedit"}).returncode == 0
    assert committed(repo, "q.md") == FIXED and committed(repo, "r.md") == "Other, changed.\n"
    assert sh("git", "status", "--short", cwd=repo).stdout == ""


def test_commit_all_restages_into_the_index_git_keeps(tmp_path):
    """`git commit -a` runs the hook on git's own index's lock file, which git then renames
    into place: a fix staged there is committed and stays staged."""
    repo = make_repo(tmp_path / "r", extra="restage = true\n")
    (repo / "q.md").write_text("Partial.\n")
    sh("git", "add", "q.md", cwd=repo)
    sh("git", "commit", "-qm", "init", "--no-verify", cwd=repo)
    install(repo)
    (repo / "q.md").write_text(NOTES)
    seed_fix(repo, "q.md", NOTES, FIXED)
    result = sh("git", "commit", "-a", "-m", "all", cwd=repo, check=False)
    assert result.returncode == 0 and "fixed q.md: 1 change(s) (cached) (staged)" in result.stderr, (
        result.stderr
    )
    assert committed(repo, "q.md") == FIXED == staged(repo, "q.md") == (repo / "q.md").read_text()
    assert sh("git", "status", "--short", cwd=repo).stdout == ""


def test_a_hook_stopped_midway_has_said_what_it_changed(tmp_path):
    """SIGTERM while the model works on the second file: the first file's fix is written and
    its line was printed when it was done, not lost with a summary never printed (issue 37);
    the last line says nothing else changed."""
    repo = make_repo(tmp_path / "r")
    (repo / "a.md").write_text(NOTES)
    (repo / "b.md").write_text("Another file.\n")
    sh("git", "add", "a.md", "b.md", cwd=repo)
    seed_fix(repo, "a.md", NOTES, FIXED)
    script = f"""
import os, signal, sys
from pedit.hook.rewriter import Rewriter
from pedit.cli.app import main
def stopped(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGTERM)
Rewriter.rewrite = stopped
os.chdir({str(repo)!r})
sys.argv = ["pedit", "hook", "run"]
main()
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert result.returncode == 143, result.stderr
    assert result.stdout.splitlines() == [
        "fixed a.md: 1 change(s) (cached); review and `git add` it, then commit again"
    ]
    assert result.stderr.splitlines()[-1] == (
        "pedit: error: terminated; the lines above say what was changed, nothing else was"
    )
    assert (repo / "a.md").read_text() == FIXED and (repo / "b.md").read_text() == "Another file.\n"
    assert staged(repo, "a.md") == NOTES


def test_model_missing_stops_the_commit_with_a_clear_line(repo):
    (repo / "pyproject.toml").write_text(
        PYPROJECT.format(extra="").replace('backend = "reference"', 'model = "/nowhere/model.gguf"')
    )
    install(repo)
    (repo / "notes.md").write_text(NOTES)
    sh("git", "add", "notes.md", "pyproject.toml", cwd=repo)
    result = commit(repo)  # git reports any failing hook as 1
    assert result.returncode == 1 and "SKIP=pedit" in result.stderr
    assert (repo / "notes.md").read_text() == NOTES
    direct = sh(*PEDIT, "hook", "run", cwd=repo, check=False)
    assert direct.returncode == 3  # the hook's own exit code: model missing


# --- the pre-commit framework ------------------------------------------------------------------


def test_pre_commit_framework_runs_the_shipped_hook(tmp_path):
    pre_commit = shutil.which("pre-commit", path=str(Path(sys.executable).parent))
    assert pre_commit, "pre-commit is a test dependency"
    hooks_repo = tmp_path / "pedit-hooks"  # the shipped .pre-commit-hooks.yaml, as a hook repository
    hooks_repo.mkdir()
    shutil.copy(REPO_ROOT / ".pre-commit-hooks.yaml", hooks_repo / ".pre-commit-hooks.yaml")
    sh("git", "init", "-q", "-b", "main", cwd=hooks_repo)
    sh("git", "add", ".", cwd=hooks_repo)
    sh("git", "-c", "user.name=T", "-c", "user.email=t@e.com", "commit", "-q", "-m", "hooks", cwd=hooks_repo)
    rev = sh("git", "rev-parse", "HEAD", cwd=hooks_repo).stdout.strip()
    repo = make_repo(tmp_path / "project", pyproject=COPYING)
    (repo / ".pre-commit-config.yaml").write_text(
        f"repos:\n- repo: {hooks_repo}\n  rev: {rev}\n  hooks:\n  - id: pedit-fix-system\n"
        "  - id: pedit-system\n    args: [--mode, check]\n    files: \\.md$\n"
    )
    (repo / "notes.md").write_text(NOTES)
    sh("git", "add", "notes.md", ".pre-commit-config.yaml", cwd=repo)
    env = {
        "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
    }
    first = sh(pre_commit, "run", "--verbose", "--files", "notes.md", cwd=repo, check=False, env=env)
    assert first.returncode == 0, first.stdout + first.stderr
    assert "pedit fix (installed pedit)" in first.stdout and "Passed" in first.stdout
    assert "ok notes.md: no changes" in first.stdout  # the hook's own line (pre-commit --verbose)
    second = sh(pre_commit, "run", "--verbose", "--files", "notes.md", cwd=repo, check=False, env=env)
    assert second.returncode == 0 and "ok notes.md: no changes (cached)" in second.stdout
    assert (repo / "notes.md").read_text() == NOTES


def test_the_result_cache_keys_on_the_keep_bias_spelling_chunk_size_and_skeleton(tmp_path):
    cache, rule, hc = ResultCache(tmp_path), Rule("*.md", "fix"), HookConfig()
    plain = cache.key("text", rule, hc, "m", "reference")
    assert cache.key("text", rule, hc, "m", "reference", 0.0) == plain
    assert cache.key("text", rule, hc, "m", "reference", 1.5) != plain
    ours = cache.key("text", rule, hc, "m", "reference", 1.5)  # spelling and chunk_tokens: the command's
    assert cache.key("text", rule, hc, "m", "reference", 1.5, (False, None)) != ours
    assert cache.key("text", rule, hc, "m", "reference", 1.5, (None, 0)) != ours
    # the skeleton's grammar changes a fix's answer: with it and without it, two keys
    on = cache.key("text", rule, hc, "m", "reference", 1.5, (None, None, True))
    assert on != ours and on != cache.key("text", rule, hc, "m", "reference", 1.5, (None, None, False))


def test_stopped_runs_end_at_their_next_event_and_over_budget_ones_too():
    """The runs in flight on other threads end when the hook stops them (Rewriter.stop: an
    Event their budget check reads, Cancelled), and a run past the deadline is OverBudget."""
    import time

    from pedit.errors import Cancelled
    from pedit.events import TextReceived
    from pedit.hook.rewriter import OverBudget, Rewriter

    settings = config.resolve({"backend": "reference"}, env={}, project=None)
    seen = []

    def events():
        for text in ("a", "b", "c"):
            seen.append(text)
            yield TextReceived(text)

    rewriter = Rewriter(settings, HookConfig(), time.monotonic() + 600, lambda _: None)
    rewriter.stop()
    with pytest.raises(Cancelled):
        rewriter._show(events(), "notes.md")
    assert seen == ["a"]
    late = Rewriter(settings, HookConfig(), time.monotonic() - 1, lambda _: None)
    with pytest.raises(OverBudget):
        late._show(events(), "notes.md")
