"""`pedit hook run`: rewrite the staged files of a commit, safely and within a time budget.

Two ways in:
  native (`pedit hook install`; no FILES): the files come from the index, their content is
      the *staged* blob, never the working tree. A fix is staged (restage = true) or left
      for review (false), and merged into the working tree with `git merge-file`, so a
      partially staged file keeps its unstaged part.
  pre-commit framework (FILES given): pre-commit has already stashed unstaged changes, so
      the files on disk are the staged content; fixes are written to them (pre-commit
      then fails the commit for review, its convention).

Per file: the first matching rule; submodules, binary files, files over max_bytes and
files with merge conflict markers are skipped with a line (symlinks silently); a file whose
text is as in HEAD (a pure rename, a mode change) is ok without a model; then the result
cache (no model load when every file is cached); otherwise the model (loaded once, on first
need) rewrites only the blocks with staged changes when the file is in HEAD (under its old
name for a rename) and the changes are a small part of it, else the whole file.

Nothing unsafe is written or cached: an answer that is not a whole rewrite (guard.incomplete:
cut off, no closing fence, empty) and a rewrite guard.judge refuses (a structured file
that no longer parses; for `fix`, too much changed, a paragraph dropped, code changed),
cached or new, leave the file as staged with a `not fixed` line, and the commit goes on:
the staged text is not made worse (as on_budget = "pass"), and check mode does not count
it as a fix. Writing back: worktree.py.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from .. import models
from ..app import atomic, fileio
from ..app.config import Settings
from ..app.hunks import hunks
from ..checks import guard
from ..errors import ExitCode, ModelError, PeditError, RefusedError, UsageError
from ..events import Stats
from ..ui.render import unified_diff
from . import git, worktree
from .cache import ResultCache
from .rewriter import OverBudget, Rewriter
from .rules import HookConfig


@dataclass
class HookReport:
    """What the hook prints, and whether the commit should stop. Each line is shown
    (`echo`) as it is said, so a hook stopped midway (SIGTERM, Ctrl-C) has already said what
    it changed: a file's change and its line are one uninterrupted step (_one)."""

    lines: list[str] = field(default_factory=list)
    failed: bool = False  # the commit should stop
    code: int = 0
    echo: Callable[[str], None] = lambda _: None
    unstaged: str = ""  # why a fix is left for review although restage = true, said with it

    def say(self, line: str, failed: bool = False) -> None:
        self.lines.append(line)
        self.echo(line)
        self.failed |= failed


def run_hook(
    repo: Path,
    config: HookConfig,
    settings: Settings,
    files: list[str] | None = None,
    *,
    cache_dir: Path | None = None,
    notify: Callable[[str], None] = lambda _: None,
    echo: Callable[[str], None] = lambda _: None,
) -> HookReport:
    """The hook over the staged files (files=None) or the given ones (pre-commit); each of
    its lines goes to `echo` as it is said."""
    start = time.monotonic()
    rewriter = Rewriter(settings, config, start + config.budget, notify)
    cache = ResultCache(cache_dir or models.cache_root() / "hook")
    out = HookReport(echo=echo)
    native = files is None
    config = _as_this_commit_allows(repo, config, native, out)
    fail = config.on_budget == "fail"  # past the budget: stop the commit
    entries = git.staged(repo) if native else git.given(repo, [_relative(repo, f) for f in files])
    over = False
    pool = None
    try:
        runs: dict = {}
        if rewriter.jobs > 1:  # a server: every file's model run at once, the rest in order below
            from concurrent.futures import ThreadPoolExecutor

            pool = ThreadPoolExecutor(rewriter.jobs)
            runs = _ahead(repo, entries, config, rewriter, cache, native, pool)
        for entry in entries:
            path = entry.path
            rule = config.rule_for(path)
            if rule is None:
                continue
            if over:
                out.say(f"skipped {path}: over the time budget ({config.budget:.0f} s)", fail)
                continue
            try:
                _one(repo, entry, rule, config, rewriter, cache, out, native, runs)
            except OverBudget:
                over = True
                out.say(f"skipped {path}: over the time budget ({config.budget:.0f} s); unchanged", fail)
            except ModelError as exc:
                out.say(f"pedit: {exc.message} (SKIP=pedit git commit ... commits without the hook)", True)
                out.code = ExitCode.MODEL
                break
            except PeditError as exc:
                out.say(f"error {path}: {exc.message}; unchanged", True)
    finally:
        if pool is not None:  # runs still in flight end at their next event (Cancelled)
            rewriter.stop()
            pool.shutdown(wait=True, cancel_futures=True)
        rewriter.close()
    if over and config.on_budget == "pass":
        out.say('pedit: the time budget ran out; the commit goes on (on_budget = "pass")')
    if out.failed and not out.code:
        out.code = ExitCode.CHANGED
    return out


