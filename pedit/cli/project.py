"""A rename across the project: `pedit refactor pkg/util.py "rename parse_line to parse_record"`.

    plan     before any model loads: the file's project (app/project.py); for Python, rope's
             rename of every file (tools/projectrename.py), the other files it changes read
             (stamped), locked and checked writable if the mode writes; for another
             language, a refusal when an old name is an identifier in other files of the
             project's language too (a token rename has no scopes: it cannot tell them apart)
    answer   the defining file through the model and its checks, as a one-file refactor
             (rewrite.Run.one); its answer held to rope's edit of that file (the code must
             be rope's: else rope's edit is written); a module renamed needs no model
    others   rope's exact edit, written without a model pass: it is the edit a tool proves
             (the references rope resolved), each file checked as the defining one (parses,
             every changed line names an old or new name, no name left unbound)
    write    every file together or none (app/together.py); any refusal, for any file, is
             the whole rename's, with or without --force
    report   the leftovers rope could not resolve, by file and line; one line "renamed in N
             files"; --diff and --check show every file, in path order

Nothing here runs for --no-project, a file of no project, or a rename whose only change
is in the file itself (the one-file refactor, as before).
"""

from __future__ import annotations

import contextlib
import copy
import time
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from ..app import fileio, together
from ..app.project import Project, TooLarge, find
from ..checks import guard
from ..checks.intentcheck import check
from ..errors import ConflictError, ExitCode, PeditError, RefusedError, UsageError
from ..tools import intent as intents
from ..tools import rename as rename_tool
from ..tools.intent import RENAME, Intent
from ..tools.leftovers import Leftover
from ..tools.projectrename import ProjectEdit, renames_module
from ..ui.render import print_diff, unified_diff
from . import ask
from .options import WriteBack

PYTHON = (".py",)  # rope reads .py; a stub (.pyi) is renamed as its own file


@dataclass(kw_only=True)
class Plan:
    """A rename of the command's file across its project, made before the model loads."""

    project: Project
    intent: Intent
    defining: PurePosixPath  # the file named on the command line, relative to the root
    edit: ProjectEdit
    texts: dict[str, str]  # the project's Python files as rope read them
    sources: dict[str, fileio.Source]  # every file the rename changes, as read (stamped)
    module: bool  # the module itself renamed (no model: rope's edit is the whole rename)
    locks: contextlib.ExitStack = field(default_factory=contextlib.ExitStack)
    seconds: dict[str, float] = field(default_factory=dict)  # the plan's, the checks' and the write's

    def figures(self, files: int) -> dict:
        """The record's "project": the files it changes and where its own time went (rope's
        rename and the files read; every file's checks; the write with its journal)."""
        return {
            "root": str(self.project.root),
            "files": files,
            "leftovers": len(self.edit.leftovers),
            "rope_seconds": self.edit.seconds,
            **{f"{k}_seconds": v for k, v in self.seconds.items()},
        }

    def path(self, rel: str) -> Path:
        return self.project.root / rel


def plan(names: list[str], instruction: str | None, mode: WriteBack, *, writes: bool,
         force: bool) -> Plan | None:  # fmt: skip
    """The project rename the command asks for (see the module), or None; UsageError for
    what it refuses before a model loads."""
    found = intents.parse(instruction)
    if found.kind != RENAME or not names or "-" in names:
        return None
    suffix = PurePosixPath(names[0]).suffix.lower()
    if len(names) > 1 and (suffix in PYTHON or rename_tool.supported(names[0])):
        projects = {p.root for p in map(find, map(Path, names)) if p is not None}
        if projects:
            raise UsageError(
                "a rename across the project starts from one file, the one that defines the name: "
                "give that file alone (or --no-project to rename in each file by itself)"
            )
        return None
    path = Path(names[0])
    if not path.is_file():
        return None  # precheck says what is wrong with it
    project = find(path)
    if project is None:
        return None
    if suffix not in PYTHON:
        _other_language(project, path, found)
        return None
    return _python(project, path, found, mode, writes=writes, force=force)


def _other_language(project: Project, path: Path, found: Intent) -> None:
    """UsageError when an old name is an identifier in another file of this language."""
    if not rename_tool.supported(path.name):
        return
    language = rename_tool.language(path.name)
    me = project.relative(path)
    seen: dict[str, list[str]] = {}
    for rel in project.of_kind(rename_tool.suffixes(language)):
        if rel == me:
            continue
        try:
            text = fileio.read(project.root / rel, force=True).text
            names = {n for n, _ in rename_tool.code_names(text, rel.name)}
        except (OSError, UsageError, rename_tool.RenameError):
            continue
        for old in found.renames:
            if old in names:
                seen.setdefault(old, []).append(str(rel))
    if seen:
        old, where = next(iter(seen.items()))
        listed = ", ".join(where[:3]) + (f" and {len(where) - 3} more" if len(where) > 3 else "")
        raise UsageError(
            f"{path.name}: {old} is also a name in {listed}; a rename in {language} cannot tell which "
            "of them is this one (no scopes), so pedit renames nothing: --no-project renames it in "
            f"{path.name} alone"
        )


