"""Does a refactor's answer do what was asked? The check in the loop, before anything is
written (the guard, guard.py, then judges whether it is safe to write at all).

    rename   the answer's code tokens (everything but strings, comments and whitespace)
             are exactly the exact rename's (rename.py), and every line it changes names
             an old or a new name: strings and comments may differ (a docstring reworded
             around the new name), the code may not
    hints    hints.annotated: the AST is the file's once annotations are taken away, and
             every parameter and return is annotated
    other    a Python file still parses (the guard's parse check, said here too so the
             result names its check)

`check(...) -> Verdict`; a failed verdict's reason is one line naming the first problem.
"""

from __future__ import annotations

import ast
import difflib
import io
import re
import tokenize
from dataclasses import dataclass
from pathlib import PurePath

from .intent import HINTS, RENAME, Intent


@dataclass(frozen=True)
class Verdict:
    check: str  # "rename", "hints", "parse" or "none" (nothing a program can check)
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
        return Verdict("rename", why is None, why or "")
    if intent.kind == HINTS and python:
        from .hints import annotated

        why = annotated(before, after)
        return Verdict("hints", why is None, why or "")
    if python:
        why = parse_error(after)
        return Verdict("parse", why is None, why or "")
    return Verdict("none", True)


def parse_error(text: str) -> str | None:
    try:
        ast.parse(text)
    except SyntaxError as exc:
        return f"it is not valid Python (line {exc.lineno}: {exc.msg})"
    return None


_SKIP = {tokenize.COMMENT, tokenize.STRING, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT,
         tokenize.DEDENT, tokenize.ENCODING, tokenize.ENDMARKER}  # fmt: skip


def code_tokens(filename: str, text: str) -> list[tuple[str, int]] | None:
    """(token, line) of the code outside strings and comments; None if it cannot be read."""
    if PurePath(filename).suffix.lower() in (".py", ".pyi"):
        out = []
        try:
            for tok in tokenize.generate_tokens(io.StringIO(text).readline):
                if tok.type not in _SKIP:
                    out.append((tok.string, tok.start[0]))
        except (tokenize.TokenError, SyntaxError, IndentationError):
            return None
        return out
    from .rename import RenameError, code_leaves

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


def unrelated_line(before: str, after: str, renames: dict[str, str]) -> str | None:
    """A line the answer changes that names none of the old or new names."""
    names = re.compile(r"\b(" + "|".join(map(re.escape, [*renames, *renames.values()])) + r")\b")
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
