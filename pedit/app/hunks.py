"""A rewrite as hunks the user accepts one by one (difflib over lines).

    old lines  --SequenceMatcher opcodes-->  hunks: (old[i1:i2] -> new[j1:j2]), one per change
    merge(old, hunks, chosen) = old with the chosen hunks replaced by their new lines

Choosing every hunk gives exactly `new`; choosing none gives `old`.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Hunk:
    old_start: int  # first line of the change in the old text (0-based)
    old: tuple[str, ...]  # the lines it replaces (keepends)
    new: tuple[str, ...]  # the lines it puts there


def hunks(old: str, new: str) -> list[Hunk]:
    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    return [
        Hunk(i1, tuple(a[i1:i2]), tuple(b[j1:j2]))
        for tag, i1, i2, j1, j2 in matcher.get_opcodes()
        if tag != "equal"
    ]


def merge(old: str, all_hunks: list[Hunk], chosen: Iterable[int]) -> str:
    """`old` with the hunks whose index is in `chosen` applied."""
    take = set(chosen)
    lines = old.splitlines(keepends=True)
    out: list[str] = []
    at = 0
    for i, h in enumerate(all_hunks):
        out += lines[at : h.old_start]
        out += h.new if i in take else h.old
        at = h.old_start + len(h.old)
    out += lines[at:]
    return "".join(out)
