"""Checks a program can make of a refactor, from the task's `[task.check]` table.

- parses: the result is valid Python (`ast`); always checked.
- rename = {old = "new", ...}: no old identifier is left, there are as many new ones as
  there were old ones (every use renamed), and every other identifier occurs as often as
  before (nothing else renamed). With `words = true` the same holds for the words of
  comments and strings (docstrings, messages). With `rename_in = "function:NAME"` the
  rename holds inside that function (decorators included) and nothing outside it changes
  (every identifier there, old included, occurs as often as before).
- hints = true: every parameter (but self/cls) and every return of every function is
  annotated.
- defines = ["name", ...]: each is defined at module level (def, class or assignment).
- calls = {function = "name"}: `function` calls `name` somewhere in its body.
- absent = ["print", ...]: none of these is called anywhere.
- loops_in = "name": function `name` has no for/while statement left.
- fstrings = N: no string literal is %-formatted and no `"...".format(...)` call is left,
  and there are at least N f-strings.
- behaviour = ["expr", ...]: each expression, evaluated after running the module, has
  the same repr before and after (in a subprocess, with a time limit). An exception
  counts by its type; with `messages = true` by its message too.
- scope: which source lines may change (the diff touches no unrelated lines):
  "names" (lines with an old name), "signatures" (def lines), "function:NAME" (that
  function's lines), "calls:NAME" (lines that call NAME), "formats" (the lines of each
  %-format or str.format expression that `fstrings` finds); `insert` says where new
  lines may go: "imports" (import lines and module-level assignments), "anywhere", or
  nowhere (the default).
"""

from __future__ import annotations

import ast
import difflib
import io
import json
import re
import subprocess
import sys
import tempfile
import tokenize
from collections import Counter
from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class Check:
    name: str
    passed: bool
    detail: str = ""


def run_checks(source: str, output: str, spec: dict) -> list[Check]:
    try:
        tree = ast.parse(output)
    except SyntaxError as e:
        return [Check(name="parses", passed=False, detail=f"line {e.lineno}: {e.msg}")]
    out = [Check(name="parses", passed=True)]
    old_tree = ast.parse(source)
    if spec.get("rename"):
        out.append(_rename(source, output, spec, bool(spec.get("words"))))
    if spec.get("hints"):
        out.append(_hints(tree))
    for name in spec.get("defines", ()):
        out.append(Check(name=f"defines {name}", passed=name in _module_names(tree)))
    for caller, callee in spec.get("calls", {}).items():
        fn = _function(tree, caller)
        ok = fn is not None and callee in {_callee(c) for c in ast.walk(fn) if isinstance(c, ast.Call)}
        out.append(Check(name=f"{caller} calls {callee}", passed=ok))
    if spec.get("absent"):
        called = Counter(_callee(c) for c in ast.walk(tree) if isinstance(c, ast.Call))
        left = [n for n in spec["absent"] if called[n]]
        out.append(
            Check(name=f"no {', '.join(spec['absent'])} call", passed=not left, detail=", ".join(left))
        )
    if spec.get("loops_in"):
        fn = _function(tree, spec["loops_in"])
        loops = [n for n in ast.walk(fn) if isinstance(n, ast.For | ast.While)] if fn else [None]
        out.append(Check(name=f"no loop in {spec['loops_in']}", passed=not loops))
    if "fstrings" in spec:
        left, made = _formats(tree), _fstrings(tree)
        ok = not left and made >= spec["fstrings"]
        detail = f"{len(left)} %-format/.format left, {made} f-strings (at least {spec['fstrings']})"
        out.append(Check(name="f-strings", passed=ok, detail="" if ok else detail))
    if spec.get("behaviour"):
        out.append(_behaviour(source, output, spec["behaviour"], bool(spec.get("messages"))))
    if spec.get("scope"):
        out.append(_scope(source, output, old_tree, spec))
    return out


