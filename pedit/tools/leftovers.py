"""What a project's rename left: every code token still named OLD where the renamed
binding can be used that rope does not resolve to some definition, and every string that
is a reference to it, by file and line (projectrename.py reports them; nothing is guessed).

    where     a local's: its file alone; a parameter's elsewhere: its keyword arguments
              (`f(values=...)`); a module's own name: the files that import that module or
              a module the rename changed (a re-export); a member's (a method, a class
              attribute): an attribute `x.old` anywhere, a plain name in those files
    tokens    a token rope resolves to another definition is another name of the same
              spelling; one it cannot resolve (`obj.f()` on an object it cannot type) is
              left, unless it is an attribute of another package's module (`trio.f`, `os.f`:
              the chain starts with an import of a module outside the project, which no
              rename here changes); rope failing on a file is one leftover for the file
    strings   the name itself where a string names an attribute or an export (getattr,
              hasattr, setattr, delattr, attrgetter, methodcaller, patch.object, `__all__`),
              and a dotted path into the project's package through it ("pkg.util.f",
              "pkg.util:f"); another package's path ("urllib.parse") is not this name
"""

from __future__ import annotations

import re
import tokenize
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from . import bindings
from .rename import _line_starts


@dataclass(frozen=True)
class Leftover:
    """An occurrence of an old name the rename left, for the user to look at."""

    path: str  # relative to the project's root
    line: int  # 1-based
    name: str
    what: str  # why it was left: "a string", "rope cannot resolve it", "the file does not parse"

    def describe(self) -> str:
        return f"{self.path}:{self.line}: {self.name} {self.what}: not renamed"


_DATA = re.compile(r"[\w.:]*")  # a string that is a name or a dotted path, not prose


def names_it(body: str, old: str, top: str) -> bool:
    """Is the string `body` a reference to `old`: the name itself, or a dotted path into
    the project's package `top` through it ("pkg.util.old", "pkg.util:old")? Another
    package's path ("urllib.parse") is not this project's name."""
    if body == old:
        return True
    parts = re.split(r"[.:]", body)
    return _DATA.fullmatch(body) is not None and len(parts) > 1 and parts[0] == top and old in parts[1:]


def dotted(rel: str, texts: dict[str, str]) -> str:
    """The module's dotted name (`src/pkg/util.py` -> pkg.util: the folders above its
    outermost package are not part of it)."""
    parts = list(PurePosixPath(rel).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    first = 0
    while first < len(parts) - 1 and "/".join([*parts[: first + 1], "__init__.py"]) not in texts:
        first += 1
    return ".".join(parts[first:])


def importers(texts: dict[str, str], modules: set[str], moves: dict[str, str]) -> set[str]:
    """The files among `modules` and those with an import that names one of them (its module
    name as a word in an import statement: where a module's own name may be used)."""
    stems = {PurePosixPath(moves.get(m, m)).stem for m in modules} | {PurePosixPath(m).stem for m in modules}
    stems |= {PurePosixPath(m).parent.name for m in modules if PurePosixPath(m).stem == "__init__"}
    stems.discard("__init__")
    imports = re.compile(rf"^\s*(?:from|import)\s[^\n]*\b(?:{'|'.join(map(re.escape, stems))})\b", re.M)
    return set(modules) | {rel for rel, text in texts.items() if stems and imports.search(text)}


def reach(kinds: set[str], defining: str, near: set[str]):
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


def leftovers(project, root: Path, done: dict[str, str], moves: dict[str, str], renames: dict[str, str],
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
        tokens = bindings.tokens(text)
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
                if where[0] is None and not _outside(project, module, tokens, i, starts, top):
                    out.append(Leftover(rel, tok.start[0], tok.string, "(rope cannot resolve it)"))
            elif tok.type == tokenize.STRING and not doc:
                body = bindings.body(tok.string)
                if body in renames and tok.start not in dynamic.setdefault(rel, bindings.dynamic(text)):
                    continue  # the name as data (a label, a key), not as a reference to it
                for old in olds:
                    if names_it(body, old, top) and (body != old or reach(rel, tokens, i)):
                        out.append(Leftover(rel, tok.start[0], old, f"in the string {tok.string}"))
    return tuple(out)


def _outside(project, module, tokens: list, i: int, starts: list[int], top: str) -> bool:
    """Is token i an attribute of another package's module: `a.b.old` whose first name is an
    import of a module outside the project (`import trio`, `from os import path`; one rope
    cannot find at all, absolute and not under the project's package `top`, is not the
    project's either: rope reads every project file)?"""
    from rope.base import evaluate, pynames, pyobjects

    first = i
    while first >= 2 and tokens[first - 1][0].string == "." and tokens[first - 2][0].type == tokenize.NAME:
        first -= 2
    if first == i or (first >= 1 and tokens[first - 1][0].string == "."):
        return False  # not an attribute, or one of a call's or a subscript's result
    tok = tokens[first][0]
    try:
        pyname = evaluate.eval_location(module, starts[tok.start[0] - 1] + tok.start[1])
        if not isinstance(pyname, pynames.ImportedModule | pynames.ImportedName):
            return False
        obj = pyname.get_object()
    except Exception:  # noqa: BLE001 (a RopeError or rope's own failure: the token stays reported)
        return False
    if isinstance(obj, pyobjects.AbstractModule):
        resource = obj.get_resource()
        return resource is None or resource.project is not project
    if not isinstance(pyname, pynames.ImportedModule) or pyname.level or not pyname.module_name:
        return False
    return pyname.module_name.split(".")[0] != top  # `import trio`, nowhere in the project
