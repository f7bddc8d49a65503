"""Type hints as an edit grammar (issue 26, part 4) and the check of the answer (part 5).

`hints_grammar(text)` is a Lark grammar (llguidance's syntax: `Constraint("lark", ...)`)
whose language is the file with a type at every annotation slot and nothing else changed:
    parameter p without annotation    p        ->  p: TYPE
                                      p=0      ->  p: TYPE = 0          (PEP 8 spacing)
                                      *args    ->  *args: TYPE          (**kwargs too)
    def without return annotation     f(...):  ->  f(...) -> TYPE:
Every slot is mandatory (the check wants every parameter and return annotated). No slot:
the first parameter of a method that is not a staticmethod (self, cls), lambdas (Python
has no syntax for it), the `*` and `/` markers, existing annotations (kept as they are).
Every other byte is forced, so coalescence (engine/constrained.py) emits it without a
forward pass of its own and the model chooses only the types.

TYPE is monitor-guided decoding (Agrawal et al., "Guiding Language Models of Code with
Global Context using Monitors", NeurIPS 2023): only names a static analysis says exist
where the annotation is evaluated (at def time, unless `from __future__ import
annotations`), in a language of bounded depth, so the answer's length is bounded too:
    TYPE_d = A_d (" | " A_d){0,UNION-1} (" | " "None")?  |  "None"       d = 0 .. DEPTH
    A_d    = NAME  |  G "[" TYPE_{d-1} (", " TYPE_{d-1})* "]"           (d > 0 only)
NAME: builtins the module does not rebind; classes, TypeVars and CapWords imports bound at
top level before the def (a method's own class is not yet: NameError); the TYPES of the
modules it imports (`from typing import Iterable`, `typing.Any`, `datetime.date`); minus
the names an enclosing function, or the class body so far, binds (a method named `list`
makes `list[int]` raise). G: list set frozenset type (one type), dict (two), tuple (`T,
...` or up to TUPLE types), and the generic TYPES. `None` comes last in a union (`None |
None` raises TypeError); a lowercase import is not a NAME unless TYPES lists it (it may be
a function, and `f | None` raises). PEP 604 unions at def time need Python >= 3.10.

`annotated(text, answer)` is the check of the "add type hints" intent: None if `answer` is
`text` with annotations (and imports) added only and every slot filled, else a reason.
"""

from __future__ import annotations

import ast
import builtins
import collections.abc
import io
import json
import re
import tokenize
import typing
from collections.abc import Iterator
from dataclasses import dataclass

DEPTH = 2  # brackets inside brackets at most: dict[str, list[int]]
UNION = 4  # members of a union besides None
TUPLE = 4  # members of tuple[...] at most

Takes = int | str | None  # in brackets: 1, 2 or 3 types, "tuple" (T, ... | T, T), "callable" (..., T)
BUILTINS: dict[str, Takes] = dict.fromkeys(("int", "float", "str", "bool", "bytes", "object", "complex"))
BUILTINS |= {"list": 1, "dict": 2, "set": 1, "frozenset": 1, "tuple": "tuple", "type": 1}
# name -> (usable alone, what it takes in brackets)
_TYPING: dict[str, tuple[bool, Takes]] = {
    **dict.fromkeys(("Any", "Hashable", "Sized"), (True, None)),
    **dict.fromkeys((
        "Iterable", "Iterator", "Sequence", "MutableSequence", "Collection", "Container", "Reversible",
        "AbstractSet", "Set", "MutableSet", "FrozenSet", "List", "Deque", "Type", "Awaitable",
        "AsyncIterable", "AsyncIterator", "KeysView", "ValuesView", "Pattern", "Match",
    ), (True, 1)),
    **dict.fromkeys(
        ("Mapping", "MutableMapping", "Dict", "DefaultDict", "OrderedDict", "ItemsView"), (True, 2)
    ),
    "Optional": (False, 1), "Generator": (True, 3), "Tuple": (True, "tuple"), "Callable": (True, "callable"),
}  # fmt: skip
_CLASS = (True, None)
TYPES: dict[str, dict[str, tuple[bool, Takes]]] = {  # the types of a few modules a file imports
    "typing": {n: v for n, v in _TYPING.items() if hasattr(typing, n)},
    "typing_extensions": {n: v for n, v in _TYPING.items() if hasattr(typing, n)},
    "collections.abc": {n: v for n, v in _TYPING.items() if hasattr(collections.abc, n)},
    "collections": {"OrderedDict": (True, 2), "defaultdict": (True, 2), "ChainMap": (True, 2),
                    "Counter": (True, 1), "deque": (True, 1)},
    "os": {"PathLike": (True, 1), "stat_result": _CLASS},
    "re": {"Pattern": (True, 1), "Match": (True, 1)},
    "datetime": dict.fromkeys(("date", "datetime", "time", "timedelta", "timezone", "tzinfo"), _CLASS),
    "pathlib": dict.fromkeys(("Path", "PurePath"), _CLASS),
    "decimal": {"Decimal": _CLASS}, "fractions": {"Fraction": _CLASS}, "logging": {"Logger": _CLASS},
    "argparse": dict.fromkeys(("ArgumentParser", "Namespace"), _CLASS),
}  # fmt: skip
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
_EQUALS = re.compile(r"[ \t]*=[ \t]*")  # between a parameter's name and its default


