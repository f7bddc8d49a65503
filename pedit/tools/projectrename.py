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
    leftovers every code token still named OLD anywhere that rope does not resolve to some
              definition (an attribute of an object it cannot type: `obj.f()`,
              `getattr(m, name)`'s result), and every string that is a name, not prose
              (`getattr(m, "f")`, `__all__ = ["f"]`, `mock.patch("pkg.util.f")`), by file
              and line: reported, never guessed; a token that resolves to another
              definition is another name of the same spelling, not a leftover

With `docs`, rope renames the name in comments and strings too (whole words, where the
name is visible); without it, the comments and docstrings that still name it are counted
(`prose`), not changed.
"""

from __future__ import annotations

import ast
import io
import re
import tempfile
import time
import tokenize
import warnings
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from .rename import RenameError, _comments_rename, _line_starts, _python_names


class Unreadable(RenameError):
    """rope fails on a file that uses an old name as code: a rename would leave it broken."""


class Collision(RenameError):
    """The new name is taken: a module's, or a name a file binds beside the old one."""


@dataclass(frozen=True)
class Leftover:
    """An occurrence of an old name the rename left, for the user to look at."""

    path: str  # relative to the project's root
    line: int  # 1-based
    name: str
    what: str  # why it was left: "a string", "rope cannot resolve it", "the file does not parse"

    def describe(self) -> str:
        return f"{self.path}:{self.line}: {self.name} {self.what}: not renamed"


@dataclass(frozen=True)
class ProjectEdit:
    texts: dict[str, str]  # relative path -> its new text, for every file the rename changes
    moves: dict[str, str] = field(default_factory=dict)  # a module renamed: old path -> new path
    leftovers: tuple[Leftover, ...] = ()
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
        done = {rel: _exported(t, renames) if t != texts[rel] else t for rel, t in done.items()}
        if docs:
            done = {rel: _comments(rel, done[rel], renames, texts) for rel in done}
        changed = {rel: t for rel, t in done.items() if t != texts[rel] or rel in moves}
        top = _dotted(defining, texts).split(".")[0]
        near = _importers(done, {defining, *changed}, moves)
        leftovers = _leftovers(
            project, root, done, moves, renames, broken, top, _reach(kinds, defining, near)
        )
    finally:
        project.close()
    prose = 0 if docs else sum(_prose(t, renames) for t in done.values())
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
    the old one: the two would become one name (rope renames without looking)."""
    for rel, text in before.items():
        if after.get(rel, text) == text:
            continue
        try:
            bound = _module_bindings(ast.parse(text))
        except SyntaxError:
            continue
        for old, new in renames.items():
            if old in bound and new in bound:
                raise Collision(
                    f"{rel} has a {new} already, beside {old}: the rename would make them one name"
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


_DATA = re.compile(r"[\w.:]*")  # a string that is a name or a dotted path, not prose


def _names_it(body: str, old: str, top: str) -> bool:
    """Is the string `body` a reference to `old`: the name itself, or a dotted path into
    the project's package `top` through it ("pkg.util.old", "pkg.util:old")? Another
    package's path ("urllib.parse") is not this project's name."""
    if body == old:
        return True
    parts = re.split(r"[.:]", body)
    return _DATA.fullmatch(body) is not None and len(parts) > 1 and parts[0] == top and old in parts[1:]


def _dotted(rel: str, texts: dict[str, str]) -> str:
    """The module's dotted name (`src/pkg/util.py` -> pkg.util: the folders above its
    outermost package are not part of it)."""
    parts = list(PurePosixPath(rel).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    first = 0
    while first < len(parts) - 1 and "/".join([*parts[: first + 1], "__init__.py"]) not in texts:
        first += 1
    return ".".join(parts[first:])


def _exported(text: str, renames: dict[str, str]) -> str:
    """`__all__`'s entries renamed where the module's own binding was: a module-level
    `__all__` list or tuple of strings naming OLD, in a file that binds NEW at module level
    now and OLD no more (rope renames the binding, not the string that exports it)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return text
    bound = _module_bindings(tree)
    edits = []
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
            node, ast.AugAssign | ast.AnnAssign) else []  # fmt: skip
        if not any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            continue
        if not isinstance(node.value, ast.List | ast.Tuple):
            continue
        for item in node.value.elts:
            if isinstance(item, ast.Constant) and isinstance(item.value, str):
                new = renames.get(item.value)
                if new and new in bound and item.value not in bound:
                    edits.append((item.lineno, item.col_offset, item.end_col_offset, item.value, new))
    edits += _annotated(tree, renames, bound)
    lines = text.splitlines(keepends=True)
    for line, start, end, old, new in sorted(edits, reverse=True):
        raw = lines[line - 1].encode("utf-8")  # ast's columns count bytes
        piece = re.sub(rf"(?<![\w.]){re.escape(old)}(?!\w)", new, raw[start:end].decode())
        lines[line - 1] = (raw[:start] + piece.encode() + raw[end:]).decode()
    return "".join(lines)


