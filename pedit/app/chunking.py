"""Files larger than the context window: split at natural boundaries, edit each piece.

A block starts at a line that follows a blank line, at a Markdown or reStructuredText
heading, and at a top-level definition of a code file (def, class, decorators, function
or type declarations in C-like languages); blocks are packed greedily into chunks that fit
the token budget. A block too big for a chunk is split at line ends; a single line too big
is an error that says so with its size. The chunks concatenate back to the exact text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from itertools import accumulate

from ..errors import UsageError

_STARTS = re.compile(
    r"^(#{1,6}\s|(async\s+)?def\s|class\s|@\w|fn\s|func\s|function\s|pub\s|impl\s|struct\s|"
    r"(public|private|static)\s|[=\-~^]{3,}\s*$)"
)


def blocks(text: str, joined: frozenset[int] = frozenset()) -> list[str]:
    """Natural blocks of `text`; "".join(blocks(text)) == text. No block starts at a line
    in `joined` (0-based: a line that continues the skeleton span above it, a fenced code
    block's, skeleton.joined_lines)."""
    out: list[str] = []
    current: list[str] = []
    previous = ""
    for n, line in enumerate(text.splitlines(keepends=True)):
        starts = not previous.strip() or (_STARTS.match(line) and not previous.startswith("@"))
        starts = starts and n not in joined
        if current and line.strip() and starts:
            out.append("".join(current))
            current = []
        current.append(line)
        previous = line
    if current:
        out.append("".join(current))
    return out


def chunks(
    text: str, count: Callable[[str], int], budget: int, joined: frozenset[int] = frozenset()
) -> list[str]:
    """Pack blocks (or, for an oversized block, lines) into pieces of <= budget tokens."""
    pieces: list[str] = []
    current = ""
    for unit in _units(text, count, budget, joined):
        if current and count(current + unit) > budget:
            pieces.append(current)
            current = ""
        current += unit
    if current:
        pieces.append(current)
    return pieces


# an edited piece may grow this far past the budget and still run whole (rechunk): cut in
# two, it would cost a second run and its frame, for a few tokens more of one paragraph
GROWN = 1.25


def rechunk(
    text: str, previous: Sequence[str], count: Callable[[str], int], budget: int,
    joined: frozenset[int] = frozenset(), room: int | None = None,
) -> list[str]:
    """chunks(), but the pieces of this file's last cut (`previous`, in order) that are
    found again whole, each starting and ending where a piece may (a block's or an
    oversized block's line's edge), stay pieces; only the text between them is packed
    anew. An edit then cuts only where it changed the text: the pieces before and after
    it are those of the last cut (whose answers the answer cache keeps), where chunks()
    alone would move every cut after a paragraph that grew past its piece's budget. Text
    between two found pieces of at most GROWN x budget tokens (and `room`, the most a run
    can take) stays one piece: an edit that makes a paragraph a little longer runs one
    piece, not two."""
    units = list(_units(text, count, budget, joined))
    bounds = [0, *accumulate(len(u) for u in units)]
    at = {b: i for i, b in enumerate(bounds)}
    out: list[str] = []
    gap = i = j = 0  # the text from `gap` is not placed yet; previous[j:] may still be found
    while i < len(bounds) - 1:
        b = bounds[i]
        k = next((k for k in range(j, len(previous))
                  if previous[k] and text.startswith(previous[k], b) and b + len(previous[k]) in at), None)  # fmt: skip
        if k is None:
            i += 1
            continue
        out += _packed(text, gap, b, count, budget, joined, room)
        out.append(previous[k])
        gap, j = b + len(previous[k]), k + 1
        i = at[gap]
    return out + _packed(text, gap, len(text), count, budget, joined, room)


def _packed(
    text: str, start: int, end: int, count, budget: int, joined: frozenset[int], room: int | None
) -> list[str]:
    """chunks() of text[start:end], which starts at a piece's edge (its lines counted from
    there); one piece if it is at most GROWN x budget tokens and `room`."""
    if start >= end:
        return []
    if room is not None and count(text[start:end]) <= min(room, int(budget * GROWN)):
        return [text[start:end]]
    first = text.count("\n", 0, start)
    return chunks(text[start:end], count, budget, frozenset(n - first for n in joined if n >= first))


def _units(text: str, count: Callable[[str], int], budget: int, joined: frozenset[int]):
    for block in blocks(text, joined):
        if count(block) <= budget:
            yield block
            continue
        for line in block.splitlines(keepends=True):
            size = count(line)
            if size > budget:
                raise UsageError(
                    f"a single line of {size} tokens is longer than the {budget} tokens a chunk "
                    "may have in this context window (raise --n-ctx)"
                )
            yield line


def cut_like(draft: str, pieces: list[str]) -> list[str] | None:
    """`draft` cut into as many lines as each piece has (None if the counts differ and
    there is more than one piece: the lines would not line up)."""
    if len(pieces) == 1:
        return [draft]
    lines = draft.splitlines(keepends=True)
    if len(lines) != sum(len(p.splitlines(keepends=True)) for p in pieces):
        return None
    out, at = [], 0
    for p in pieces:
        n = len(p.splitlines(keepends=True))
        out.append("".join(lines[at : at + n]))
        at += n
    return out


def span_segments(text: str, spans: list[tuple[int, int]]) -> list[tuple[str, str | None]]:
    """`text` cut at the spans: (piece, "lines a-b") for a span, (piece, None) between."""
    out: list[tuple[str, str | None]] = []
    at = line = 0
    for start, end in spans:
        out.append((text[at:start], None))
        line += text.count("\n", at, start)
        part = text[start:end]
        out.append((part, f"lines {line + 1}-{line + max(1, part.count(chr(10)))}"))
        line += part.count("\n")
        at = end
    out.append((text[at:], None))
    return out


def same_trailing_newlines(answer: str, piece: str) -> str:
    """A chunk's rewrite ends with as many newlines as the chunk did (the blank lines
    between chunks belong to the file, not to the model)."""
    want = len(piece) - len(piece.rstrip("\n"))
    return answer.rstrip("\n") + "\n" * want