@dataclass(frozen=True)
class Vocabulary:
    """What one annotation may name: `names` alone or in unions, `generics` (name, what it
    takes) before brackets."""

    names: tuple[str, ...]
    generics: tuple[tuple[str, Takes], ...]


@dataclass(frozen=True, kw_only=True)
class Slot:
    """text[start:end] gives way to before + TYPE + after."""

    start: int
    end: int
    before: str
    after: str
    vocabulary: Vocabulary


@dataclass(frozen=True, kw_only=True)
class _Def:
    node: ast.FunctionDef | ast.AsyncFunctionDef
    name: str  # qualified: "Editor.run", "run.inner"
    method: bool  # its first parameter is the instance or the class (self, cls)
    top: int | None  # its top-level statement; None: inside a function (runs after the import)
    shadow: frozenset[str]  # names its enclosing functions and its class body so far bind


def hints_grammar(text: str) -> str:
    """The grammar of `text` with every annotation slot filled (module docstring). It ends
    where the file's last line does: a rewrite's answer gets its final newline with the
    closing fence (`grammar(c, after="\\n" + fence)`), so a trailing newline is left out.
    SyntaxError if `text` is not Python (or has lone carriage returns)."""
    names: dict[Vocabulary, str] = {}  # one family of TYPE rules per vocabulary
    items, at, carry = [], 0, ""
    for s in slots(text):
        items.append(json.dumps(carry + text[at : s.start] + s.before))
        items.append(names.setdefault(s.vocabulary, f"t{len(names)}") + f"_{DEPTH}")
        at, carry = s.end, s.after
    rest = text[at:]
    items.append(json.dumps(carry + (rest[:-1] if rest.endswith("\n") else rest)))
    rules = [f"start: {' '.join(items)}"]
    for v, name in names.items():
        rules += type_rules(name, v)
    return "\n".join(rules) + "\n"


def type_rules(name: str, v: Vocabulary) -> list[str]:
    """Lark rules name_0 .. name_DEPTH: TYPE_d over `v` (module docstring)."""
    rules = [f"{name}_names: {' | '.join(json.dumps(n) for n in v.names)}"] if v.names else []
    for d in range(DEPTH + 1):
        alts = [f"{name}_names"] if v.names else []
        alts += [_subscript(g, takes, f"{name}_{d - 1}") for g, takes in v.generics] if d else []
        a = f"{name}_a{d}"
        either = f'{a} (" | " {a}){{0,{UNION - 1}}} (" | " "None")? | ' if alts else ""
        rules += [f"{a}: {' | '.join(alts)}"] if alts else []
        rules.append(f'{name}_{d}: {either}"None"')
    return rules


def _subscript(g: str, takes: Takes, inner: str) -> str:
    if takes == "tuple":
        return f'{json.dumps(g + "[")} {inner} (", ...]" | (", " {inner}){{0,{TUPLE - 1}}} "]")'
    if takes == "callable":
        return f'{json.dumps(g + "[..., ")} {inner} "]"'
    more = f' ", " {inner}' * (int(takes) - 1)
    return f'{json.dumps(g + "[")} {inner}{more} "]"'


