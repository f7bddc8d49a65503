"""Is a rewrite safe to write? The checks every shell runs before it replaces a file.

A model can answer with a different file: half of it, a paragraph twice, a fix that
rewrites every sentence, code whose grammar "fix" renamed a variable. `reason(command,
name, old, new)` says why such a rewrite must not be written (None: it may be); the
shells refuse with that one line unless the user forces it (RefusedError, exit 5).

Every command: a file of a structured format that parsed before must parse after
(Python, JSON, TOML, YAML); and an answer that is only the start of the file
(`cut_short`, checked per run by jobs.incomplete, chunks included) is not a rewrite.
`fix` only (an instruction to change little), also:
    changed words   d_w(old, new) <= WORDS * |words(old)|, where d_w counts the words
                    replaced, inserted or deleted in difflib's word alignment
    size            len(new) >= SHRINK * len(old)
    paragraphs      every paragraph of old (blank-line separated, >= PARAGRAPH words) keeps
                    most of its words in new, and new has no paragraph old did not have
                    (a duplicated one included)
    code            in a code file, the tokens outside comments and strings are the same
                    (pygments' lexer for the file name): a fix of the prose in code never
                    changes what the code does
"""

from __future__ import annotations

import ast
import difflib
import json
import re
import tomllib
from collections.abc import Callable
from pathlib import PurePath

WORDS = 0.25  # a fix changes at most this share of the words...
MIN_WORDS = 8  # ...once it changes more than this many
SHRINK = 0.5  # a fix keeps at least this share of the characters...
MIN_CHARS = 200  # ...of a file at least this long
PARAGRAPH = 5  # paragraphs with at least this many words are checked
KEPT = 0.5  # a paragraph is kept when at least this share of its words is
PROSE = {".md", ".markdown", ".rst", ".txt", ".text", ".tex", ".html", ".htm", ""}


def reason(command: str, name: str, old: str, new: str) -> str | None:
    """Why `new` must not replace `old` (the file `name`), or None."""
    found = parse_error(name, old, new)
    if found or command != "fix" or new == old:
        return found
    words = Alignment(old, new)  # one difflib alignment serves the two word checks
    found = words.paragraph_lost() or words.too_many_changed() or _shrunk(old, new)
    if not found and PurePath(name).suffix.lower() not in PROSE:
        found = _code_changed(name, old, new)
    return f"a fix {found}" if found else None


# --- structured formats -----------------------------------------------------------------


def _yaml(text: str) -> None:
    import yaml

    try:
        for _ in yaml.safe_load_all(text):
            pass
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}: " if mark else ""
        raise ValueError(f"{where}{getattr(exc, 'problem', None) or exc}") from exc


def _python(text: str) -> None:
    try:
        ast.parse(text)
    except SyntaxError as exc:
        raise ValueError(f"line {exc.lineno}: {exc.msg}") from exc


def _json(text: str) -> None:
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"line {exc.lineno}: {exc.msg}") from exc


def _toml(text: str) -> None:
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(str(exc)) from exc


PARSERS: dict[str, tuple[str, Callable[[str], None]]] = {
    ".py": ("Python", _python),
    ".pyi": ("Python", _python),
    ".json": ("JSON", _json),
    ".toml": ("TOML", _toml),
    ".yaml": ("YAML", _yaml),
    ".yml": ("YAML", _yaml),
}


def parse_error(name: str, old: str, new: str) -> str | None:
    """A structured file that parsed and whose rewrite does not."""
    kind, parse = PARSERS.get(PurePath(name).suffix.lower(), (None, None))
    if parse is None:
        return None
    try:
        parse(old)
    except (ValueError, RecursionError):
        return None  # it did not parse before: nothing to keep
    try:
        parse(new)
    except (ValueError, RecursionError) as exc:
        return f"the rewrite is not valid {kind} ({exc})"
    return None


def cut_short(old: str, new: str) -> str | None:
    """An answer that is the start of the file and much shorter: the model stopped copying
    and closed its block early. Not a rewrite, whatever the command (--force writes it)."""
    head = new.rstrip()
    if head and len(new) < SHRINK * len(old) and old.startswith(head):
        return (
            f"stops early: it is the file's first {head.count(chr(10)) + 1} of "
            f"{old.rstrip().count(chr(10)) + 1} lines"
        )
    return None


# --- what a fix may change --------------------------------------------------------------


def _shrunk(old: str, new: str) -> str | None:
    if len(old) >= MIN_CHARS and len(new) < SHRINK * len(old):
        return f"shrinks the file from {len(old)} to {len(new)} characters"
    return None


class Alignment:
    """difflib's word alignment of old and new (words: whitespace-separated)."""

    def __init__(self, old: str, new: str):
        self.old, self.new = old, new
        self.a, self.b = old.split(), new.split()
        self.ops = difflib.SequenceMatcher(None, self.a, self.b, autojunk=False).get_opcodes()

    def too_many_changed(self) -> str | None:
        changed = sum(max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in self.ops if tag != "equal")
        if changed > MIN_WORDS and changed > WORDS * len(self.a):
            return f"changes {changed} of {len(self.a)} words (more than {WORDS:.0%})"
        return None

    def paragraph_lost(self) -> str | None:
        kept_a, kept_b = [False] * len(self.a), [False] * len(self.b)
        for tag, i1, i2, j1, j2 in self.ops:
            if tag == "equal":
                kept_a[i1:i2] = [True] * (i2 - i1)
                kept_b[j1:j2] = [True] * (j2 - j1)
        for paragraph in _paragraphs(self.old, kept_a):
            return f"drops a paragraph ({_quote(paragraph)})"
        for paragraph in _paragraphs(self.new, kept_b):
            again = " ".join(paragraph) in {" ".join(p) for p in _all_paragraphs(self.old)}
            return f"{'duplicates' if again else 'adds'} a paragraph ({_quote(paragraph)})"
        return None


def _all_paragraphs(text: str) -> list[list[str]]:
    return [p.split() for p in re.split(r"\n[ \t]*\n", text) if p.strip()]


def _paragraphs(text: str, kept: list[bool]):
    """The paragraphs of `text` (word lists) most of whose words the alignment lost."""
    at = 0
    for words in _all_paragraphs(text):
        share = sum(kept[at : at + len(words)]) / len(words)
        if len(words) >= PARAGRAPH and share < KEPT:
            yield words
        at += len(words)


def _quote(words: list[str]) -> str:
    head = " ".join(words[:6])
    return f'"{head}…"' if len(words) > 6 else f'"{head}"'


def _code_changed(name: str, old: str, new: str) -> str | None:
    """The first code token (outside comments and strings) that differs, or None."""
    from pygments.lexers import get_lexer_for_filename
    from pygments.token import Comment, String
    from pygments.util import ClassNotFound

    try:
        lexer = get_lexer_for_filename(name, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return None

    def code(text: str) -> list[tuple[int, str]]:
        out, line = [], 1
        for kind, value in lexer.get_tokens(text):
            if value.strip() and kind not in Comment and kind not in String:
                out.append((line, value.strip()))
            line += value.count("\n")
        return out

    a, b = code(old), code(new)
    for (line, x), (_, y) in zip(a, b, strict=False):
        if x != y:
            return f"changes code, not only comments and strings (line {line}: {x!r} -> {y!r})"
    if len(a) != len(b):
        return "changes code, not only comments and strings (code added or removed)"
    return None
