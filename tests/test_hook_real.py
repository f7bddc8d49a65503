"""The pre-commit hook with the real default model making real fixes, in temporary git
repositories with real `git commit`s: fix and stage, fix for review then commit the
reviewed file from the cache, check mode with a diff, and a partially staged file whose
staged part is fixed while its unstaged part stays intact."""

from __future__ import annotations

import pytest

from gitrepo import commit, committed, install, make_repo, sh, staged

pytestmark = pytest.mark.slow

REAL = """\
[tool.pedit]
backend = "llama.cpp"

[tool.pedit.hook]
{extra}
[[tool.pedit.hook.rules]]
files = ["*.md"]
"""

ESSAY = (
    "# Reading\n\nTheir is many reasons why peoples enjoys reading. A good book take you to another world.\n"
)
GOOD = [
    "# Notes\n",
    "We met on Monday to plan the release.\n",
    "The tests pass on both backends, and the documentation is up to date.\n",
    "Anna will write the announcement.\n",
    "The release is on Friday.\n",
]
NOTES = "\n".join(GOOD)


def test_fix_is_staged_and_committed(default_model_env, tmp_path):
    repo = make_repo(tmp_path / "r", extra="restage = true\n", pyproject=REAL)
    install(repo)
    (repo / "essay.md").write_text(ESSAY)
    sh("git", "add", "essay.md", cwd=repo)
    result = commit(repo)
    assert result.returncode == 0, result.stderr
    assert "fixed essay.md" in result.stderr and "(staged)" in result.stderr
    fixed = committed(repo, "essay.md")
    assert fixed != ESSAY and fixed.startswith("# Reading\n")
    assert (repo / "essay.md").read_text() == fixed and sh(
        "git", "status", "--porcelain", cwd=repo
    ).stdout == ""


def test_fix_for_review_then_the_reviewed_file_commits_without_the_model(default_model_env, tmp_path):
    repo = make_repo(tmp_path / "r", pyproject=REAL)
    install(repo)
    (repo / "essay.md").write_text(ESSAY)
    sh("git", "add", "essay.md", cwd=repo)
    first = commit(repo)
    assert first.returncode == 1 and "review and `git add` it" in first.stderr
    fixed = (repo / "essay.md").read_text()
    assert fixed != ESSAY and staged(repo, "essay.md") == ESSAY  # the index is untouched
    sh("git", "add", "essay.md", cwd=repo)
    second = commit(repo)
    assert second.returncode == 0, second.stderr
    assert "ok essay.md: no changes (cached)" in second.stderr and "loading" not in second.stderr
    assert committed(repo, "essay.md") == fixed


def test_check_mode_fails_with_a_diff_and_writes_nothing(default_model_env, tmp_path):
    repo = make_repo(tmp_path / "r", extra='mode = "check"\n', pyproject=REAL)
    install(repo)
    (repo / "essay.md").write_text(ESSAY)
    sh("git", "add", "essay.md", cwd=repo)
    result = commit(repo)
    assert result.returncode == 1 and "would fix essay.md" in result.stderr
    assert "--- a/essay.md" in result.stderr and "-Their is many reasons" in result.stderr
    assert (repo / "essay.md").read_text() == ESSAY == staged(repo, "essay.md")


def test_partially_staged_file_staged_part_fixed_unstaged_part_intact(default_model_env, tmp_path):
    repo = make_repo(tmp_path / "r", extra="restage = true\n", pyproject=REAL)
    (repo / "notes.md").write_text(NOTES)
    sh("git", "add", "notes.md", cwd=repo)
    sh("git", "commit", "-q", "-m", "notes", "--no-verify", cwd=repo)
    install(repo)
    error = "Their is many reasons why peoples enjoys reading.\n"
    staged_text = NOTES.replace(GOOD[3], error)  # the change to commit, with errors
    (repo / "notes.md").write_text(staged_text)
    sh("git", "add", "notes.md", cwd=repo)
    (repo / "notes.md").write_text(staged_text.replace("# Notes", "# Release notes"))  # unstaged
    result = commit(repo)
    assert result.returncode == 0, result.stderr
    new = committed(repo, "notes.md")
    assert new.startswith("# Notes\n")  # the unstaged heading is not committed
    for paragraph in (GOOD[1], GOOD[2], GOOD[4]):  # only the changed block was rewritten
        assert paragraph in new
    assert error not in new  # the model fixed the staged block
    work = (repo / "notes.md").read_text()
    assert work == new.replace("# Notes", "# Release notes", 1)  # unstaged change kept, fix applied
    unstaged = sh("git", "diff", cwd=repo).stdout
    assert "+# Release notes" in unstaged and "Their" not in unstaged
