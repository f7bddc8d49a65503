"""The skeleton's checks: the guard's second line behind a fix's grammar (tools/skeleton).

`skeleton_changed` finds a piece of the old text's skeleton the new text does not have as
it was (a link's target, a code block, a marker): the reason, or None. (guard.prose_moved
finds prose that went from one stretch between two pieces to another, which the grammar
allows.)
"""

from __future__ import annotations

import difflib

from ..tools import skeleton


def skeleton_changed(old: skeleton.Skeleton, new: skeleton.Skeleton) -> str | None:
    """The first piece of old's skeleton (tools/skeleton: a link's target, a code span or
    block, markup) that new does not have as it was, in order, or None. A fix under the
    skeleton's grammar cannot change one; a remote backend's, or a grammar-less path's, can.
    Of the pieces one change touches, the weightiest is named (a link's target before the
    `[` that opened it). `old`, `new`: the two texts' skeletons (skeleton.of)."""
    a, b = old.items(), new.items()
    ops = difflib.SequenceMatcher(None, [i[:2] for i in a], [i[:2] for i in b], autojunk=False).get_opcodes()
    for tag, i1, i2, j1, j2 in ops:
        if tag == "equal":
            continue
        if i1 == i2:
            kind, text, line = b[j1]
            return f"adds {kind} on line {line} ({_clip(text)})"
        kind, text, line = max(a[i1:i2], key=lambda item: item[0] not in _LIGHT)
        other = next((t for k, t, _ in b[j1:j2] if k == kind), None)
        if other is None:
            return f"removes the {kind} on line {line} ({_clip(text)})"
        at, was, now = _first_line_apart(text, other)
        return f"changes the {kind} on line {line + at} ({_clip(was)} -> {_clip(now)})"
    return None


_LIGHT = ("markup", "markup character")


def _first_line_apart(a: str, b: str) -> tuple[int, str, str]:
    """(line offset, line of a, line of b) where two texts first differ."""
    x, y = a.splitlines() or [""], b.splitlines() or [""]
    for n, (p, q) in enumerate(zip(x, y, strict=False)):
        if p != q:
            return n, p, q
    n = min(len(x), len(y))
    return n, x[n] if n < len(x) else "", y[n] if n < len(y) else ""


def _clip(text: str, n: int = 40) -> str:
    one = " ".join(text.split())
    return repr(one if len(one) <= n else one[: n - 1] + "…")
