"""The check of the "add type hints" intent: `annotated(text, answer)` is None if `answer`
is `text` with annotations (and imports) added only and every slot filled, else a reason
(pedit/tools/hints.py makes the grammar that proposes them)."""

from __future__ import annotations

import ast
import builtins
from collections.abc import Iterator

from ..tools.hints import (
    DEFS,
    Def,
    all_args,
    bound,
    bound_in,
    defs,
    has_future_annotations,
    params,
    top_statements,
)


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
    old_defs, new_defs = defs(before), defs(after)
    pairs = zip(_annotations(before, old_defs), _annotations(after, new_defs), strict=False)
    for (label, old), (_, new) in pairs:
        if old is not None and (new is None or ast.dump(old) != ast.dump(new)):
            return f"changes the annotation of {label} (line {(new or old).lineno})"
    future, module_bound = has_future_annotations(after), bound(after)
    for d, old in zip(new_defs, old_defs, strict=False):
        known = set(dir(builtins)) | d.shadow | bound_in(top_statements(after, d, future))
        for n in (n for ann in _added(d.node, old.node) for n in ast.walk(ann) if isinstance(n, ast.Name)):
            if n.id not in known:
                where = "is not defined" if n.id not in module_bound else "is defined only later"
                return f"names {n.id}, which {where} (line {n.lineno})"
            if n.id in d.shadow and hasattr(builtins, n.id):
                return f"names {n.id}, which {d.name.rpartition('.')[0]} rebinds (line {n.lineno})"
    missing = [f"{d.name}({star}{p.arg})" for d in new_defs for p, star, _ in params(d)]
    missing += [f"the return of {d.name}" for d in new_defs if d.node.returns is None]
    if missing:
        more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
        return f"leaves {missing[0]} unannotated{more}"
    return None


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
        if isinstance(node, DEFS):
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


def _annotations(tree: ast.Module, defs: list[Def]) -> Iterator[tuple[str, ast.expr | None]]:
    """(label, annotation or None) for every parameter, return and assignment, in an order
    two trees equal once stripped share."""
    for d in defs:
        for p in all_args(d.node):
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
    pairs += [(p.annotation, q.annotation) for p, q in zip(all_args(new), all_args(old), strict=False)]
    return [n for n, o in pairs if n is not None and o is None]