def _callee(call: ast.Call) -> str:
    f = call.func
    if isinstance(f, ast.Attribute):
        base = f.value.id if isinstance(f.value, ast.Name) else "?"
        return f"{base}.{f.attr}"
    return f.id if isinstance(f, ast.Name) else "?"


def _function(tree: ast.AST, name: str) -> ast.FunctionDef | None:
    return next(
        (
            n
            for n in ast.walk(tree)
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name == name
        ),
        None,
    )


def _module_names(tree: ast.Module) -> set[str]:
    names = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


def _formats(tree: ast.AST) -> list[ast.expr]:
    """The %-formats of a string literal and the `"...".format(...)` calls."""
    return [
        n
        for n in ast.walk(tree)
        if (isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mod) and _is_str(n.left))
        or (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "format"
            and _is_str(n.func.value))
    ]  # fmt: skip


def _is_str(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _fstrings(tree: ast.AST) -> int:
    """f-strings, not counting the format specs nested in them (`{x:{width}}`)."""
    specs = {id(n.format_spec) for n in ast.walk(tree) if isinstance(n, ast.FormattedValue) and n.format_spec}
    return sum(isinstance(n, ast.JoinedStr) and id(n) not in specs for n in ast.walk(tree))


def _function_lines(tree: ast.AST, name: str) -> set[int]:
    """The 1-based line numbers of function `name`, its decorators included (none if absent)."""
    fn = _function(tree, name)
    if fn is None:
        return set()
    return set(range(min([fn.lineno, *(d.lineno for d in fn.decorator_list)]), fn.end_lineno + 1))


def _words(code: str, lines: set[int] | None = None, inside: bool = True) -> tuple[Counter, Counter]:
    """(identifiers, words of comments and strings) of Python source, counted; with `lines`,
    only the tokens that start on those lines (`inside`) or on the others."""
    names, words = Counter(), Counter()
    for tok in tokenize.generate_tokens(io.StringIO(code).readline):
        if lines is not None and (tok.start[0] in lines) != inside:
            continue
        if tok.type == tokenize.NAME:
            names[tok.string] += 1
        elif tok.type in (tokenize.COMMENT, tokenize.STRING):
            words.update(re.findall(r"[A-Za-z_]\w*", tok.string))
    return names, words


def _rename(source: str, output: str, spec: dict, words: bool) -> Check:
    mapping: dict[str, str] = spec["rename"]
    problems, inner0, inner1 = [], None, None
    if spec.get("rename_in"):
        name = spec["rename_in"].split(":", 1)[1]
        inner0, inner1 = (_function_lines(ast.parse(code), name) for code in (source, output))
        if not inner1:
            return Check(name="rename complete", passed=False, detail=f"no function {name}")
        (m0, v0), (m1, v1) = _words(source, inner0, inside=False), _words(output, inner1, inside=False)
        changed = _changed(m0, m1) | (_changed(v0, v1) if words else set())
        if changed:
            problems.append(f"outside {name}: {', '.join(sorted(changed)[:5])} changed")
    (n0, w0), (n1, w1) = _words(source, inner0), _words(output, inner1)
    for kind, before, after in (("identifier", n0, n1), ("word", w0, w1))[: 2 if words else 1]:
        for old, new in mapping.items():
            if after[old]:
                problems.append(f"{after[old]} {kind} {old} left")
            elif after[new] != before[new] + before[old]:
                problems.append(f"{new}: {after[new]} {kind}s, expected {before[new] + before[old]}")
        if kind == "identifier":
            other = _changed(before, after) - set(mapping) - set(mapping.values())
            if other:
                problems.append("other identifiers changed: " + ", ".join(sorted(other)[:5]))
    return Check(name="rename complete", passed=not problems, detail="; ".join(problems))


def _changed(before: Counter, after: Counter) -> set[str]:
    return {k for k in before | after if before[k] != after[k]}


def _hints(tree: ast.Module) -> Check:
    missing = []
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        a = fn.args
        params = [*a.posonlyargs, *a.args, *a.kwonlyargs, *filter(None, (a.vararg, a.kwarg))]
        missing += [
            f"{fn.name}({p.arg})" for p in params if p.annotation is None and p.arg not in ("self", "cls")
        ]
        if fn.returns is None:
            missing.append(f"{fn.name} -> ?")
    return Check(name="type hints everywhere", passed=not missing, detail=", ".join(missing[:6]))


_PROBE = """
import json, sys
ns = {"__name__": "probe"}
exec(compile(open(sys.argv[1]).read(), sys.argv[1], "exec"), ns)
out = []
for expr in json.loads(sys.argv[2]):
    try:
        out.append(repr(eval(expr, ns)))
    except Exception as e:  # its message only if asked: a rename may reword it
        out.append(f"raised {type(e).__name__}" + (f": {e}" if sys.argv[3] == "1" else ""))
print(json.dumps(out))
"""


def _probe(code: str, exprs: list[str], messages: bool = False) -> list[str] | str:
    with tempfile.TemporaryDirectory() as tmp:
        path = f"{tmp}/module.py"
        with open(path, "w", encoding="utf-8") as f:
            f.write(code)
        try:
            done = subprocess.run(
                [sys.executable, "-I", "-c", _PROBE, path, json.dumps(exprs), "1" if messages else "0"],
                capture_output=True, text=True, timeout=20, cwd=tmp,
            )  # fmt: skip
        except subprocess.TimeoutExpired:
            return "timed out"
    if done.returncode:
        return done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit {done.returncode}"
    return json.loads(done.stdout.strip().splitlines()[-1])


def _behaviour(source: str, output: str, exprs: list[str], messages: bool) -> Check:
    before, after = _probe(source, exprs, messages), _probe(output, exprs, messages)
    if isinstance(after, str):
        return Check(name="behaviour kept", passed=False, detail=after)
    diff = [f"{e}: {a} (was {b})" for e, b, a in zip(exprs, before, after, strict=True) if a != b]
    return Check(name="behaviour kept", passed=not diff, detail="; ".join(diff[:3]))


def _scope(source: str, output: str, tree: ast.Module, spec: dict) -> Check:
    """Every changed source line is one the task may change; inserted lines go where
    `insert` allows."""
    lines = source.splitlines()
    scope, insert = spec["scope"], spec.get("insert", "none")
    allowed: set[int] = set()  # 0-based source line numbers
    if scope == "names":
        pattern = re.compile(r"\b(" + "|".join(map(re.escape, spec["rename"])) + r")\b")
        allowed = {i for i, x in enumerate(lines) if pattern.search(x)}
    elif scope == "signatures":
        for fn in ast.walk(tree):
            if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                allowed |= set(range(fn.lineno - 1, fn.body[0].lineno - 1))
    elif scope.startswith("function:"):
        fn = _function(tree, scope.split(":", 1)[1])
        allowed = set(range(fn.lineno - 1, fn.end_lineno))
    elif scope == "formats":
        allowed = {i for n in _formats(tree) for i in range(n.lineno - 1, n.end_lineno)}
    elif scope.startswith("calls:"):
        name = scope.split(":", 1)[1]
        pattern = re.compile(rf"\b{re.escape(name)}\s*\(")
        allowed = {i for i, x in enumerate(lines) if pattern.search(x)}
    out_lines = output.splitlines()
    bad = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, lines, out_lines, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        outside = [i for i in range(i1, i2) if i not in allowed]
        if outside:
            bad.append(f"line {outside[0] + 1} changed")
        elif tag == "insert":
            new = [x for x in out_lines[j1:j2] if x.strip()]
            if new and (
                insert == "none"
                or (insert == "imports" and not all(re.match(r"(import |from |\w+ = )", x) for x in new))
            ):
                bad.append(f"added {new[0].strip()[:40]!r}")
    return Check(name="no unrelated lines", passed=not bad, detail="; ".join(bad[:3]))