def slots(text: str) -> list[Slot]:
    """Every annotation slot of the file in order, each with the names its type may use."""
    tree = ast.parse(text)
    if re.search("\r(?!\n)", text):  # ast reads them as line ends, tokenize does not
        raise SyntaxError("lone carriage returns (old Mac line ends) are not supported")
    starts = [0] + [m.end() for m in re.finditer("\n", text)]
    lines = text.split("\n")

    def offset(row: int, byte_col: int) -> int:  # ast columns count UTF-8 bytes
        return starts[row - 1] + len(lines[row - 1].encode()[:byte_col].decode())

    closes = _signature_ends(text, starts)
    future, module_bound = _future(tree), _bound(tree)
    out = []
    for d in _defs(tree):
        v = _vocabulary(tree, d, future, module_bound)
        for p, _, has_default in _params(d):
            end = offset(p.end_lineno, p.end_col_offset)
            m = _EQUALS.match(text, end) if has_default else None
            if m is None:
                out.append(Slot(start=end, end=end, before=": ", after="", vocabulary=v))
            else:  # p=0 -> p: T = 0 (a default on the next line keeps its line break)
                eq = " =" if text[m.end() : m.end() + 1] in "\r\n" else " = "
                out.append(Slot(start=end, end=m.end(), before=": ", after=eq, vocabulary=v))
        if d.node.returns is None:
            at = closes[offset(d.node.lineno, d.node.col_offset)]
            out.append(Slot(start=at, end=at, before=" -> ", after="", vocabulary=v))
    return sorted(out, key=lambda s: s.start)


def annotated(text: str, answer: str) -> str | None:
    """None if `answer` is `text` with annotations added only, else the first failure in
    one line. Added: parameter and return annotations, `x: T = v` for `x = v`, top-level
    imports (of the names the annotations use). Also checked: existing annotations kept,
    each name an added annotation uses defined where it is evaluated (and not a builtin an
    enclosing scope rebinds), every slot filled."""
    try:
        before = ast.parse(text)
    except SyntaxError as e:
        return f"cannot be checked: the file does not parse (line {e.lineno}: {e.msg})"
    try:
        after = ast.parse(answer)
    except SyntaxError as e:
        return f"does not parse (line {e.lineno}: {e.msg})"
    bare = _stripped(_without_new_imports(ast.parse(answer), before))
    line = _first_difference(_stripped(ast.parse(text)), bare)
    if line is not None:
        return f"changes code beyond annotations (line {line})"
    old_defs, new_defs = _defs(before), _defs(after)
    pairs = zip(_annotations(before, old_defs), _annotations(after, new_defs), strict=False)
    for (label, old), (_, new) in pairs:
        if old is not None and (new is None or ast.dump(old) != ast.dump(new)):
            return f"changes the annotation of {label} (line {(new or old).lineno})"
    future, module_bound = _future(after), _bound(after)
    for d, old in zip(new_defs, old_defs, strict=False):
        known = set(dir(builtins)) | d.shadow | _bound_in(_top(after, d, future))
        for n in (n for ann in _added(d.node, old.node) for n in ast.walk(ann) if isinstance(n, ast.Name)):
            if n.id not in known:
                where = "is not defined" if n.id not in module_bound else "is defined only later"
                return f"names {n.id}, which {where} (line {n.lineno})"
            if n.id in d.shadow and hasattr(builtins, n.id):
                return f"names {n.id}, which {d.name.rpartition('.')[0]} rebinds (line {n.lineno})"
    missing = [f"{d.name}({star}{p.arg})" for d in new_defs for p, star, _ in _params(d)]
    missing += [f"the return of {d.name}" for d in new_defs if d.node.returns is None]
    if missing:
        more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
        return f"leaves {missing[0]} unannotated{more}"
    return None


# --- the file's functions and their parameters ------------------------------------------


def _defs(tree: ast.Module) -> list[_Def]:
    """Every def (methods and nested functions included), in source order."""
    out: list[_Def] = []

    def visit(node, qual: str, cls: frozenset | None, fns: frozenset, top: int, nested: bool) -> None:
        if isinstance(node, _DEFS):
            static = any(isinstance(x, ast.Name) and x.id == "staticmethod" for x in node.decorator_list)
            method = cls is not None and not static
            shadow = fns | (cls or frozenset())
            where = None if nested else top
            out.append(_Def(node=node, name=qual + node.name, method=method, top=where, shadow=shadow))
            qual, cls, fns, nested = f"{qual}{node.name}.", None, fns | _bound(node), True
        elif isinstance(node, ast.ClassDef):  # a class body binds names as it runs
            for i, stmt in enumerate(node.body):
                visit(stmt, f"{qual}{node.name}.", _bound_in(node.body[:i]), fns, top, nested)
            return
        for child in ast.iter_child_nodes(node):
            visit(child, qual, cls, fns, top, nested)

    for i, stmt in enumerate(tree.body):
        visit(stmt, "", None, frozenset(), i, False)
    return out


def _all_args(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.arg]:
    a = fn.args
    return [p for p in [*a.posonlyargs, *a.args, a.vararg, *a.kwonlyargs, a.kwarg] if p is not None]


