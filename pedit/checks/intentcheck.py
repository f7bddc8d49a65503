"""Does a refactor's answer do what was asked? The check in the loop, before anything is
written (the guard, guard.py, then judges whether it is safe to write at all).

    rename   the answer's code tokens (everything but strings, comments and whitespace)
             are exactly the exact rename's (rename.py), and every line it changes names
             an old or a new name: strings and comments may differ (a docstring reworded
             around the new name), the code may not
    hints    annotated.annotated: the AST is the file's once annotations are taken away, and
             every parameter and return is annotated
    fstrings no %-formatting of a string literal and no "...".format() call is left, only
             lines that had one change, and a line flynt converted reads as flynt has it
    logging  no print() call is left, logging is imported, every logging call has a
             message whose placeholders take its arguments, only lines with a print()
             call change, and a line added is an import, the logger, or blank
    extract  the new function (the one named, or any function the file did not have) is
             defined and called
    other    a Python file still parses (the guard's parse check, said here too so the
             result names its check)
and for every Python refactor: the answer parses, and uses no name that is bound nowhere
in it (a NameError waiting to happen: a renamed function's old calls, a `logger` used but
never made), unless the file already did.

`check(...) -> Verdict`; a failed verdict's reason is one line naming the first problem.
"""

from __future__ import annotations

import ast
import builtins
import difflib
import io
import re
import tokenize
from dataclasses import dataclass
from pathlib import PurePath

from ..tools.intent import EXTRACT, FSTRINGS, HINTS, LOGGING, RENAME, Intent
from ..tools.rename import RenameError, code_leaves
from .annotated import annotated


@dataclass(frozen=True, kw_only=True)
class Verdict:
    check: str  # "rename", "hints", "fstrings", "logging", "extract", "parse", or "none"
    passed: bool
    reason: str = ""  # why it failed

    def to_dict(self) -> dict:
        return {
            "check": self.check,
            "passed": self.passed,
            **({"reason": self.reason} if self.reason else {}),
        }


def check(intent: Intent, filename: str, before: str, after: str, exact: str | None = None) -> Verdict:
    """The verdict on `after` as a refactor of `before` with `intent`; `exact`: the exact
    rename (None when the tool could not make one: the parse check only)."""
    python = PurePath(filename).suffix.lower() in (".py", ".pyi")
    if intent.kind == RENAME and exact is not None:
        why = code_differs(filename, exact, after) or unrelated_line(before, after, intent.renames)
        if why is None and python:
            why = shadows(before, after, intent.renames)
        if why is None and intent.docs:
            why = words_left(filename, exact, after, intent.renames)
        return Verdict(
            check="rename", passed=why is None, reason=why or (python and undefined(before, after)) or ""
        )
    if not python:
        return Verdict(check="none", passed=True)
    why = parse_error(after)
    if why:
        kind = {HINTS: "hints", FSTRINGS: "fstrings", LOGGING: "logging", EXTRACT: "extract"}.get(intent.kind)
        return Verdict(check=kind or "parse", passed=False, reason=why)
    if intent.kind == HINTS:
        why = annotated(before, after)
        return Verdict(check="hints", passed=why is None, reason=why or "")
    what = {FSTRINGS: ("fstrings", _fstrings), LOGGING: ("logging", _logging), EXTRACT: ("extract", _extract)}
    name, rule = what.get(intent.kind, ("parse", lambda *_: None))
    why = rule(before, after, intent) or undefined(before, after)
    if why is None and intent.kind == FSTRINGS and exact is not None:
        why = _as_converted(before, exact, after)
    return Verdict(check=name, passed=why is None, reason=why or "")


def shadows(before: str, after: str, renames: dict[str, str]) -> str | None:
    """A renamed use that another binding of the new name would take (tools/bindings.shadowed:
    a local `cell_length` beside a call of `cell_len`), or None."""
    from ..tools.bindings import shadowed

    for old, new in renames.items():
        line = shadowed(before, after, old, new)
        if line is not None:
            return (
                f"the scope at line {line} has a {new} of its own: renamed, its use of {old} would become it"
            )
    return None


def parse_error(text: str) -> str | None:
    try:
        ast.parse(text)
    except SyntaxError as exc:
        return f"it is not valid Python (line {exc.lineno}: {exc.msg})"
    return None


_SKIP = {tokenize.COMMENT, tokenize.STRING, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT,
         tokenize.DEDENT, tokenize.ENCODING, tokenize.ENDMARKER}  # fmt: skip


def _python_tokens(text: str, skip: set[int]) -> list[tuple[str, int]] | None:
    """(token, line) of a Python text, the token types in `skip` left out; None if it
    cannot be read."""
    try:
        return [(t.string, t.start[0]) for t in tokenize.generate_tokens(io.StringIO(text).readline)
                if t.type not in skip]  # fmt: skip
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None


def code_tokens(filename: str, text: str) -> list[tuple[str, int]] | None:
    """(token, line) of the code outside strings and comments; None if it cannot be read."""
    if PurePath(filename).suffix.lower() in (".py", ".pyi"):
        return _python_tokens(text, _SKIP)
    try:
        return code_leaves(text, filename)
    except RenameError:
        return None


