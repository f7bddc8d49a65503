"""A rename across a Python project, by rope: every file's change, and what it could not tell.

    texts     every Python file of the project (app/project.py), relative path -> text
    shadow    those texts written into a temporary folder with the project's layout, and a
              rope Project over it (rope writes there, never in the user's files)
    rename    as the file's rename (rename.py), one binding at a time: at the first code
              occurrence of OLD still in the defining file (in `within`'s span, if given),
              rope's Rename with every file of the project as its resources (a module
              function and `from pkg.util import f`, `util.f(...)`; a method and its calls
              through its class's instances; a parameter and its keyword arguments), until
              none is left; OLD the defining module's own name and no name in it: the
              module renamed, with its imports (rope's MoveResource)
    follow    in every file it changed, the strings that name a renamed module binding and
              nothing else: `__all__`'s entries, string annotations, cast()'s type
              (bindings.py)
    refused   a new name that is taken (Collision: a module of that name beside it, a
              file binding both names, or a scope where a renamed use would take another
              binding of NEW: a local `cell_length` beside a call of `cell_len`); a file
              rope itself fails on that uses the name (Unreadable: the rename would leave
              it broken)
    leftovers what rope could not resolve where the binding can be used, by file and line
              (leftovers.py): reported, never guessed

With `docs`, rope renames the name in comments and strings too (whole words, where the
name is visible); without it, the comments and docstrings that still name it are counted
(`prose`), not changed.
"""

from __future__ import annotations

import ast
import tempfile
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from . import bindings
from . import leftovers as left
from .rename import RenameError, _comments_rename, _python_names


class Unreadable(RenameError):
    """rope fails on a file that uses an old name as code: a rename would leave it broken."""


class Collision(RenameError):
    """The new name is taken: a module's, or a name a file binds beside the old one."""


@dataclass(frozen=True)
class ProjectEdit:
    texts: dict[str, str]  # relative path -> its new text, for every file the rename changes
    moves: dict[str, str] = field(default_factory=dict)  # a module renamed: old path -> new path
    leftovers: tuple[left.Leftover, ...] = ()
    prose: int = 0  # comments and docstrings that still name an old name (no `docs`)
    seconds: float = 0.0  # rope's time, the shadow's included

    @property
    def files(self) -> tuple[str, ...]:
        """Every file the rename changes or moves, in path order (as they are before it)."""
        return tuple(sorted(set(self.texts) | set(self.moves)))


def module_name(path: str) -> str | None:
    """The module name of a file (`pkg/util.py` -> util); None for a package's __init__."""
    p = PurePosixPath(path)
    return None if p.stem == "__init__" else p.stem


def renames_module(text: str, defining: str, old: str) -> bool:
    """Does "rename OLD to NEW" in `defining` rename the module itself? OLD is its module
    name and no code name of the file (a name of the file wins)."""
    return module_name(defining) == old and old not in {n for n, _ in _python_names(text)}


def rename(
    texts: dict[str, str], defining: str, renames: dict[str, str], *, docs: bool = False,
    within: str | None = None,
) -> ProjectEdit:  # fmt: skip
    """The project's texts with every rename of `renames` done from the file `defining`
    (see the module); RenameError if the defining file does not parse."""
    from rope.base.project import Project

    t0 = time.perf_counter()
    try:
        ast.parse(texts[defining])
    except SyntaxError as exc:
        raise RenameError(f"{defining} does not parse (line {exc.lineno}): no exact rename") from None
    broken = {p for p, t in texts.items() if any(o in t for o in renames) and not _parses(t)}
    with tempfile.TemporaryDirectory(prefix="pedit-rename-") as folder:
        root = Path(folder)
        for rel, text in texts.items():
            where = root / rel
            where.parent.mkdir(parents=True, exist_ok=True)
            where.write_text(text, encoding="utf-8")
        with warnings.catch_warnings():  # rope's warnings are its own (its deprecations, its AST patches)
            warnings.simplefilter("ignore")
            return _renamed(Project(folder, ropefolder=None), root, texts, defining, renames, docs, within,
                            broken, t0)  # fmt: skip


def _renamed(project, root: Path, texts: dict[str, str], defining: str, renames: dict[str, str], docs: bool,
             within: str | None, broken: set[str], t0: float) -> ProjectEdit:  # fmt: skip
    """rename()'s work, in the shadow at `root` with rope's `project` over it."""
    try:
        moves: dict[str, str] = {}
        now, kinds = defining, set()  # what the renamed bindings are (_kind)
        for old, new in renames.items():
            if renames_module(_read(root, now), now, old):
                _free_module(root, now, new)
                now = _move(project, now, new, moves)
                kinds.add("module")
                continue
            kinds |= _rename_bindings(project, root, now, old, new, docs, within, broken)
        done = {rel: _read(root, moves.get(rel, rel)) for rel in texts}
        _no_collision(texts, done, renames)
        done = {rel: bindings.exported(t, renames) if t != texts[rel] else t for rel, t in done.items()}
        if docs:
            done = {rel: _comments(rel, done[rel], renames, texts) for rel in done}
        changed = {rel: t for rel, t in done.items() if t != texts[rel] or rel in moves}
        top = left.dotted(defining, texts).split(".")[0]
        near = left.importers(done, {defining, *changed}, moves)
        leftovers = left.leftovers(
            project, root, done, moves, renames, broken, top, left.reach(kinds, defining, near)
        )
    finally:
        project.close()
    prose = 0 if docs else sum(bindings.prose(t, renames) for t in done.values())
    return ProjectEdit(changed, moves, leftovers, prose, time.perf_counter() - t0)


