"""No user text is read as markup on the command line or in the hook (issue 54; the
interactive session's: tests/test_tui_hostile.py): a file name, a path, a model spec and a
config value holding `[/]`, `[bold]` or `[link=x]` are printed as typed, by real processes
on their real standard error."""

from __future__ import annotations

import os
import subprocess
import sys

from gitrepo import COPYING, commit, install, make_repo, sh

PEDIT = [sys.executable, "-m", "pedit"]
NAME = "notes [bold]x [link=x] [red]y [on blue].md"  # a name cannot hold "/": "[/]" is in the paths below
TEXT = "Their is a reason.\n"


def run(*args, cwd, env=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*PEDIT, *args], cwd=cwd, capture_output=True, text=True, env=os.environ | (env or {})
    )


def test_a_file_name_is_printed_as_typed(tmp_path):
    (tmp_path / NAME).write_text(TEXT)
    got = run("fix", NAME, "--check", "-b", "reference", "--no-spelling", cwd=tmp_path)
    assert got.returncode in (0, 1), got.stderr
    assert f"pedit: {NAME}: " in got.stderr
    (tmp_path / NAME).chmod(0o444)
    got = run("fix", NAME, "-y", "-b", "reference", cwd=tmp_path)
    assert got.returncode == 2
    assert got.stderr.strip().splitlines()[-1] == f"pedit: error: {NAME}: read-only file, not written"


def test_a_model_spec_and_a_config_value_are_printed_as_typed(tmp_path):
    spec = "~/m/old[/]q [bold].gguf"
    got = run("config", cwd=tmp_path, env={"PEDIT_MODEL": spec})
    assert got.returncode == 0, got.stderr
    row = next(line for line in got.stdout.splitlines() if line.split()[:1] == ["model"])
    assert row.split(None, 1)[1].startswith(f"{spec} ")  # the spec whole, after its column
    got = run("models", cwd=tmp_path, env={"PEDIT_MODEL": spec})
    assert got.returncode == 0, got.stderr
    assert f"default model: {spec} (from env PEDIT_MODEL)" in got.stdout
    (tmp_path / "a.md").write_text(TEXT)
    got = run("fix", "a.md", "--check", "-m", spec, cwd=tmp_path)
    assert got.returncode == 3
    assert spec in got.stderr.strip().splitlines()[-1]


def test_the_hook_prints_a_file_name_as_typed(tmp_path):
    repo = make_repo(tmp_path / "repo", pyproject=COPYING)
    install(repo)
    (repo / NAME).write_text(TEXT)
    sh("git", "add", NAME, cwd=repo)
    done = commit(repo)
    assert NAME in done.stderr + done.stdout, done.stderr