def _python(project: Project, path: Path, found: Intent, mode: WriteBack, *, writes: bool,
            force: bool) -> Plan | None:  # fmt: skip
    from ..tools import projectrename

    try:
        files = project.of_kind(PYTHON)
    except TooLarge as exc:
        raise UsageError(f"{exc}: --no-project renames in {path.name} alone") from None
    t0 = time.perf_counter()
    defining = project.relative(path)
    texts = _texts(project, {*files, defining})
    if str(defining) not in texts:
        return None
    module = any(renames_module(texts[str(defining)], str(defining), o) for o in found.renames)
    try:
        edit = projectrename.rename(texts, str(defining), found.renames, docs=found.docs, within=found.within)
    except projectrename.Collision as exc:
        raise UsageError(f"{exc}; nothing renamed") from None
    except projectrename.Unreadable as exc:
        why = f"{exc}; no file is written (--no-project renames in {path.name} alone)"
        raise RefusedError(why, reason=str(exc)) from None
    except rename_tool.RenameError as exc:
        if module:
            raise UsageError(f"{path.name}: {exc}") from None
        return None  # the defining file does not parse: the one-file refactor (the model, the guard)
    others = [f for f in edit.files if f != str(defining)]
    if not others and not edit.leftovers and not module:
        return None  # the file's own rename: the one-file refactor
    if mode == WriteBack.STDOUT:  # one file's text: the file's own rename, or a refusal
        if not others and not module:
            return None
        raise UsageError(
            f"{path.name}: the rename changes {len(edit.files)} files, and --stdout prints one: "
            "--diff shows them all (or --no-project renames in this file alone)"
        )
    p = Plan(project=project, intent=found, defining=defining, edit=edit, texts=texts, sources={},
             module=module, seconds={"plan": time.perf_counter() - t0})  # fmt: skip
    try:
        for rel in edit.files:
            if rel == str(defining) and not module:
                continue  # the model's file: read and locked by the run itself
            with _whole(p):
                source = fileio.read(p.path(rel), force=force)
                if source.text != texts[rel]:
                    raise ConflictError(f"{rel}: changed on disk since pedit read it")
                if writes:
                    fileio.check_writable(p.path(rel), force=force)
                    p.locks.enter_context(fileio.locked(p.path(rel)))
            p.sources[rel] = source
    except BaseException:
        p.locks.close()
        raise
    return p


@contextlib.contextmanager
def _whole(p: Plan):
    """A file's refusal as the whole rename's: named from the project's root, and said to
    leave every file of the rename unwritten (the same kind of error, the same exit code)."""
    try:
        yield
    except PeditError as exc:
        message = exc.message
        for path in {str(p.path(r)) for r in p.edit.files} | {str(p.path(r).resolve()) for r in p.edit.files}:
            message = message.replace(path, str(p.project.relative(Path(path))))
        for tail in ("; nothing written", ", not written", "; not written", "; not touched"):
            message = message.removesuffix(tail)
        error = copy.copy(exc)  # its kind, exit code and --force's say kept
        error.message = f"{message}; no file of the rename is written"
        error.args = (error.message,)
        raise error from None


def _texts(project: Project, files: set[PurePosixPath]) -> dict[str, str]:
    """The project's Python files that read as text, relative path -> text."""
    out = {}
    for rel in sorted(files):
        try:
            data = (project.root / rel).read_bytes()
            if len(data) <= fileio.MAX_BYTES:
                out[str(rel)] = fileio.decode(data, str(rel)).text
        except (OSError, UsageError):
            continue  # unreadable, or not text: rope cannot read it either
    return out


def answered(p: Plan, flow, source: fileio.Source | None, answer: str | None, ran: dict | None = None) -> int:
    """The rename's end (see the module): the defining file's answer (None: a module
    renamed, rope's edit alone), every file checked, then the mode's output or the write."""
    report, name = flow.report, str(p.defining)
    texts = dict(p.edit.texts)
    if not p.module:
        if source.text != p.texts[name]:
            raise ConflictError(
                f"{name}: changed on disk since pedit read it; no file of the rename is written"
            )
        exact = texts.get(name, source.text)
        verdict = check(p.intent, source.name, source.text, answer, exact)
        if not verdict.passed:
            report.say(name, f"the model's answer is not rope's rename of it ({verdict.reason}): rope's edit")
            answer = exact
        texts[name] = answer
        p.sources[name] = source
    t0 = time.perf_counter()
    changes = checked(p, texts, flow.template.judged)
    p.seconds["checks"] = time.perf_counter() - t0
    for left in p.edit.leftovers:
        report.say(left.path, _leftover(left))
    if p.edit.prose:
        olds = ", ".join(p.intent.renames)
        report.dim(f"pedit: {p.edit.prose} comments and docstrings still name {olds} "
                   "(\"... in docstrings too\" renames them)")  # fmt: skip
    return _out(p, flow, changes, ran or {})