def _free_module(root: Path, defining: str, new: str) -> None:
    """Collision when the defining module's folder has a module or package named `new`."""
    folder = (root / defining).parent
    for taken in (folder / f"{new}.py", folder / new):
        if taken.exists():
            rel = taken.relative_to(root).as_posix()
            raise Collision(f"{rel} exists already: {defining} renamed {new} would shadow it")


def _no_collision(before: dict[str, str], after: dict[str, str], renames: dict[str, str]) -> None:
    """Collision when a file the rename changes bound the new name at module level beside
    the old one: the two would become one name (rope renames without looking); or when a
    renamed use would be bound by another NEW in its scope or a function around it
    (bindings.shadowed)."""
    for rel, text in before.items():
        if after.get(rel, text) == text:
            continue
        try:
            bound = bindings.module_bindings(ast.parse(text))
        except SyntaxError:
            continue
        for old, new in renames.items():
            if old in bound and new in bound:
                raise Collision(
                    f"{rel} has a {new} already, beside {old}: the rename would make them one name"
                )
        for old, new in renames.items():
            line = bindings.shadowed(text, after.get(rel, text), old, new)
            if line is not None:
                raise Collision(
                    f"{rel}: the scope at line {line} has a {new} of its own, nearer than {old}'s: "
                    f"renamed, its use of {old} would become that other {new}"
                )


def _parses(text: str) -> bool:
    try:
        ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    return True


def _read(root: Path, rel: str) -> str:
    return (root / rel).read_text(encoding="utf-8")


def _resources(project, root: Path, skip: set[str], name: str):
    """The project's files that hold `name` at all and parse: the only ones a rename of it
    may change (rope reads the others only to resolve imports)."""
    out = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel not in skip and name in path.read_text(encoding="utf-8"):
            out.append(project.get_resource(rel))
    return out


def _rename_bindings(project, root: Path, defining: str, old: str, new: str, docs: bool,
                     within: str | None, broken: set[str]) -> set[str]:  # fmt: skip
    """Every binding named `old` in the defining file renamed across the project (rename.py's
    loop, with the project's files as rope's resources); what they were (_kind)."""
    from rope.base import pynames
    from rope.base.exceptions import RopeError
    from rope.refactor.rename import Rename, _is_local

    from .rename import _span

    resource = project.get_resource(defining)
    resources = _resources(project, root, broken, old)
    skip, kinds = 0, set()  # occurrences rope could not rename, in order
    while True:
        text = resource.read()
        span = _span(text, within) if within else None
        at = [o for n, o in _python_names(text) if n == old and (span is None or span[0] <= o < span[1])]
        if len(at) <= skip:
            return kinds
        try:
            rename = Rename(project, resource, at[skip])
            if rename._is_renaming_a_module():  # `import pkg.util as util` in the file: not this rename
                skip += 1
                continue
            kinds.add(_kind(rename.old_pyname, _is_local, pynames))
            changes = _changes(rename, new, docs, resources, old)
            project.do(changes)
        except RopeError:
            skip += 1
            continue
        if resource.read() == text:
            skip += 1


def _kind(pyname, is_local, pynames) -> str:
    """What a renamed binding is to other files: "local" (a function's variable), "parameter"
    (seen as a keyword argument), "module" (a module's own name: seen through an import of
    it), "member" (a class's attribute or method: seen on any object)."""
    if is_local(pyname):
        return "local"
    if isinstance(pyname, pynames.ParameterName):
        return "parameter"
    module, line = pyname.get_definition_location()
    if module is None or line is None:
        return "member"
    scope = module.get_scope().get_inner_scope_for_line(line)
    if isinstance(pyname, pynames.DefinedName) and scope.get_kind() in ("Function", "Class"):
        scope = scope.parent  # a def's line is in its own scope
    return {"Module": "module", "Class": "member"}.get(scope.get_kind(), "member")


def _changes(rename, new: str, docs: bool, resources: list, old: str):
    """rope's changes over `resources`; a file rope itself fails on (its own bug, not a
    RopeError) is left out if it names `old` in no code, else Unreadable."""
    from rope.base.exceptions import RopeError

    try:
        return rename.get_changes(new, docs=docs, resources=resources)
    except RopeError:
        raise
    except Exception:  # noqa: BLE001 (rope's own failure, found file by file below)
        pass
    kept = []
    for resource in resources:
        try:
            rename.get_changes(new, docs=docs, resources=[resource])
            kept.append(resource)
        except RopeError:
            kept.append(resource)
        except Exception as exc:  # noqa: BLE001
            if old in {n for n, _ in _python_names(resource.read())}:
                raise Unreadable(
                    f"{resource.path}: rope fails on this file ({type(exc).__name__}: {exc}), which uses "
                    f"{old}: a rename would leave it broken"
                ) from None
    return rename.get_changes(new, docs=docs, resources=kept)


def _move(project, defining: str, new: str, moves: dict[str, str]) -> str:
    """The defining module renamed `new` with every import of it (rope); its new path."""
    from rope.base.exceptions import RopeError
    from rope.refactor.rename import Rename

    try:
        changes = Rename(project, project.get_resource(defining)).get_changes(new)
        project.do(changes)
    except RopeError as exc:
        raise RenameError(f"rope cannot rename the module {defining}: {exc}") from None
    moved = str(PurePosixPath(defining).with_name(f"{new}.py"))
    first = next((k for k, v in moves.items() if v == defining), defining)
    moves[first] = moved
    return moved


def _comments(rel: str, text: str, renames: dict[str, str], before: dict[str, str]) -> str:
    """With `docs`: whole words in the comments of a file that names an old name (rope's
    `docs` renames docstrings and strings, and comments only where it resolves them)."""
    if not any(o in before.get(rel, "") for o in renames):
        return text
    for old, new in renames.items():
        text = _comments_rename(text, old, new, None)
    return text
