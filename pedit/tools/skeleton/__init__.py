"""A document's skeleton: what a fix must copy, apart from the prose it may change.

    text = h_0 s_1 h_1 s_2 ... s_n h_n        s_i skeleton spans, h_i prose holes

`of(text, name)` splits a file by its kind (Markdown: markdown.py, with markdown-it-py;
reStructuredText and plain text: text.py; code: code.py, with pygments' lexer) into
`Span`s of skeleton, each named by what it is ("link target", "code block"); the rest is
prose. The same rules hold for every kind, after its own parse (`finish`):
    - every line break is skeleton, with the line's leading and trailing whitespace, so
      a fix keeps the file's lines and their indentation;
    - URLs and e-mail addresses in prose are skeleton (URL_OR_MAIL);
    - the kind's markup characters (`Kind.marks`: `*`, `[`, `` ` `` in Markdown) are
      skeleton wherever they stand in prose, so a hole's text never contains one;
    - a span is never continued by the prose beside it: it takes in a word it starts or
      ends inside (`base._widen`).
The holes' grammar (grammar.py) forces the spans and lets a fix write any text without
those characters in the holes; the guard compares `items(old)` with `items(new)`
(checks/guard.py) wherever no grammar ran.
"""

from __future__ import annotations

import functools
from pathlib import PurePath

from . import code, markdown
from . import text as plain
from .base import LINE, URL_OR_MAIL, Kind, Skeleton, Span, finish

__all__ = ["LINE", "URL_OR_MAIL", "Kind", "Skeleton", "Span", "finish", "holes", "joined_lines", "of", "segments"]


@functools.lru_cache(maxsize=64)
def of(text: str, name: str) -> Skeleton:
    """The skeleton of `text`, the file `name`, by its kind (module docstring). Kept for the
    texts read last (a Skeleton is immutable): a fix reads each piece's skeleton for its
    grammar, for each tool's filter and for the guard, which parsed it 27 times for the
    demo essay."""
    suffix = PurePath(name).suffix.lower()
    if suffix in markdown.SUFFIXES:
        return finish(text, markdown.spans(text), markdown.KIND)
    if suffix in plain.RST_SUFFIXES:
        return finish(text, plain.rst_spans(text), plain.RST)
    if suffix not in plain.TEXT_SUFFIXES and (found := code.spans(text, name)) is not None:
        return finish(text, found, code.kind(text, found))
    return finish(text, plain.text_spans(text), plain.TEXT)


def holes(text: str, name: str) -> list[tuple[int, int]]:
    """The prose a fix's tools may propose changes in: the skeleton's holes."""
    return of(text, name).holes()


def joined_lines(sk: Skeleton) -> frozenset[int]:
    """Lines (0-based) that continue a span of the line above (a code block's, front
    matter's): a file is never cut into runs there."""
    out = set()
    for s in sk.spans:
        if s.kind == LINE:
            continue
        i = sk.text.find("\n", s.start, s.end - 1)
        while i >= 0:
            out.add(sk.text.count("\n", 0, i) + 1)
            i = sk.text.find("\n", i + 1, s.end - 1)
    return frozenset(out)


def within(text: str, name: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The parts of `spans` that lie in the skeleton's holes: where a tool may propose."""
    out, free = [], holes(text, name)
    for a, b in spans:
        for c, d in free:
            if c < b and a < d:
                out.append((max(a, c), min(b, d)))
    return sorted(out)


def inside(text: str, name: str, start: int, end: int) -> bool:
    """Is text[start:end] inside one hole (a tool's change that touches no skeleton)?"""
    return any(a <= start and end <= b for a, b in holes(text, name))


def changed(old: str, new: str, name: str) -> int:
    """How many pieces of old's skeleton new lost or changed, and how many it added: the
    items (Skeleton.items) outside difflib's matching blocks, on either side."""
    import difflib

    a = [i[:2] for i in of(old, name).items()]
    b = [i[:2] for i in of(new, name).items()]
    kept = sum(m.size for m in difflib.SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks())
    return (len(a) - kept) + (len(b) - kept)


def segments(sk: Skeleton) -> list[str]:
    """The prose between the skeleton's pieces (all spans but a paragraph's line breaks:
    a blank line parts two stretches too), in order. A fix that keeps the skeleton and its
    paragraphs has as many."""
    out, at = [], 0
    for span in sk.spans:
        if span.kind != LINE or sk.text.count("\n", span.start, span.end) > 1:
            out.append(sk.text[at : span.start])
            at = span.end
    out.append(sk.text[at:])
    return out
