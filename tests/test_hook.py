"""The pre-commit hook in real temporary git repositories, with real `git commit`s: native
install / uninstall / chaining, fix (staged or left for review) and check modes, a
partially staged file, the result cache, skipped files, the time budget, SKIP; and the
pre-commit framework itself running the shipped .pre-commit-hooks.yaml.

The model here is the reference backend: it copies its input (greedy), so these tests
cover everything but a real change; tests/test_hook_real.py makes real changes with the
default model (fix, review, check with a diff, a partially staged file).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pedit import models
from pedit.app import config
from pedit.app.templates import templates
from pedit.backends.reference import ReferenceBackend
from pedit.errors import UsageError
from pedit.hook import git as hgit
from pedit.hook.cache import ResultCache
from pedit.hook.rewriter import changed_spans
from pedit.hook.rules import HookConfig, Rule, load, parse, with_overrides
from pedit.hook.run import run_hook
from tiny import model_work

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
    assert "loading" in first.stderr and "loading" not in second.stderr
    assert "(cached)" in second.stderr and committed(a, "notes.md") == committed(b, "notes.md")


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


# --- never lose or damage a file ---------------------------------------------------------------


def test_a_staged_submodule_is_skipped_not_read_as_a_blob(tmp_path):
    repo = make_repo(tmp_path / "r", pyproject=PYPROJECT.replace('["*.md"]', '["*.md", "sub"]'))
    install(repo)
    for name in ("sub", "other"):  # nested repositories, staged as gitlinks (mode 160000)
        make_repo(repo / name)
        sh("git", "add", name, cwd=repo)
    result = commit(repo)
    assert result.returncode == 0, result.stderr
    assert "skipped sub: a submodule" in result.stderr and "other" not in result.stderr  # no rule
    assert sh("git", "ls-tree", "HEAD", "sub", cwd=repo).stdout.startswith("160000 commit")


@pytest.mark.parametrize("restage", [True, False])
@pytest.mark.parametrize("instead", ["deleted", "a symlink"])
def test_a_staged_file_missing_from_the_working_tree_is_never_claimed_written(tmp_path, restage, instead):
    repo = make_repo(tmp_path / "r", extra=f"restage = {str(restage).lower()}\n")
    install(repo)
    notes = repo / "notes.md"
    notes.write_text(NOTES)
    sh("git", "add", "notes.md", cwd=repo)
    notes.unlink()
    if instead == "a symlink":
        (repo / "elsewhere.txt").write_text("not the staged text\n")
        notes.symlink_to("elsewhere.txt")
    seed_fix(repo, "notes.md", NOTES, FIXED)
    result = commit(repo)
    where = f"notes.md is {instead} in the working tree"
    if restage:  # the fix is in the commit; the working tree keeps its unstaged change
        assert result.returncode == 0, result.stderr
        assert f"fixed and staged notes.md: 1 change(s) (cached); {where}" in result.stderr
        assert committed(repo, "notes.md") == FIXED
    else:  # nowhere to put the fix for review: the user decides
        assert result.returncode == 1
        assert f"would fix notes.md: 1 change(s) (cached), but {where}; nothing written" in result.stderr
        assert staged(repo, "notes.md") == NOTES
    assert notes.is_symlink() if instead == "a symlink" else not os.path.lexists(notes)
    if instead == "a symlink":
        assert (repo / "elsewhere.txt").read_text() == "not the staged text\n"


def test_a_pure_rename_is_unchanged_text(tmp_path):
    repo = make_repo(tmp_path / "r", extra="restage = true\n")
    install(repo)
    (repo / "old.md").write_text(NOTES)
    sh("git", "add", "old.md", cwd=repo)
    sh("git", "commit", "-q", "-m", "old", "--no-verify", cwd=repo)
    sh("git", "mv", "old.md", "new.md", cwd=repo)
    seed_fix(repo, "new.md", NOTES, FIXED)  # what a rewrite of the whole text would give
    result = commit(repo)
    assert result.returncode == 0, result.stderr
    assert "ok new.md: no changes (renamed from old.md, text as in HEAD)" in result.stderr
    assert "loading" not in result.stderr and committed(repo, "new.md") == NOTES


def test_a_renamed_file_counts_its_changes_from_the_old_path(tmp_path):
    repo = make_repo(tmp_path / "r")
    (repo / "old.md").write_text(NOTES)
    sh("git", "add", "old.md", cwd=repo)
    sh("git", "commit", "-q", "-m", "old", "--no-verify", cwd=repo)
    sh("git", "mv", "old.md", "new.md", cwd=repo)
    text = NOTES.replace("A third paragraph", "A 3rd paragraph")
    (repo / "new.md").write_text(text)
    sh("git", "add", "new.md", cwd=repo)
    (entry,) = hgit.staged(repo)
    assert (entry.path, entry.base) == ("new.md", "old.md")
    third = text.index("A 3rd")
    line = text[:third].count("\n")
    assert hgit.changed_lines(repo, entry) == [hgit.Lines(line, 1)]
    block = PARAGRAPHS[3].replace("third", "3rd") + "\n"  # only its paragraph is rewritten, not all
    assert changed_spans(text, hgit.changed_lines(repo, entry)) == [(third, third + len(block))]


def test_staged_conflict_markers_skip_the_file(repo):
    install(repo)
    text = NOTES + "<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> topic\n"
    (repo / "notes.md").write_text(text)
    sh("git", "add", "notes.md", cwd=repo)
    seed_fix(repo, "notes.md", text, text.replace("ours", "Ours"))
    result = commit(repo)
    assert result.returncode == 0, result.stderr
    assert "skipped notes.md: has merge conflict markers" in result.stderr
    assert committed(repo, "notes.md") == (repo / "notes.md").read_text() == text
    assert not hgit.has_conflict_markers("Title\n=======\n\nText.\n")  # a Markdown heading


class Doctored(ReferenceBackend):
    """The reference model, which copies its input, with some characters written otherwise
    (`spell`: {"q": b"Q"} makes a small fix, {'"': b"'"} breaks JSON), ending its answer
    (end of turn, no closing fence) at its `stop_after`-th step if given, and calling
    `meanwhile()` at its first forward pass: the user at work while the model runs."""

    def __init__(self, spell=None, stop_after=None, meanwhile=None):
        super().__init__()
        self.spell = {ord(k): v for k, v in (spell or {}).items()}
        self.stop_after, self.meanwhile, self.steps = stop_after, meanwhile, 0

    def token_bytes(self, token):
        return self.spell.get(token) or super().token_bytes(token)

    def eval(self, tokens, *, n_logits=1):
        if self.meanwhile:
            self.meanwhile, meanwhile = None, self.meanwhile
            meanwhile()
        logits = super().eval(tokens, n_logits=n_logits)
        if len(tokens) == 1:  # a decoding step (speculate = "off")
            self.steps += 1
            if self.steps == self.stop_after:
                logits[-1, min(self.eos_ids)] = 1e9
        return logits


@pytest.mark.parametrize("way", ["restage", "review", "pre-commit"])
def test_an_edit_saved_while_the_model_runs_is_kept(tmp_path, monkeypatch, way):
    repo = make_repo(tmp_path / "r")
    notes = repo / "notes.md"
    notes.write_text(NOTES)
    sh("git", "add", "notes.md", cwd=repo)
    edit = NOTES + "\nA line the user saved while pedit ran.\n"
    model = Doctored(spell={"q": b"Q"}, meanwhile=lambda: notes.write_text(edit))  # a fix, always
    monkeypatch.setattr(models, "load", model_work(lambda: model))
    hook_config = HookConfig(restage=way == "restage")
    settings = config.resolve({"backend": "reference", "speculate": "off"}, project=None)
    files = [str(notes)] if way == "pre-commit" else None
    out = run_hook(repo, hook_config, settings, files, cache_dir=tmp_path / "cache")
    assert notes.read_text() == edit, out.lines  # the edit is kept, nothing written over it
    (line,) = out.lines
    if way == "restage":
        assert line.startswith("fixed and staged notes.md") and "not written there" in line
        assert staged(repo, "notes.md") == NOTES.replace("quick", "Quick") and out.code == 0
    else:
        assert line.startswith("not fixed notes.md: it changed") and "nothing written" in line
        assert staged(repo, "notes.md") == NOTES and out.code == 1


def direct(
    repo: Path, tmp_path: Path, way: str, file: str, files: tuple[str, ...] = ("*.md",), *, skeleton: bool = True
):
    """The hook in this process, as `way` (restage, review, check or pre-commit) runs it,
    with one `fix` rule for `files`: (a function that runs it on `file` and returns the
    HookReport, its result cache, the cache's key for a text of `file`). `skeleton=False`:
    the config's `skeleton = false` (no skeleton grammar: answers it would forbid reach the guard)."""
    mode = "check" if way == "check" else "fix"
    hook_config = HookConfig(rules=(Rule(files),), mode=mode, restage=way == "restage")
    given = {"backend": "reference", "speculate": "off", "skeleton": skeleton}
    settings = config.resolve(given, project=None)
    cache = ResultCache(tmp_path / "cache")
    model = settings.model
    rule = hook_config.rule_for(file)
    bias = templates()[rule.command].bias(settings.keep_bias)
    key = lambda text: cache.key(text, rule, hook_config, model, "reference", bias, (None, None, skeleton))  # noqa: E731
    files = [str(repo / file)] if way == "pre-commit" else None
    return lambda: run_hook(repo, hook_config, settings, files, cache_dir=tmp_path / "cache"), cache, key


REFUSED = {  # a file, its text, a fix of it that the guard refuses, and why
    "notes.md": (NOTES, NOTES.replace(PARAGRAPHS[3] + "\n", ""),
                 'a fix drops a paragraph ("A third paragraph'),
    "data.json": ('{"name": "pedit",\n "tags": ["cli"]}\n', '{"name": "pedit",\n "tags": ["cli"]\n',
                  "the rewrite is not valid JSON"),
}  # fmt: skip


@pytest.mark.parametrize("way", ["restage", "review", "check", "pre-commit"])
@pytest.mark.parametrize("name", sorted(REFUSED))
def test_a_cached_fix_the_guard_refuses_is_never_staged_or_written(tmp_path, monkeypatch, name, way):
    text, bad, why = REFUSED[name]
    repo = make_repo(tmp_path / "r")
    (repo / name).write_text(text)
    sh("git", "add", name, cwd=repo)
    run, cache, key = direct(repo, tmp_path, way, name, ("*.md", "*.json"))
    cache.put(key(text), bad)  # as if the model had answered it
    monkeypatch.setattr(models, "load", model_work(lambda: pytest.fail("the fix is cached")))
    out = run()
    (line,) = out.lines  # no diff in check mode: not a fix
    assert line.startswith(f"not fixed {name}: the model's rewrite is refused: {why}"), line
    assert line.endswith("; left as staged") and out.code == 0  # the commit goes on
    assert (repo / name).read_text() == staged(repo, name) == text
    assert cache.get(key(bad)) is None  # not stored as a fixed text either


def test_a_new_fix_the_guard_refuses_is_not_cached_and_the_commit_goes_on(tmp_path, monkeypatch):
    text = 'name = "pedit"\ntags = ["cli"]\n'
    repo = make_repo(tmp_path / "r")
    (repo / "data.toml").write_text(text)
    sh("git", "add", "data.toml", cwd=repo)
    monkeypatch.setattr(models, "load", model_work(lambda: Doctored(spell={"[": b"{"})))
    # with the skeleton grammar, a TOML file's code cannot change: nothing to refuse
    run, _, _ = direct(repo, tmp_path / "on", "restage", "data.toml", ("*.toml",))
    assert run().lines == ["ok data.toml: no changes"] and (repo / "data.toml").read_text() == text
    run, cache, key = direct(repo, tmp_path, "restage", "data.toml", ("*.toml",), skeleton=False)
    out = run()
    (line,) = out.lines
    refused = "not fixed data.toml: the model's rewrite is refused: the rewrite is not valid TOML"
    assert line.startswith(refused)
    assert out.code == 0 and (repo / "data.toml").read_text() == staged(repo, "data.toml") == text
    assert cache.get(key(text)) is None and not list((tmp_path / "cache").rglob("*.*"))


def test_a_json_file_cannot_be_fixed_into_invalid_json(tmp_path, monkeypatch):
    """The same model on a .json file: the JSON grammar never lets it write the broken
    quote, so no invalid answer exists to refuse; it runs out of room, and the file stays."""
    text = REFUSED["data.json"][0]
    repo = make_repo(tmp_path / "r")
    (repo / "data.json").write_text(text)
    sh("git", "add", "data.json", cwd=repo)
    monkeypatch.setattr(models, "load", model_work(lambda: Doctored(spell={'"': b"'"})))
    run, cache, key = direct(repo, tmp_path, "restage", "data.json", ("*.json",))
    out = run()
    (line,) = out.lines
    assert line.startswith("not fixed data.json: the model's answer was cut off")
    assert out.code == 0 and (repo / "data.json").read_text() == staged(repo, "data.json") == text
    assert cache.get(key(text)) is None


def test_a_refused_fix_lets_a_real_commit_go_on_unchanged(tmp_path):
    repo = make_repo(tmp_path / "r", extra="restage = true\n")
    install(repo)
    (repo / "notes.md").write_text(NOTES)
    sh("git", "add", "notes.md", cwd=repo)
    seed_fix(repo, "notes.md", NOTES, REFUSED["notes.md"][1])
    result = commit(repo)
    assert result.returncode == 0, result.stderr
    assert "not fixed notes.md: the model's rewrite is refused: a fix drops a paragraph" in result.stderr
    assert committed(repo, "notes.md") == (repo / "notes.md").read_text() == NOTES


@pytest.mark.parametrize("way", ["restage", "check", "pre-commit"])
def test_an_incomplete_answer_is_not_fixed_and_the_commit_goes_on(tmp_path, monkeypatch, way):
    repo = make_repo(tmp_path / "r")
    (repo / "notes.md").write_text(NOTES)
    sh("git", "add", "notes.md", cwd=repo)
    monkeypatch.setattr(models, "load", model_work(lambda: Doctored(spell={"q": b"Q"}, stop_after=20)))
    # a stop before the end is what the skeleton grammar forbids: without it, as on a server
    run, cache, key = direct(repo, tmp_path, way, "notes.md", skeleton=False)
    out = run()
    (line,) = out.lines
    assert line.startswith("not fixed notes.md: the model's answer ended after "), line
    assert line.endswith("without closing its code block (an incomplete rewrite); left as staged")
    assert out.code == 0 and (repo / "notes.md").read_text() == staged(repo, "notes.md") == NOTES
    assert cache.get(key(NOTES)) is None and not list((tmp_path / "cache").rglob("*.*"))


@pytest.mark.parametrize("user", ["stages the rest", "edits and stages"])
def test_a_git_add_made_while_the_model_runs_is_never_overwritten(tmp_path, monkeypatch, user):
    repo = make_repo(tmp_path / "r")
    notes = repo / "notes.md"
    notes.write_text(NOTES)
    sh("git", "add", "notes.md", cwd=repo)
    later = NOTES + "\nA line the user staged while pedit ran.\n"
    if user == "stages the rest":  # partially staged; `git add` stages the rest meanwhile
        notes.write_text(later)

    def meanwhile():
        if user == "edits and stages":
            notes.write_text(later)
        sh("git", "add", "notes.md", cwd=repo)

    monkeypatch.setattr(models, "load", model_work(lambda: Doctored({"q": b"Q"}, meanwhile=meanwhile)))
    run, cache, key = direct(repo, tmp_path, "restage", "notes.md")
    out = run()
    assert out.lines == [
        "not fixed notes.md: its staged content changed while pedit ran (a `git add`?); nothing staged"
        " or written, commit again"
    ]
    assert out.code == 1 and staged(repo, "notes.md") == notes.read_text() == later


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
