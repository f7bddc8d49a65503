"""print() to logging, as a tool: the draft of `refactor "use logging instead of print"`.

    print()                      -> logger.info("")
    print(x)                     -> logger.info(x)
    print("a:", x, y)            -> logger.info("a: %s %s", x, y)   (% in the literal -> %%)
    print("%-9s" % k, v)         -> logger.info("%-9s %s", k, v)    (the %-format merged)
    print(a, b)                  -> logger.info("%s %s", a, b)
    print(..., file=sys.stderr)  -> logger.warning(...), and so is a print in an `except`
                                    block: both report a problem (logger.error when the
                                    instruction speaks of errors and not of warnings)
and `import logging` before the first import, `logger = logging.getLogger(__name__)`
after the last one (the name the instruction gives, `logger` by default).

A print to another file (`file=f`), with `sep=`, or used as a value is not a log line:
no proposal then (None), the model alone and the check. The level of the other prints is
the one the instruction names first among debug/info/warning ("info messages"), else info.
Plain `ast` and the source's own text: every argument is copied as it was written.
"""

from __future__ import annotations

import ast
import re
import sys

_LEVELS = ("debug", "info", "warning", "error")
_NAME = re.compile(r"\b([A-Za-z_]\w*)\s*=\s*logging\.getLogger\b")


def to_logging(text: str, instruction: str | None = "") -> str | None:
    """The file with every print() call logged instead, or None (module docstring)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    words = (instruction or "").lower()
    name = _NAME.search(instruction or "") or _NAME.search(text)
    logger = name.group(1) if name else "logger"
    level = next((lv for lv in sorted(_LEVELS, key=lambda lv: _at(words, lv)) if lv in words), "info")
    problem = "error" if "error" in words and "warning" not in words else "warning"
    calls = _prints(tree)
    if calls is None or not calls:
        return None
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    edits = []  # (start, end, replacement) in characters
    for call, in_except in calls:
        new = _call(text, call, logger, problem if in_except or _stderr(call) else level)
        if new is None:
            return None
        start = offsets[call.lineno - 1] + _chars(lines[call.lineno - 1], call.col_offset)
        end = offsets[call.end_lineno - 1] + _chars(lines[call.end_lineno - 1], call.end_col_offset)
        edits.append((start, end, new))
    out = text
    for start, end, new in sorted(edits, reverse=True):
        out = out[:start] + new + out[end:]
    return _header(out, logger)


def _at(words: str, level: str) -> int:
    i = words.find(level)
    return i if i >= 0 else len(words)


def _chars(line: str, byte_offset: int) -> int:
    """ast's column (UTF-8 bytes) as a character offset."""
    return len(line.encode()[:byte_offset].decode(errors="ignore"))


def _prints(tree: ast.Module) -> list[tuple[ast.Call, bool]] | None:
    """Each print() call statement and whether it is in an `except` block; None if one is
    not a statement (a value) or the name print is rebound."""
    found, statements = [], set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            statements.add(id(node.value))
        if isinstance(node, ast.Name) and node.id == "print" and isinstance(node.ctx, ast.Store):
            return None
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == "print":
            return None

    def walk(node, in_except):
        for child in ast.iter_child_nodes(node):
            inside = in_except or isinstance(child, ast.ExceptHandler)
            if isinstance(child, ast.Call) and isinstance(child.func, ast.Name) and child.func.id == "print":
                found.append((child, inside))
            walk(child, inside)

    walk(tree, False)
    if any(id(call) not in statements for call, _ in found):
        return None
    return found


def _stderr(call: ast.Call) -> bool:
    return any(k.arg == "file" and ast.unparse(k.value) == "sys.stderr" for k in call.keywords)


def _call(text: str, call: ast.Call, logger: str, level: str) -> str | None:
    """The logging call for one print() call, or None if it is not a log line."""
    for k in call.keywords:
        if k.arg is None or k.arg == "sep":
            return None
        if k.arg == "file" and ast.unparse(k.value) not in ("sys.stderr", "sys.stdout"):
            return None
    if any(isinstance(a, ast.Starred) for a in call.args):
        return None
    args = [ast.get_source_segment(text, a) for a in call.args]
    if any(a is None for a in args):
        return None
    head = f"{logger}.{level}("
    if not call.args:
        return head + '"")'
    if len(args) == 1:
        return head + args[0] + ")"
    first, rest = call.args[0], args[1:]
    fmt = _literal(text, first)
    if fmt is not None:  # print("a:", x) -> ("a: %s", x)
        quote, body = fmt
        body = body.replace("%", "%%")
        return head + ", ".join([quote + body + " %s" * len(rest) + quote, *rest]) + ")"
    if isinstance(first, ast.BinOp) and isinstance(first.op, ast.Mod):  # "%-9s" % k, v
        fmt = _literal(text, first.left)
        if fmt is not None:
            quote, body = fmt
            right = first.right
            values = right.elts if isinstance(right, ast.Tuple) else [right]
            extra = [ast.get_source_segment(text, v) for v in values]
            if None not in extra:
                return head + ", ".join([quote + body + " %s" * len(rest) + quote, *extra, *rest]) + ")"
    return head + ", ".join([f'"{" ".join(["%s"] * len(args))}"', *args]) + ")"


def _literal(text: str, node: ast.AST) -> tuple[str, str] | None:
    """(quote, body) of a plain one-line string literal written with ' or ", else None."""
    if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
        return None
    src = ast.get_source_segment(text, node) or ""
    if len(src) < 2 or src[0] not in "'\"" or src[-1] != src[0] or src.startswith(src[0] * 3):
        return None
    return src[0], src[1:-1]


def _header(text: str, logger: str) -> str:
    """`import logging` and the module's logger, where imports go."""
    tree = ast.parse(text)
    body = tree.body
    imported = any(
        isinstance(n, ast.Import) and any(a.name == "logging" and a.asname is None for a in n.names)
        for n in body
    )
    has_logger = any(
        isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == logger for t in n.targets)
        for n in body
    )
    lines = text.splitlines(keepends=True)
    first = 0  # the line before which `import logging` goes (0-based)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        first = body[0].end_lineno
    future = [n for n in body if isinstance(n, ast.ImportFrom) and n.module == "__future__"]
    if future:
        first = future[-1].end_lineno
    imports = [n for n in body if isinstance(n, ast.Import | ast.ImportFrom)]
    later = [n for n in imports if n.lineno > first]
    if later:
        first = later[0].lineno - 1
    last = imports[-1].end_lineno if imports else first
    make = f"{logger} = logging.getLogger(__name__)\n"
    if not imports:  # none yet: the import, then the logger, two blank lines before the code
        lines.insert(first, "import logging\n\n" + ("" if has_logger else make) + "\n\n")
        return "".join(lines)
    if not has_logger:
        lines.insert(last, "\n" + make)
    if not imported:
        blank = "\n" if later and not _stdlib(later[0]) else ""
        lines.insert(first, "import logging\n" + blank)
    return "".join(lines)


def _stdlib(node: ast.AST) -> bool:
    """An import of the standard library: `import logging` joins its group."""
    names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
    return all(n.split(".")[0] in sys.stdlib_module_names for n in names)
