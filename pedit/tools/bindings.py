"""What a rename's strings and bindings are, read from a module's AST and tokens: the
names a module binds at its top level, the strings that follow a renamed binding exactly
(`__all__`'s entries, string annotations, `typing.cast("T", x)`), the strings that name an
attribute (getattr and its kind), and which strings are docstrings (projectrename.py)."""

from __future__ import annotations

import ast
import io
import re
import tokenize


def module_bindings(tree: ast.Module) -> set[str]:
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
            out |= module_bindings(ast.Module(body=[*ast.iter_child_nodes(node)], type_ignores=[]))
    return out


def exported(text: str, renames: dict[str, str]) -> str:
    """`__all__`'s entries renamed where the module's own binding was: a module-level
    `__all__` list or tuple of strings naming OLD, in a file that binds NEW at module level
    now and OLD no more (rope renames the binding, not the string that exports it)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return text
    bound = module_bindings(tree)
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


_BY_NAME = {"getattr", "hasattr", "setattr", "delattr", "attrgetter", "methodcaller", "object"}


def dynamic(text: str) -> set[tuple[int, int]]:
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


def tokens(text: str) -> list[tuple[tokenize.TokenInfo, bool]]:
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


def body(literal: str) -> str:
    try:
        value = ast.literal_eval(literal)
    except (ValueError, SyntaxError):
        return literal
    return value if isinstance(value, str) else ""


def prose(text: str, renames: dict[str, str]) -> int:
    """Comments and docstrings that name an old name as a whole word."""
    if not any(o in text for o in renames):
        return 0
    words = re.compile(rf"(?<![\w.])(?:{'|'.join(map(re.escape, renames))})(?!\w)")
    return sum(
        1 for tok, doc in tokens(text) if (tok.type == tokenize.COMMENT or doc) and words.search(tok.string)
    )  # fmt: skip


def shadowed(before: str, after: str, old: str, new: str) -> int | None:
    """The line of a scope where the rename made a use of OLD another binding's: OLD was
    not this scope's own name, was renamed here, and NEW is bound in this scope or in a
    function around it, nearer than OLD's binding (rich's `cell_length = segment.cell_length`
    beside `cell_len(before)`: renamed, the call would take the local int); or OLD and NEW
    were both this scope's own names and OLD's is renamed (two names become one). None if
    no scope has either (symtable's scopes of both texts, walked together)."""
    import symtable

    try:
        tables = symtable.symtable(before, "before", "exec"), symtable.symtable(after, "after", "exec")
    except (SyntaxError, ValueError):
        return None

    def has(table, name: str, local: bool = False) -> bool:
        try:
            symbol = table.lookup(name)
        except KeyError:
            return False
        return symbol.is_local() if local else symbol.is_referenced() or symbol.is_local()

    def walk(a, b, around: list) -> int | None:
        if has(a, old) and not has(b, old):  # OLD's uses and bindings here all renamed
            if has(a, old, local=True):
                if has(a, new, local=True):
                    return a.get_lineno()
            else:
                # a class body is no closure: a function in it does not see its names
                outward = [s for s in reversed(around) if s.get_type() != "class"]
                for scope in [a, *outward]:
                    if has(scope, old, local=True):
                        break
                    if has(scope, new, local=True) and scope.get_type() != "module":
                        return a.get_lineno()
        for ca, cb in zip(a.get_children(), b.get_children(), strict=False):
            line = walk(ca, cb, [*around, a])
            if line is not None:
                return line
        return None

    return walk(*tables, [])