def code_differs(filename: str, exact: str, after: str) -> str | None:
    """Where `after`'s code first differs from the exact rename's, or None."""
    want, got = code_tokens(filename, exact), code_tokens(filename, after)
    if got is None:
        return "the answer's code cannot be read (unbalanced brackets or strings)"
    if want is None:
        return None
    for (w, _), (g, line) in zip(want, got, strict=False):
        if w != g:
            return f"its code is not the exact rename (line {line}: {g!r} where the rename has {w!r})"
    if len(want) != len(got):
        return "its code is not the exact rename (code added or removed)"
    return None


def missed(filename: str, before: str, exact: str, after: str) -> bool:
    """Did a failed rename leave an old name where the rename has a new one (the model
    did not do all of it: worth a retry leaning harder on the tool), rather than change
    something the rename does not (it strayed: the retry would stray the same way)?
    At the first code token where `after` differs from `exact`, is it `before`'s token?
    (A rename maps tokens one to one, so `before` and `exact` line up index by index.)"""
    old, want, got = (code_tokens(filename, t) for t in (before, exact, after))
    if old is None or want is None or got is None or len(old) != len(want):
        return False
    for i, ((w, _), (g, _)) in enumerate(zip(want, got, strict=False)):
        if w != g:
            return g == old[i][0]
    return False


def words_left(filename: str, exact: str, after: str, renames: dict[str, str]) -> str | None:
    """A rename asked in the docstrings and comments too: an old name left as a word of a
    string or comment where the exact rename has none."""
    if PurePath(filename).suffix.lower() not in (".py", ".pyi"):
        return None
    want, got = _doc_words(exact), _doc_words(after)
    for old in renames:
        if got.get(old, 0) > want.get(old, 0):
            return f"it leaves {old!r} in a docstring, comment or message ({got[old]} left)"
    return None