def _params(d: _Def) -> list[tuple[ast.arg, str, bool]]:
    """(parameter, "*" or "**" or "", has a default) for each parameter that needs and
    lacks an annotation."""
    a = d.node.args
    positional = a.posonlyargs + a.args
    flags = [False] * (len(positional) - len(a.defaults)) + [True] * len(a.defaults)
    out = [(p, "", has) for p, has in zip(positional, flags, strict=True)][1 if d.method else 0 :]
    out += [(a.vararg, "*", False)] if a.vararg else []
    out += [(p, "", default is not None) for p, default in zip(a.kwonlyargs, a.kw_defaults, strict=True)]
    out += [(a.kwarg, "**", False)] if a.kwarg else []
    return [x for x in out if x[0].annotation is None]


def _signature_ends(text: str, starts: list[int]) -> dict[int, int]:
    """{offset of a def's first token ("def" or "async"): offset just after the ")" that
    closes its parameters}, from the tokens (comments and strings skipped)."""
    out: dict[int, int] = {}
    first, depth, opened, prev = None, 0, False, None
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.NAME and tok.string == "def" and first is None:
            is_async = prev is not None and prev.type == tokenize.NAME and prev.string == "async"
            row, col = prev.start if is_async else tok.start
            first = starts[row - 1] + col
        elif first is not None and tok.type == tokenize.OP and tok.string in ("(", "[", "]", ")"):
            opened = opened or (tok.string == "(" and depth == 0)  # past type parameters: def f[T](
            depth += 1 if tok.string in "([" else -1
            if opened and depth == 0:
                out[first] = starts[tok.end[0] - 1] + tok.end[1]
                first, opened = None, False
        if tok.type not in (tokenize.NL, tokenize.COMMENT):
            prev = tok
    return out


# --- which names a type may use ----------------------------------------------------------


def _future(tree: ast.Module) -> bool:
    """`from __future__ import annotations`: annotations are never evaluated."""
    imports = (s for s in tree.body if isinstance(s, ast.ImportFrom) and s.module == "__future__")
    return any(a.name == "annotations" for s in imports for a in s.names)


def _top(tree: ast.Module, d: _Def, future: bool) -> list[ast.stmt]:
    """The top-level statements run before d's annotations are evaluated (all of them for
    a function inside a function, which runs after the import, or under __future__)."""
    return tree.body if future or d.top is None else tree.body[: d.top]


def _vocabulary(tree: ast.Module, d: _Def, future: bool, module_bound: frozenset[str]) -> Vocabulary:
    found = [(b, True, takes) for b, takes in BUILTINS.items() if b not in module_bound]
    for s in _statements(_top(tree, d, future), deep=future):
        if isinstance(s, ast.ClassDef):
            found.append((s.name, True, None))
        elif isinstance(s, ast.Import | ast.ImportFrom):
            found += _imported(s)
        elif _is_typevar(s):
            found.append((s.targets[0].id, True, None))
    found = [f for f in found if f[0].split(".")[0] not in d.shadow]
    return Vocabulary(
        tuple(dict.fromkeys(n for n, alone, _ in found if alone)),
        tuple(dict.fromkeys((n, takes) for n, _, takes in found if takes)),
    )


def _imported(s: ast.Import | ast.ImportFrom) -> Iterator[tuple[str, bool, Takes]]:
    """(name as the file spells it, usable alone, what it takes) for the types an import binds."""
    if isinstance(s, ast.ImportFrom):
        table = TYPES.get(s.module) if s.level == 0 else None
        for a in s.names:
            spelled = a.asname or a.name
            if table is not None and a.name in table:
                yield spelled, *table[a.name]
            elif table is None and _capwords(spelled):
                yield spelled, True, None
        return
    for a in s.names:  # import a.b binds a (and a.b is reachable); import a.b as c binds a.b
        root = a.name.split(".")[0]
        for module, prefix in [(a.name, a.asname)] if a.asname else [(a.name, a.name), (root, root)]:
            for n, (alone, takes) in TYPES.get(module, {}).items():
                yield f"{prefix}.{n}", alone, takes


def _statements(stmts: list[ast.stmt], deep: bool) -> Iterator[ast.stmt]:
    """The statements, and with `deep` those inside top-level if/try blocks too (under
    __future__, an `if TYPE_CHECKING:` import may be named)."""
    for s in stmts:
        yield s
        if deep and isinstance(s, ast.If | ast.Try):
            inner = [*s.body, *s.orelse, *getattr(s, "finalbody", [])]
            inner += [x for h in getattr(s, "handlers", []) for x in h.body]
            yield from _statements(inner, deep)


def _capwords(name: str) -> bool:
    """A class by convention (Path, OrderedDict), not a function or a CONSTANT."""
    bare = name.lstrip("_")
    return bare[:1].isupper() and any(c.islower() for c in bare)


