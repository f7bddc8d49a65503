"""The exact rename: what a refactoring tool makes of "rename OLD to NEW", as the draft of
the model's answer and the yardstick of its check.

Python: rope (a refactoring library that resolves scopes). Every binding named OLD is
renamed with all its uses, one binding at a time: rope's `Rename` at an occurrence renames
that occurrence's binding (a parameter and its uses in one function, a module function
and its calls, a method and `self.method(...)`), so the loop goes on at the first code
occurrence still named OLD until none is left, skipping one rope cannot resolve (`x.old`
on an object from elsewhere: not this file's to rename). Chosen over jedi by measurement:
on fnmatch.py's `pat = os.path.normcase(pat)` jedi renamed one of the two `pat`s (a
reassigned parameter is a new definition to it), rope both; libcst has scopes but no
rename. Other languages: tree-sitter (tree-sitter-language-pack) renames every
identifier token named OLD (no scopes: a token rename), never inside strings or comments.

`docs`: occurrences in comments and strings too, as whole words (rope's own `docs`, the
same rule for tree-sitter). `within`: only the bindings inside that function or class.
A name that is not an identifier of the file is an error before any model loads.
"""

from __future__ import annotations

import ast
import io
import re
import tempfile
import tokenize
from dataclasses import dataclass
from functools import cache
from pathlib import PurePath

from ..errors import UsageError


class RenameError(ValueError):
    """The tool could not rename (the file does not parse): no exact rename to draft with."""


@dataclass(frozen=True)
class Occurrence:
    offset: int  # character offset in the text
    line: int  # 1-based


def code_names(text: str, filename: str) -> list[tuple[str, int]]:
    """(identifier, character offset) of every code identifier token (not in strings or
    comments), in order; raises RenameError if the file cannot be tokenized."""
    if _language(filename) == "python":
        return _python_names(text)
    return [(name, start) for name, start, _, _ in _tree_sitter_tokens(text, filename, "identifier")]


def present(text: str, filename: str, renames: dict[str, str]) -> None:
    """UsageError unless every old name of `renames` is a code name of the file: what the
    command says before a model loads (no rename done: the file's names only). RenameError
    if the file cannot be tokenized."""
    names = {n for n, _ in code_names(text, filename)}
    missing = [old for old in renames if old not in names]
    if missing:
        raise UsageError(f"{filename}: {', '.join(missing)} is not a name in the file: nothing to rename")


def rename(text: str, filename: str, renames: dict[str, str], *, docs: bool = False,
           within: str | None = None) -> str:  # fmt: skip
    """`text` with every rename of `renames` done as the tool does it (see the module)."""
    present(text, filename, renames)
    if _language(filename) == "python":
        span = _span(text, within) if within else None
        for old, new in renames.items():
            text = _rope_rename(text, old, new, docs, span)
            if docs:
                text = _comments_rename(text, old, new, _span(text, within) if within else None)
        return text
    for old, new in renames.items():
        text = _tree_sitter_rename(text, filename, old, new, docs)
    return text


# --- Python: rope -------------------------------------------------------------------------


def _python_names(text: str) -> list[tuple[str, int]]:
    starts = _line_starts(text)
    out = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.NAME:
                out.append((tok.string, starts[tok.start[0] - 1] + tok.start[1]))
    except (tokenize.TokenError, SyntaxError, IndentationError) as exc:
        raise RenameError(f"cannot read the file's names: {exc}") from None
    return out


def _line_starts(text: str) -> list[int]:
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    return starts