def _annotated(tree: ast.Module, renames: dict[str, str], bound: set[str]) -> list[tuple]:
    """String annotations (`-> "Context"`, `x: "list[Context]"`, `cast("Context", x)`)
    naming OLD as a plain name, in a module that binds NEW and no more OLD: rope renames
    the binding, not the string;
    one line's strings only (a multi-line string is left as it is)."""
    out = []
    for node in ast.walk(tree):
        notes = []
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            notes.append(node.returns)
        elif isinstance(node, ast.arg | ast.AnnAssign):
            notes.append(node.annotation)
        elif isinstance(node, ast.Call) and node.args and _called(node.func) == "cast":  # typing.cast("T", x)
            notes.append(node.args[0])
        for note in notes:
            if not (isinstance(note, ast.Constant) and isinstance(note.value, str)):
                continue
            if note.lineno != note.end_lineno:
                continue
            try:
                names = {
                    n.id for n in ast.walk(ast.parse(note.value, mode="eval")) if isinstance(n, ast.Name)
                }
            except SyntaxError:
                continue
            for old, new in renames.items():
                if old in names and new in bound and old not in bound:
                    out.append((note.lineno, note.col_offset, note.end_col_offset, old, new))
    return out


def _called(func: ast.expr) -> str | None:
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None


def _module_bindings(tree: ast.Module) -> set[str]:
    out = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            out.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            out |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
                out |= {n.id for n in ast.walk(t) if isinstance(n, ast.Name)}
        elif isinstance(node, ast.If | ast.Try):  # `try: from x import a` / `if TYPE_CHECKING:`
            out |= _module_bindings(ast.Module(body=[*ast.iter_child_nodes(node)], type_ignores=[]))
    return out


def _importers(texts: dict[str, str], modules: set[str], moves: dict[str, str]) -> set[str]:
    """The files among `modules` and those with an import that names one of them (its module
    name as a word in an import statement: where a module's own name may be used)."""
    stems = {PurePosixPath(moves.get(m, m)).stem for m in modules} | {PurePosixPath(m).stem for m in modules}
    stems |= {PurePosixPath(m).parent.name for m in modules if PurePosixPath(m).stem == "__init__"}
    stems.discard("__init__")
    imports = re.compile(rf"^\s*(?:from|import)\s[^\n]*\b(?:{'|'.join(map(re.escape, stems))})\b", re.M)
    return set(modules) | {rel for rel, text in texts.items() if stems and imports.search(text)}


def _reach(kinds: set[str], defining: str, near: set[str]):
    """Which code tokens and strings named OLD, in which file, may be a use of what was
    renamed: reach(rel, tokens, i) -> bool. A local's: only in its file; a parameter's
    elsewhere: only a keyword argument (`f(values=...)`); a module's name: in the files that
    import the module or a module the rename changed (a re-export), `near`; a member's: an
    attribute (`x.old`) anywhere, a plain name or a string in `near` only."""

    def reach(rel: str, tokens: list, i: int) -> bool:
        if rel == defining:
            return True
        tok = tokens[i][0]
        if tok.type == tokenize.STRING:
            return rel in near and bool(kinds - {"local", "parameter"})
        if "module" in kinds and rel in near:
            return True
        if "member" in kinds and i and tokens[i - 1][0].string == ".":
            return True
        if "parameter" in kinds:
            after = next(
                (t for t, _ in tokens[i + 1 :] if t.type not in (tokenize.NL, tokenize.COMMENT)), None
            )
            return after is not None and after.string == "="
        return False

    return reach


