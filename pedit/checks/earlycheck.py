"""Checks that decide early: the part of a rename's answer written so far already fails
the check the whole answer would fail, so the model is stopped there.

A rename's answer is checked against the exact rename (intentcheck.check): its code must
be the exact rename's, token for token (code_differs), and no line it changes may name
none of the renamed names (unrelated_line). Two facts about a prefix of complete lines
decide that check for every way the answer could go on:

  code  the prefix's code tokens differ from the exact rename's at index i (or outnumber
        them). Tokens of complete lines do not change with what follows (a token still
        open at the prefix's end, a string or a bracketed continuation, is not read yet),
        so the whole answer differs at i too: code_differs fails. Whether the rename was
        missed (the answer's token i is the original's) or strayed is decided at that same
        index, so what refactor.py does next is what it would have done at the end.
  line  a complete, non-blank line of the prefix names none of the renamed names and is
        not a line of the original file. No alignment of the whole answer with the
        original can pair it with an equal line, so it is in a block unrelated_line
        refuses. What the rest would have done is unknown, so this one is a stray: the
        exact rename is taken without the retry that finishes a missed rename.

  refuses(prefix) -> Early | None    (only complete lines are read)

`watched` reads a run's events and ends the run at the first pass after which the answer
so far is refused: its figures are those of the passes made, its stop reason "check".
The model's output is not touched (the same tokens up to there): only fewer are made.
"""

from __future__ import annotations

import io
import tokenize
from collections.abc import Callable, Generator
from dataclasses import dataclass, replace
from pathlib import PurePath
from typing import TypeVar

from ..events import Finished, Progress, TextReceived, TokenGenerated, TokensAccepted
from .intentcheck import _SKIP, code_tokens, names_pattern

E = TypeVar("E")
R = TypeVar("R")


@dataclass(frozen=True, kw_only=True)
class Early:
    reason: str  # as the check would say it
    missed: bool  # the first code difference is an old name left: worth the retry


class EarlyCheck:
    """The early verdict on a rename's answer: `before` renamed into `exact` (the exact
    rename) with `renames` {old: new}; `filename` says whether it is Python."""

    def __init__(self, filename: str, before: str, exact: str, renames: dict[str, str]):
        self.python = PurePath(filename).suffix.lower() in (".py", ".pyi")
        self.lines = set(before.splitlines())
        self.names = names_pattern(renames)  # unrelated_line's own: the early verdict is the check's
        self.old = code_tokens(filename, before) if self.python else None
        self.want = code_tokens(filename, exact) if self.python else None
        self.seen = 0  # complete lines already read

    def refuses(self, prefix: str) -> Early | None:
        """Why the answer whose first characters are `prefix` fails its check, whatever
        follows; None while it may still pass."""
        end = prefix.rfind("\n") + 1
        lines = prefix[:end].splitlines()
        for j in range(self.seen, len(lines)):
            line = lines[j]
            if line.strip() and line not in self.lines and not self.names.search(line):
                why = f"it adds or changes line {j + 1} of the answer, which names none of the renamed names"
                return Early(reason=why, missed=False)
        self.seen = len(lines)
        return self._code(prefix[:end]) if self.want is not None else None

    def _code(self, done: str) -> Early | None:
        got = _settled_tokens(done)
        want, old = self.want, self.old
        for i, (g, line) in enumerate(got):
            if i >= len(want):
                return Early(reason="its code is not the exact rename (code added or removed)", missed=False)
            if g != want[i][0]:
                why = (f"its code is not the exact rename (line {line}: {g!r} where the rename has"
                       f" {want[i][0]!r})")  # fmt: skip
                same_length = old is not None and len(old) == len(want)
                return Early(reason=why, missed=same_length and g == old[i][0])
        return None


def _settled_tokens(text: str) -> list[tuple[str, int]]:
    """(token, line) of the code in `text` (complete lines) outside strings and comments,
    as far as the tokenizer reads it: up to a string or a bracket still open at the end,
    whose tokens are not settled until it closes."""
    out: list[tuple[str, int]] = []
    try:
        for t in tokenize.generate_tokens(io.StringIO(text).readline):
            if t.type == tokenize.ERRORTOKEN:
                break  # an unterminated string's quote: what follows is not code yet
            if t.type not in _SKIP:
                out.append((t.string, t.start[0]))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        pass
    return out


@dataclass(frozen=True)
class Stopped:
    """An answer stopped by its early check: why, and the text it had written."""

    early: Early
    text: str


def watched(
    events: Generator[E, None, R], refuses: Callable[[str], Early | None], stopped: list[Stopped]
) -> Generator[E | Finished, None, R | None]:
    """`events` (one run's), ended after the first pass at whose end `refuses(the text so
    far)` finds the answer failing: the run stops there (the engine's generator closed at
    that pass) and ends with a Finished holding that text and that pass's figures, stop
    reason "check", and `stopped` gets Stopped(why, text); else `events`' own value."""
    tokens: list[int] = []
    text: list[str] = []
    try:
        while True:
            try:
                ev = next(events)
            except StopIteration as end:
                return end.value
            yield ev
            if isinstance(ev, TokenGenerated):
                tokens.append(ev.token)
            elif isinstance(ev, TokensAccepted):
                tokens.extend(ev.tokens)
            if isinstance(ev, TokenGenerated | TokensAccepted | TextReceived):
                text.append(ev.text)
            if isinstance(ev, Progress) and (early := refuses("".join(text))) is not None:
                stopped.append(Stopped(early, "".join(text)))
                yield Finished(tuple(tokens), "".join(text), replace(ev.stats, stop_reason="check"))
                return None
    finally:
        events.close()