def too_long(p: Plan, flow, source: fileio.Source, exc: Exception) -> int:
    """The defining file is longer than the model's context: rope's edit of it is the answer
    (the edit the model's would have been held to), said so."""
    flow.report.say(str(p.defining), f"{exc}; too long for the model, so rope's edit is its answer")
    return answered(p, flow, source, p.edit.texts.get(str(p.defining), source.text))


def _leftover(left: Leftover) -> str:
    return f"line {left.line}: {left.name} {left.what}: not renamed, check it"


def checked(p: Plan, texts: dict[str, str], judged: bool) -> list[together.Change]:
    """Every changed file's Change, each checked: RefusedError (no file written) otherwise."""
    out = []
    for rel in p.edit.files:
        source = p.sources[rel]
        new = texts.get(rel, source.text)
        if new != source.text:
            verdict = check(p.intent, rel, source.text, new, new)
            why = None if verdict.passed else f"the rename fails its check: {verdict.reason}"
            refusal = guard.judge(rel, source.text, new, judged=judged)
            why = why or (refusal.reason if refusal else None)
            if why:
                raise RefusedError(f"{rel}: {why}; no file of the rename is written", reason=why)
        to = p.path(p.edit.moves[rel]) if rel in p.edit.moves else None
        out.append(together.Change(source=source, text=new, to=to))
    return out


def _out(p: Plan, flow, changes: list[together.Change], ran: dict) -> int:
    mode, report = flow.mode, flow.report
    rels = {id(c): str(p.project.relative(c.source.path)) for c in changes}
    diffs = {}
    for c in changes:
        rel = rels[id(c)]
        new_name = p.edit.moves.get(rel, rel)
        diffs[rel] = unified_diff(c.source.render(c.source.text), c.source.render(c.text), rel)
        if new_name != rel:
            diffs[rel] = [f"rename from {rel}\n", f"rename to {new_name}\n", *_renamed(diffs[rel], new_name)]
    n = len(changes)
    what = f"renamed in {n} file{'s' if n != 1 else ''}"
    owner = str(p.defining) if str(p.defining) in rels.values() else rels[id(changes[0])]  # holds the figures
    for c in changes:
        rel = rels[id(c)]
        mine = rel == owner
        whole = p.figures(n) if mine else {"root": str(p.project.root)}
        report.add({**(ran if mine else {}), "file": rel, "changed": True, "written": False, "project": whole,
                    **({"text": c.source.render(c.text), "diff": "".join(diffs[rel])}
                       if mode == WriteBack.JSON else {})})  # fmt: skip
    if mode == WriteBack.JSON:
        return ExitCode.OK
    if mode in (WriteBack.DIFF, WriteBack.ASK):
        for rel in sorted(diffs):
            print_diff(diffs[rel])
    if mode == WriteBack.DIFF:
        report.say(str(p.defining), f"{what}: {', '.join(sorted(diffs))}; nothing written")
        return ExitCode.OK
    if mode == WriteBack.CHECK:
        report.say(str(p.defining), f"{what}: would change {', '.join(sorted(diffs))}")
        return ExitCode.CHANGED
    question = f"Apply to these {n} files?" if n > 1 else f"Apply to {next(iter(diffs))}?"
    if mode == WriteBack.ASK and not ask.confirm(question):
        return ExitCode.OK
    assert mode in (WriteBack.ASK, WriteBack.YES), mode  # --stdout never plans (plan)
    t0 = time.perf_counter()
    with _whole(p):
        together.write(changes, force=flow.inv.force)
    for record in report.records[-n:]:
        if "files" in record["project"]:
            record["project"]["write_seconds"] = time.perf_counter() - t0
    for record in report.records[-n:]:
        record["written"] = True
    report.say(str(p.defining), f"{what}, written: {', '.join(sorted(diffs))}")
    return ExitCode.OK


def _renamed(diff: list[str], new_name: str) -> list[str]:
    """A moved file's diff: its `+++` line names the new path."""
    return [f"+++ b/{new_name}\n" if line.startswith("+++ ") else line for line in diff]