def _leftovers(project, root: Path, done: dict[str, str], moves: dict[str, str], renames: dict[str, str],
               broken: set[str], top: str, reach) -> tuple[Leftover, ...]:  # fmt: skip
    from rope.base import evaluate
    from rope.base.exceptions import RopeError

    out, dynamic = [], {}
    for rel in sorted(done):
        text = done[rel]
        olds = [o for o in renames if o in text]
        if not olds:
            continue
        if rel in broken:
            lines = [i for i, line in enumerate(text.splitlines(), 1) if any(o in line for o in olds)]
            out += [Leftover(rel, lines[0], olds[0], "(the file does not parse)")]
            continue
        resource, module = project.get_resource(moves.get(rel, rel)), None
        starts = _line_starts(text)
        tokens = _tokens(text)
        for i, (tok, doc) in enumerate(tokens):
            at = starts[tok.start[0] - 1] + tok.start[1]
            if tok.type == tokenize.NAME and tok.string in renames:
                if not reach(rel, tokens, i):
                    continue
                try:
                    module = module or project.get_pymodule(resource)
                    pyname = evaluate.eval_location(module, at)
                    where = pyname.get_definition_location() if pyname is not None else (None, None)
                except RopeError:
                    where = (None, None)
                except Exception:  # noqa: BLE001 (rope's own failure on this file: its uses unchecked)
                    out.append(
                        Leftover(rel, tok.start[0], tok.string, "(rope fails on this file: unchecked)")
                    )
                    break
                if where[0] is None:
                    out.append(Leftover(rel, tok.start[0], tok.string, "(rope cannot resolve it)"))
            elif tok.type == tokenize.STRING and not doc:
                body = _body(tok.string)
                if body in renames and tok.start not in dynamic.setdefault(rel, _dynamic(text)):
                    continue  # the name as data (a label, a key), not as a reference to it
                for old in olds:
                    if _names_it(body, old, top) and (body != old or reach(rel, tokens, i)):
                        out.append(Leftover(rel, tok.start[0], old, f"in the string {tok.string}"))
    return tuple(out)


_BY_NAME = {"getattr", "hasattr", "setattr", "delattr", "attrgetter", "methodcaller", "object"}


def _dynamic(text: str) -> set[tuple[int, int]]:
    """Where (line, column) a string names an attribute or a module's name: an argument of
    getattr, hasattr, setattr, delattr, operator.attrgetter / methodcaller or
    mock.patch.object, or an entry of `__all__`."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return set()
    out = set()
    for node in ast.walk(tree):
        items: list = []
        if isinstance(node, ast.Call) and _called(node.func) in _BY_NAME:
            items = node.args
        elif isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            items = node.value.elts if isinstance(node.value, ast.List | ast.Tuple) else []
        out |= {
            (n.lineno, n.col_offset)
            for n in items
            if isinstance(n, ast.Constant) and isinstance(n.value, str)
        }
    return out


_STATEMENT = (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT)  # what comes before a docstring


def _tokens(text: str) -> list[tuple[tokenize.TokenInfo, bool]]:
    """The file's tokens, each with whether it is a docstring (a string that is a statement
    of its own: what follows a NEWLINE, INDENT or DEDENT, or starts the file)."""
    out, before = [], tokenize.NEWLINE
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            doc = tok.type == tokenize.STRING and before in _STATEMENT
            out.append((tok, doc))
            if tok.type not in (tokenize.NL, tokenize.COMMENT):
                before = tok.type
    except (tokenize.TokenError, SyntaxError):
        pass
    return out


def _body(literal: str) -> str:
    try:
        value = ast.literal_eval(literal)
    except (ValueError, SyntaxError):
        return literal
    return value if isinstance(value, str) else ""


def _prose(text: str, renames: dict[str, str]) -> int:
    """Comments and docstrings that name an old name as a whole word."""
    if not any(o in text for o in renames):
        return 0
    words = re.compile(rf"(?<![\w.])(?:{'|'.join(map(re.escape, renames))})(?!\w)")
    return sum(
        1 for tok, doc in _tokens(text) if (tok.type == tokenize.COMMENT or doc) and words.search(tok.string)
    )  # fmt: skip