def _doc_words(text: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type in (tokenize.STRING, tokenize.COMMENT):
                for w in re.findall(r"[A-Za-z_]\w*", tok.string):
                    counts[w] = counts.get(w, 0) + 1
    except (tokenize.TokenError, SyntaxError, IndentationError):
        pass
    return counts


def undefined(before: str, after: str) -> str | None:
    """A name the answer uses that is bound nowhere in it (and was not already so in the
    file): scope-blind, so it misses a name bound in another function, never a name bound
    nowhere."""
    try:
        new = _unbound(ast.parse(after)) - _unbound(ast.parse(before))
    except SyntaxError:
        return None
    return (
        f"it uses {', '.join(sorted(new)[:3])}, defined nowhere (a NameError when it runs)" if new else None
    )


def _unbound(tree: ast.AST) -> set[str]:
    bound, loaded = set(dir(builtins)) | {"__file__", "__name__", "__doc__", "__spec__", "__path__"}, set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (loaded if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            if any(a.name == "*" for a in node.names):
                return set()  # a star import may bind anything
            bound |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
        elif isinstance(node, ast.Global | ast.Nonlocal):
            bound |= set(node.names)
        elif isinstance(node, ast.MatchAs | ast.MatchStar) and node.name:
            bound.add(node.name)
    return loaded - bound


def _format_lines(tree: ast.AST) -> tuple[int, set[int]]:
    """(how many %-formats of a string literal and "...".format() calls, their lines)."""
    n, lines = 0, set()
    for node in ast.walk(tree):
        old = (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and _is_str(node.left)) or (
            isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "format" and _is_str(node.func.value)
        )  # fmt: skip
        if old:
            n += 1
            lines |= set(range(node.lineno, node.end_lineno + 1))
    return n, lines


def _is_str(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _fstrings(before: str, after: str, _intent: Intent) -> str | None:
    left, _ = _format_lines(ast.parse(after))
    if left:
        return f"{left} %-format or .format() call{'s' if left > 1 else ''} left"
    _, allowed = _format_lines(ast.parse(before))
    old, new = before.splitlines(), after.splitlines()
    for tag, i1, i2, _, _ in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        bad = [i + 1 for i in range(i1, i2) if i + 1 not in allowed]
        if tag != "equal" and (bad or (tag == "insert" and i1 + 1 not in allowed and i1 not in allowed)):
            return f"it changes line {bad[0] if bad else i1 + 1}, which formats no string"
    return None


def _as_converted(before: str, tool: str, after: str) -> str | None:
    """The answer's f-strings are flynt's: an f-string keeps each format spec (`%02d` ->
    `{x:02d}`, where a model wrote `{x}` and lost the zero). Token by token, comments and
    layout aside, when flynt converted every format; else line by line where it did."""
    if _format_lines(ast.parse(tool))[0] == 0:
        want, got = _tokens(tool), _tokens(after)
        for (w, _), (g, line) in zip(want, got, strict=False):
            if w != g:
                return f"line {line} is not the f-string flynt makes ({w[:50]!r} where it has {g[:50]!r})"
        return None if len(want) == len(got) else "its code differs from flynt's conversion"
    old, conv, new = before.splitlines(), tool.splitlines(), after.splitlines()
    if not len(old) == len(conv) == len(new):
        return None
    for i, (a, b, c) in enumerate(zip(old, conv, new, strict=True)):
        if a != b and b.split() != c.split():
            return f"line {i + 1} is not the f-string flynt makes of it ({b.strip()[:60]!r})"
    return None


def _tokens(text: str) -> list[tuple[str, int]]:
    """(token, line) of the code and its strings (an f-string is one), comments aside."""
    return _python_tokens(text, _SKIP - {tokenize.STRING}) or []


def _logging(before: str, after: str, _intent: Intent) -> str | None:
    tree = ast.parse(after)
    prints = [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Call) and _called(n) == "print"]
    if prints:
        return f"print() is still called (line {prints[0]})"
    imports = [n for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom)]
    if not any(
        a.name == "logging" for n in imports if isinstance(n, ast.Import) for a in n.names
    ) and not any(n.module == "logging" for n in imports if isinstance(n, ast.ImportFrom)):
        return "it does not import logging"
    return _bad_log_call(tree) or _only_prints(before, after)


_LEVELS = {"debug", "info", "warning", "warn", "error", "critical", "exception", "log"}
_PLACEHOLDER = re.compile(r"%(?:\([^)]*\))?[#0 +-]*(?:\*|\d+)?(?:\.(?:\*|\d+))?[hlL]?([diouxXeEfFgGcrsa%])")


def _n(k: int, what: str) -> str:
    return f"{k} {what}" + ("" if k == 1 else "s")


def _bad_log_call(tree: ast.Module) -> str | None:
    """A logging call that fails when it logs: no message (`logger.info()` raises
    TypeError), or arguments its format does not take (logging prints a traceback)."""
    for n in ast.walk(tree):
        if not (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in _LEVELS):
            continue
        if n.func.attr == "log":
            continue  # the level comes first: not read here
        if not n.args and not any(k.arg == "msg" for k in n.keywords):
            return f"line {n.lineno} logs no message ({ast.unparse(n.func)}() raises TypeError)"
        first, extra = n.args[0] if n.args else None, len(n.args) - 1
        if extra <= 0 or any(isinstance(a, ast.Starred) for a in n.args):
            continue
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            wanted = sum(1 for m in _PLACEHOLDER.finditer(first.value) if m.group(1) != "%")
            if wanted != extra:
                given, takes = _n(extra, "argument"), _n(wanted, "placeholder")
                return f"line {n.lineno} passes {given} to a message with {takes}"
        elif not isinstance(first, ast.Name | ast.Attribute | ast.Subscript | ast.Call):
            return f"line {n.lineno} passes arguments to a message that is not a format string"
    return None


_ADDED = re.compile(r"\s*$|(?:import|from)\s|[A-Za-z_]\w*\s*=\s*logging\.getLogger\(")


def _only_prints(before: str, after: str) -> str | None:
    """Only lines with a print() call change; a line added is an import, the logger, or
    blank (the report's scope check for a logging task, in the loop)."""
    printed = {
        line
        for n in ast.walk(ast.parse(before))
        if isinstance(n, ast.Call) and _called(n) == "print"
        for line in range(n.lineno, n.end_lineno + 1)
    }
    old, new = before.splitlines(), after.splitlines()
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        for i in range(i1, i2):
            if i + 1 not in printed:
                return f"it changes line {i + 1}, which has no print() call"
        if tag == "insert" or i2 - i1 < j2 - j1:
            added = [x for x in new[j1:j2] if tag == "insert" or not re.search("print|log", x)]
            for x in added:
                if not _ADDED.match(x):
                    return f"it adds a line that is not an import or the logger: {x.strip()!r}"
    return None


def _extract(before: str, after: str, intent: Intent) -> str | None:
    old = {
        n.name for n in ast.walk(ast.parse(before)) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
    }
    tree = ast.parse(after)
    defined = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
    wanted = {intent.function} if intent.function else defined - old
    if not wanted or not wanted <= defined:
        return (
            f"it defines no function {intent.function}" if intent.function else "it defines no new function"
        )
    called = {_called(n) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    if not wanted & called:
        return f"it never calls {', '.join(sorted(wanted))}"
    return None


def _called(call: ast.Call) -> str:
    f = call.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""


def names_pattern(renames: dict[str, str]) -> re.Pattern:
    """Any old or new name of a rename, as a whole word: what a line must name to change."""
    return re.compile(r"\b(" + "|".join(map(re.escape, [*renames, *renames.values()])) + r")\b")


def unrelated_line(before: str, after: str, renames: dict[str, str]) -> str | None:
    """A line the answer changes that names none of the old or new names."""
    names = names_pattern(renames)
    old, new = before.splitlines(), after.splitlines()
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        for i in range(i1, i2):
            if not names.search(old[i]):
                return f"it changes line {i + 1}, which names none of the renamed names"
        for j in range(j1, j2):
            if not names.search(new[j]) and new[j].strip():
                return f"it adds or changes line {j + 1} of the answer, which names none of the renamed names"
    return None