def _span(text: str, within: str) -> tuple[int, int] | None:
    """Character range of the function or class `within` (its first definition)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    starts = _line_starts(text)
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and node.name == within:
            return starts[node.lineno - 1], starts[node.end_lineno]
    return None


def _comments_rename(text: str, old: str, new: str, span: tuple[int, int] | None) -> str:
    """Whole words in comments (rope's `docs` renames docstrings, not every comment)."""
    word = re.compile(rf"(?<![\w.]){re.escape(old)}(?!\w)")
    starts, edits = _line_starts(text), []
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.COMMENT:
            at = starts[tok.start[0] - 1] + tok.start[1]
            if span is None or span[0] <= at < span[1]:
                edits.append((at, at + len(tok.string), word.sub(new, tok.string)))
    for s, e, replaced in reversed(edits):
        text = text[:s] + replaced + text[e:]
    return text


def _rope_rename(text: str, old: str, new: str, docs: bool, span: tuple[int, int] | None) -> str:
    from rope.base.exceptions import RopeError
    from rope.base.project import Project
    from rope.refactor.rename import Rename

    try:
        ast.parse(text)
    except SyntaxError as exc:
        raise RenameError(f"the file does not parse (line {exc.lineno}): no exact rename") from None
    with tempfile.TemporaryDirectory() as folder:
        project = Project(folder, ropefolder=None)
        try:
            resource = project.root.create_file("module.py")
            resource.write(text)
            skip = 0  # occurrences rope could not rename, in order
            while True:
                at = [
                    o for n, o in _python_names(text) if n == old and (span is None or span[0] <= o < span[1])
                ]
                if len(at) <= skip:
                    return text
                try:
                    changes = Rename(project, resource, at[skip]).get_changes(new, docs=docs)
                    project.do(changes)
                except RopeError:
                    skip += 1
                    continue
                done = resource.read()
                if done == text:
                    skip += 1
                elif span is not None:  # the function's text moved by the names' growth
                    span = (span[0], span[1] + len(done) - len(text))
                text = done
        finally:
            project.close()


# --- other languages: tree-sitter ----------------------------------------------------------

_LANGUAGES = {
    "py": "python", "pyi": "python", "js": "javascript", "mjs": "javascript", "cjs": "javascript",
    "jsx": "javascript", "ts": "typescript", "tsx": "tsx", "rs": "rust", "go": "go", "java": "java",
    "c": "c", "h": "c", "cc": "cpp", "cpp": "cpp", "cxx": "cpp", "hpp": "cpp", "cs": "csharp",
    "rb": "ruby", "php": "php", "kt": "kotlin", "swift": "swift", "scala": "scala", "lua": "lua",
    "sh": "bash", "bash": "bash", "r": "r", "jl": "julia", "hs": "haskell", "ex": "elixir",
    "exs": "elixir", "dart": "dart", "zig": "zig",
}  # fmt: skip


_MEMBERS = ("property_identifier", "field_identifier")
_STRINGS = ("string", "string_literal", "template_string", "raw_string_literal", "interpreted_string_literal")


def _language(filename: str) -> str | None:
    return _LANGUAGES.get(PurePath(filename).suffix.lower().lstrip("."))


def supported(filename: str) -> bool:
    return _language(filename) is not None


def language(filename: str) -> str | None:
    """The tree-sitter language of a file ("python", "javascript", ...), None if none."""
    return _language(filename)


def suffixes(name: str) -> tuple[str, ...]:
    """The file suffixes (".js", ".mjs", ...) of the language `name`."""
    return tuple(f".{s}" for s, lang in _LANGUAGES.items() if lang == name)


@cache
def _parser(language: str):
    from tree_sitter_language_pack import get_parser

    return get_parser(language)


def _tree_sitter_tokens(text: str, filename: str, kind: str):
    """(text, start, end, node type): character ranges of the leaves of `kind`: "identifier" (any
    identifier-like leaf: identifier, type_identifier, field_identifier, ...) or "doc"
    (comments and strings, whole)."""
    language = _language(filename)
    if language is None:
        raise RenameError(f"{filename}: no parser for this kind of file")
    data = text.encode("utf-8")
    tree = _parser(language).parse(data)
    # tree-sitter counts bytes; the text's characters are found back through the prefix
    out, stack = [], [tree.root_node]
    while stack:
        node = stack.pop()
        is_doc = "comment" in node.type or node.type in _STRINGS
        if kind == "doc" and is_doc:
            out.append(node)
            continue
        if kind == "identifier" and not is_doc and node.child_count == 0 and node.type.endswith("identifier"):
            out.append(node)
            continue
        stack.extend(reversed(node.children))
    out.sort(key=lambda n: n.start_byte)

    def at(byte: int) -> int:
        return len(data[:byte].decode("utf-8", "replace"))

    return [
        (data[n.start_byte : n.end_byte].decode("utf-8"), at(n.start_byte), at(n.end_byte), n.type)
        for n in out
    ]  # fmt: skip


def _tree_sitter_rename(text: str, filename: str, old: str, new: str, docs: bool) -> str:
    """Identifier leaves named `old`; a member's name (`obj.old`: property_identifier,
    field_identifier) only when no plain identifier is named `old` (the user renames a
    field or method, not a variable that shares its name with some object's member). With
    `docs`, whole words in comments and in strings that are prose (have a space): a string
    that is only the name is data."""
    tokens = _tree_sitter_tokens(text, filename, "identifier")
    plain = any(name == old and kind == "identifier" for name, _, _, kind in tokens)
    edits = [(s, e, new) for name, s, e, kind in tokens if name == old and not (plain and kind in _MEMBERS)]
    if docs:
        word = re.compile(rf"(?<![\w$]){re.escape(old)}(?![\w$])")
        for doc, s, e, kind in _tree_sitter_tokens(text, filename, "doc"):
            if "comment" not in kind and not re.search(r"\s", doc):
                continue
            replaced = word.sub(new, doc)
            if replaced != doc:
                edits.append((s, e, replaced))
    for s, e, replacement in sorted(edits, reverse=True):
        text = text[:s] + replacement + text[e:]
    return text


def code_leaves(text: str, filename: str) -> list[tuple[str, int]]:
    """(leaf text, 1-based line) of every code leaf outside comments and strings: what a
    token rename may change (intentcheck compares them with the exact rename's)."""
    language = _language(filename)
    if language is None:
        raise RenameError(f"{filename}: no parser for this kind of file")
    data = text.encode("utf-8")
    out, stack = [], [_parser(language).parse(data).root_node]
    while stack:
        node = stack.pop()
        if "comment" in node.type or node.type in _STRINGS:
            continue
        if node.child_count == 0:
            leaf = data[node.start_byte : node.end_byte].decode("utf-8", "replace").strip()
            if leaf:
                out.append((node.start_byte, leaf, node.start_point[0] + 1))
            continue
        stack.extend(node.children)
    return [(leaf, line) for _, leaf, line in sorted(out)]
