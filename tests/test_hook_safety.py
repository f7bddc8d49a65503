"""The pre-commit hook never loses or damages a file, in real temporary git repositories with
real `git commit`s: staged submodules, files missing from the working tree, renames,
conflict markers, edits and `git add`s made while the model runs, and fixes the guard
refuses, from the cache or new (the repositories: gitrepo.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gitrepo import (
    FIXED,
    NOTES,
    PARAGRAPHS,
    PYPROJECT,
    commit,
    committed,
    install,
    make_repo,
    seed_fix,
    sh,
    staged,
)
from pedit import models
from pedit.app import config
from pedit.app.templates import templates
from pedit.backends.reference import ReferenceBackend
from pedit.hook import git as hgit
from pedit.hook.cache import ResultCache
from pedit.hook.rewriter import changed_spans
from pedit.hook.rules import HookConfig, Rule
from pedit.hook.run import run_hook
from tiny import model_work


@pytest.fixture
def repo(tmp_path) -> Path:
    return make_repo(tmp_path / "repo")


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
    repo: Path,
    tmp_path: Path,
    way: str,
    file: str,
    files: tuple[str, ...] = ("*.md",),
    *,
    skeleton: bool = True,
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
