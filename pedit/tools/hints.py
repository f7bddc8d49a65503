"""Type hints as an edit grammar: a refactor's "add type hints" draft, constrained.

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

Its check, `annotated(text, answer)`, is in pedit/checks/annotated.py.
"""

from __future__ import annotations

import ast
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
DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
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
class Def:
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
    future, module_bound = has_future_annotations(tree), bound(tree)
    out = []
    for d in defs(tree):
        v = _vocabulary(tree, d, future, module_bound)
        for p, _, has_default in params(d):
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


# --- the file's functions and their parameters ------------------------------------------


def defs(tree: ast.Module) -> list[Def]:
    """Every def (methods and nested functions included), in source order."""
    out: list[Def] = []

    def visit(node, qual: str, cls: frozenset | None, fns: frozenset, top: int, nested: bool) -> None:
        if isinstance(node, DEFS):
            static = any(isinstance(x, ast.Name) and x.id == "staticmethod" for x in node.decorator_list)
            method = cls is not None and not static
            shadow = fns | (cls or frozenset())
            where = None if nested else top
            out.append(Def(node=node, name=qual + node.name, method=method, top=where, shadow=shadow))
            qual, cls, fns, nested = f"{qual}{node.name}.", None, fns | bound(node), True
        elif isinstance(node, ast.ClassDef):  # a class body binds names as it runs
            for i, stmt in enumerate(node.body):
                visit(stmt, f"{qual}{node.name}.", bound_in(node.body[:i]), fns, top, nested)
            return
        for child in ast.iter_child_nodes(node):
            visit(child, qual, cls, fns, top, nested)

    for i, stmt in enumerate(tree.body):
        visit(stmt, "", None, frozenset(), i, False)
    return out


def all_args(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.arg]:
    a = fn.args
    return [p for p in [*a.posonlyargs, *a.args, a.vararg, *a.kwonlyargs, a.kwarg] if p is not None]


def params(d: Def) -> list[tuple[ast.arg, str, bool]]:
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


def has_future_annotations(tree: ast.Module) -> bool:
    """`from __future__ import annotations`: annotations are never evaluated."""
    imports = (s for s in tree.body if isinstance(s, ast.ImportFrom) and s.module == "__future__")
    return any(a.name == "annotations" for s in imports for a in s.names)


def top_statements(tree: ast.Module, d: Def, future: bool) -> list[ast.stmt]:
    """The top-level statements run before d's annotations are evaluated (all of them for
    a function inside a function, which runs after the import, or under __future__)."""
    return tree.body if future or d.top is None else tree.body[: d.top]


def _vocabulary(tree: ast.Module, d: Def, future: bool, module_bound: frozenset[str]) -> Vocabulary:
    found = [(b, True, takes) for b, takes in BUILTINS.items() if b not in module_bound]
    for s in _statements(top_statements(tree, d, future), deep=future):
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


def bound(scope: ast.Module | ast.FunctionDef | ast.AsyncFunctionDef) -> frozenset[str]:
    """The names a module or function binds itself (a function: its parameters too)."""
    params = {p.arg for p in all_args(scope)} if isinstance(scope, DEFS) else set()
    return frozenset(params) | bound_in(scope.body)


def bound_in(stmts: list[ast.stmt]) -> frozenset[str]:
    """The names these statements bind in their own scope, not in the scopes inside them."""
    out: set[str] = set()
    todo: list[ast.AST] = list(stmts)
    while todo:
        node = todo.pop()
        if isinstance(node, (*DEFS, ast.ClassDef)):
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