def _as_this_commit_allows(repo: Path, config: HookConfig, native: bool, out: HookReport) -> HookConfig:
    """`config`, but for a commit that names its files (`git commit FILE`: git runs the hook
    on a temporary index it drops afterwards, git.kept_index) fixes are left in the working
    tree for review, as pre-commit leaves every fix, even with restage = true: staged there,
    a fix would be committed while git's own index kept the text before it, and the next
    commit would undo it. Each such fix's line says why."""
    if not (native and config.restage) or git.kept_index(repo):
        return config
    out.unstaged = " (not staged: a commit that names its files commits a temporary index git then drops)"
    return replace(config, restage=False)


def _relative(repo: Path, file: str) -> str:
    path = Path(file)
    absolute = path if path.is_absolute() else Path.cwd() / path
    try:
        return absolute.resolve().relative_to(repo.resolve()).as_posix()
    except ValueError as exc:
        raise UsageError(f"{file}: not inside the repository {repo}") from exc


def _ahead(repo, entries, config, rewriter, cache, native: bool, pool) -> dict:
    """A server's model runs, all started now ({path: (text sent, future)}), for the files
    `_one` will want a fresh rewrite of; `_one` takes a run's result if the text it reads
    then is the one that was sent (a file edited meanwhile runs again)."""
    rewriter.load()  # once, here, not in several threads
    runs = {}
    for entry in entries:
        rule = config.rule_for(entry.path)
        if rule is None:
            continue
        job = _job(repo, entry, rule, config, rewriter, cache, HookReport(), native)
        if job is not None and job.cached is None:
            future = pool.submit(rewriter.rewrite, job.source.text, entry.path, rule, job.changed)
            runs[entry.path] = (job.source.text, future)
    return runs


@dataclass(frozen=True, kw_only=True)
class Job:
    """One staged file to fix: what was read, and what the cache knows of it."""

    data: bytes  # the bytes to fix (staged, or the file with pre-commit)
    source: fileio.Source  # their text
    snap: worktree.Snapshot  # the working-tree file as read before any model runs
    changed: list | None  # the lines changed since HEAD (None: all of them)
    cached: str | None  # a rewrite the result cache holds for this text, if any
    key: Callable[[str], str]  # the result cache's key of a text under this rule and model
    judged: bool  # its template asks for the guard's fix checks (Template.judged)


def _job(repo, entry: git.Staged, rule, config, rewriter, cache, out: HookReport, native: bool) -> Job | None:
    """The file's Job, or None for a file with nothing to do (its line said)."""
    path = entry.path
    read = _read(repo, entry, config, out, native)
    if read is None:
        return None
    data, source, snap = read
    changed = git.changed_lines(repo, entry) if native or data == _staged_or_none(repo, path) else None
    if changed == []:
        moved = f"renamed from {entry.base}, " if entry.base != path else ""
        out.say(f"ok {path}: no changes ({moved}text as in HEAD)")
        return None
    template = rewriter.settings.prompt_templates()[rule.command]
    s = rewriter.settings
    bias, recipe = template.bias(s.keep_bias), (s.spelling, s.chunk_tokens, s.skeleton)
    keyed = lambda text: cache.key(text, rule, config, rewriter.model, rewriter.backend_name, bias, recipe)  # noqa: E731
    return Job(
        data=data,
        source=source,
        snap=snap,
        changed=changed,
        cached=cache.get(keyed(source.text)),
        key=keyed,
        judged=template.judged,
    )