def _is_typevar(s: ast.stmt) -> bool:
    """T = TypeVar("T") (or typing.TypeVar)."""
    if not (isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name)):
        return False
    f = s.value.func if isinstance(s.value, ast.Call) else None
    return getattr(f, "id", None) == "TypeVar" or getattr(f, "attr", None) == "TypeVar"


def _bound(scope: ast.Module | ast.FunctionDef | ast.AsyncFunctionDef) -> frozenset[str]:
    """The names a module or function binds itself (a function: its parameters too)."""
    params = {p.arg for p in _all_args(scope)} if isinstance(scope, _DEFS) else set()
    return frozenset(params) | _bound_in(scope.body)


def _bound_in(stmts: list[ast.stmt]) -> frozenset[str]:
    """The names these statements bind in their own scope, not in the scopes inside them."""
    out: set[str] = set()
    todo: list[ast.AST] = list(stmts)
    while todo:
        node = todo.pop()
        if isinstance(node, (*_DEFS, ast.ClassDef)):
            out.add(node.name)
            continue
        if isinstance(node, ast.Lambda | ast.GeneratorExp | ast.ListComp | ast.SetComp | ast.DictComp):
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            out.add(node.id)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            out.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and node.name:
            out.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            out.add(node.rest)
        todo.extend(ast.iter_child_nodes(node))
    return frozenset(out)


# --- the check ----------------------------------------------------------------------------


def _without_new_imports(after: ast.Module, before: ast.Module) -> ast.Module:
    """`after` without the top-level imports `before` does not have: in place."""
    old = [ast.dump(s) for s in before.body if isinstance(s, ast.Import | ast.ImportFrom)]
    body = []
    for s in after.body:
        if isinstance(s, ast.Import | ast.ImportFrom):
            if ast.dump(s) not in old:
                continue
            old.remove(ast.dump(s))
        body.append(s)
    after.body = body
    return after


def _stripped(tree: ast.Module) -> ast.Module:
    """The tree without parameter and return annotations, `x: T = v` read as `x = v` (and a
    bare `x: T` without its T): in place."""
    for node in ast.walk(tree):
        if isinstance(node, _DEFS):
            node.returns = None
        elif isinstance(node, ast.arg | ast.AnnAssign):
            node.annotation = None
        for _, value in ast.iter_fields(node):
            if isinstance(value, list):
                value[:] = [
                    ast.Assign([x.target], x.value, lineno=x.lineno)
                    if isinstance(x, ast.AnnAssign) and x.value is not None else x
                    for x in value
                ]  # fmt: skip
    return tree


def _first_difference(a: ast.AST, b: ast.AST, line: int = 1) -> int | None:
    """The line (in b) of the first node where the trees differ; None if they are equal."""
    line = getattr(b, "lineno", line)
    if type(a) is not type(b):
        return line
    for field in a._fields:
        x, y = getattr(a, field, None), getattr(b, field, None)
        if isinstance(x, list) and isinstance(y, list):
            for u, v in zip(x, y, strict=False):
                found = _first_difference(u, v, line) if isinstance(u, ast.AST) else line if u != v else None
                if found is not None:
                    return found
            if len(x) != len(y):
                return getattr(y[len(x)], "lineno", line) if len(y) > len(x) else line
        elif isinstance(x, ast.AST) or isinstance(y, ast.AST):
            found = _first_difference(x, y, line) if isinstance(x, ast.AST) else line
            if found is not None:
                return found
        elif x != y:
            return line
    return None


def _annotations(tree: ast.Module, defs: list[_Def]) -> Iterator[tuple[str, ast.expr | None]]:
    """(label, annotation or None) for every parameter, return and assignment, in an order
    two trees equal once stripped share."""
    for d in defs:
        for p in _all_args(d.node):
            yield f"{d.name}({p.arg})", p.annotation
        yield f"the return of {d.name}", d.node.returns
    for node in ast.walk(tree):
        if isinstance(node, ast.AnnAssign):
            yield ast.unparse(node.target), node.annotation
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            yield ast.unparse(node.targets[0]), None


def _added(new: ast.FunctionDef | ast.AsyncFunctionDef, old: ast.FunctionDef | ast.AsyncFunctionDef):
    """The annotations `new` has where `old` (the same def) had none."""
    pairs = [(new.returns, old.returns)]
    pairs += [(p.annotation, q.annotation) for p, q in zip(_all_args(new), _all_args(old), strict=False)]
    return [n for n, o in pairs if n is not None and o is None]