def _one(repo, entry: git.Staged, rule, config, rewriter, cache, out: HookReport, native: bool,
         runs: dict | None = None) -> None:  # fmt: skip
    path, file = entry.path, repo / entry.path
    job = _job(repo, entry, rule, config, rewriter, cache, out, native)
    if job is None:
        return
    data, source, snap, changed, keyed = job.data, job.source, job.snap, job.changed, job.key
    new = job.cached
    stats: list[Stats] = []
    fresh = new is None
    if fresh:
        sent = (runs or {}).get(path)
        try:
            if sent is not None and sent[0] == source.text:
                new, stats = sent[1].result()
            else:
                new, stats = rewriter.rewrite(source.text, path, rule, changed)
        except RefusedError as exc:  # not a whole rewrite: nothing to write or cache
            out.say(f"not fixed {path}: {exc.reason}; left as staged")
            return
    refusal = guard.judge(path, source.text, new, judged=job.judged) if new != source.text else None
    if refusal:
        out.say(f"not fixed {path}: the model's rewrite is refused: {refusal.reason}; left as staged")
        return
    if fresh:
        cache.put(keyed(source.text), new)
        cache.put(keyed(new), new)
    if new == source.text:
        out.say(f"ok {path}: no changes{'' if fresh else ' (cached)'}")  # fresh, no stats: no prose to fix
        return
    what = f"{len(hunks(source.text, new))} change(s){_figures(stats)}{out.unstaged}"
    if config.mode == "check":
        out.say(f"would fix {path}: {what}", True)
        for line in unified_diff(source.text, new, path):
            out.say(line.rstrip("\n"))
        return
    fixed = source.encode(new)
    with atomic.uninterrupted():  # the index, the working tree and the file's line: all or none
        if native:
            worktree.apply_native(repo, path, data, entry.blob, fixed, snap, config.restage, what, out.say)
        else:  # pre-commit: the file on disk is the staged content
            worktree.apply_file(file, path, fixed, snap, what, out.say)


def _read(repo, entry: git.Staged, config, out: HookReport, native: bool):
    """(the bytes to fix, their text, the working-tree file as read now before any model
    runs), or None for what is not a text to fix, after its `skipped` line (a symlink or,
    with pre-commit, anything but a regular file: silently)."""
    path, file = entry.path, repo / entry.path
    if native and entry.mode == git.GITLINK:
        out.say(f"skipped {path}: a submodule")
        return None
    if native and entry.mode == git.SYMLINK:
        return None  # a symlink: its blob is the link, not text to fix
    snap = worktree.snapshot(file)  # what a write must still find there (native: the merge's "ours")
    if not native and snap.data is None:
        return None  # pre-commit passes files, not symlinks or folders
    data = git.blob(repo, entry.blob) if native else snap.data  # the staged blob, by its id
    if len(data) > config.max_bytes:
        out.say(f"skipped {path}: {len(data)} bytes, over max_bytes ({config.max_bytes})")
        return None
    try:
        source = fileio.decode(data, path, file)
    except UsageError:
        out.say(f"skipped {path}: not text")
        return None
    if git.has_conflict_markers(source.text):
        out.say(f"skipped {path}: has merge conflict markers")
        return None
    return data, source, snap


def _staged_or_none(repo: Path, path: str) -> bytes | None:
    try:
        return git.staged_blob(repo, path)
    except UsageError:
        return None


def _figures(stats: list[Stats]) -> str:
    if not stats:
        return " (cached)"
    total = Stats.total(stats)
    speed = f", {total.speedup:.1f}x" if total.speedup else ""
    return f", {total.completion_tokens} tokens in {total.prefill_seconds + total.decode_seconds:.1f}s{speed}"
