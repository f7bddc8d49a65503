"""Markdown's skeleton, from markdown-it-py's parse (CommonMark, GFM tables and
strikethrough, front matter).

Every character starts as skeleton; the prose is what the parse calls text (headings,
paragraphs, list items, table cells, link text, image alt text), each text token found in
the source after the one before it. What lies between two text tokens is the markup that
the tokens between them stand for, named line by line by what its characters say (a
code span, a link's target, HTML, a line's prefix). Lines that belong to no block (a reference
definition) stay skeleton, and so do code blocks, HTML blocks, front matter, rules and a
table's alignment row, whole. A link whose text is its label (`[text]`, `[text][]`) keeps
its text: a fix that changed it would break the link.

Each found hole is checked by replacing its letters and digits with others and parsing
again: a hole whose change would change any other token (the parse found text where the
source has markup) is skeleton after all (`_stable`).
"""

from __future__ import annotations

import functools
import re
from functools import cache

from .base import LINE, Kind, Span

SUFFIXES = (".md", ".markdown", ".mdown", ".mkd")
# markup wherever it stands in prose: emphasis, code, links and images, HTML and autolinks,
# tables, escapes, headings, strikethrough, quotes; `/` and `@` so no URL or address is written
KIND = Kind("markdown", "*_`[]<>!|\\#~/@", blocks=True)
BLOCK_KINDS = {
    "fence": "code block", "code_block": "code block", "html_block": "HTML",
    "front_matter": "front matter", "hr": "rule",
}  # fmt: skip
_PREFIX = re.compile(r"[ \t]*(?:(#{1,6})|(>)|([-+*]|\d{1,9}[.)])|(\|))")


@cache
def parser():
    from markdown_it import MarkdownIt
    from mdit_py_plugins.front_matter import front_matter_plugin

    return MarkdownIt("commonmark").enable(["table", "strikethrough"]).use(front_matter_plugin)


def spans(text: str) -> list[Span]:
    """The skeleton spans of a Markdown text (module docstring); the rest is prose."""
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    tokens = parser().parse(text)
    prose = _prose(text, tokens, starts)
    shape = _shape(tokens)
    if not _stable(text, prose, shape):  # one hole or more is markup: find which
        prose = [h for h in prose if _stable(text, [h], shape)]
    blocks = _line_kinds(tokens)
    out, at = [], 0
    for a, b in [*prose, (len(text), len(text))]:
        for line in re.finditer(r"[^\n]*\n?", text[at:a]) if a > at else ():  # named line by line
            if line.group():
                start = at + line.start()
                out.append(Span(start, start + len(line.group()), _name(text, start, at + line.end(), blocks)))
        at = b
    return out


def _line_kinds(tokens) -> dict[int, str]:
    """line -> the block it is in: a kind of BLOCK_KINDS, "table", or "" (other blocks);
    a line in no block (a reference definition, a blank line) is absent."""
    out: dict[int, str] = {}
    for t in tokens:
        if t.map is None:
            continue
        kind = BLOCK_KINDS.get(t.type, "table" if t.type == "table_open" else "")
        for line in range(*t.map):
            if kind or line not in out:
                out[line] = kind
    return out


def _prose(text: str, tokens, starts: list[int]) -> list[tuple[int, int]]:
    """(start, end) of every text token found in the source, in order: a cursor walks the
    block's source, past each text token found and past the source of each code span,
    HTML tag, link and image (its `](target)`, `][label]` or `>`)."""
    out = []
    for t in tokens:
        if t.type == "inline" and t.map is not None:
            end = starts[min(t.map[1], len(starts) - 1)]
            _walk(text, t.children or [], starts[t.map[0]], end, out, False)
    return out


def _walk(text: str, children, at: int, end: int, out: list, label: bool) -> int:
    """The cursor after `children` (module docstring); their prose appended to `out`."""
    opened: list[tuple[int, bool]] = []  # each open link's `[` and whether its text is its label
    for c in children:
        if c.type == "text" and c.content:
            found = _source_of(c.content).search(text, at, end)
            if found is None:  # the parse's text is not the source's: skeleton
                continue
            at = found.end()
            if not (label or any(lab for _, lab in opened)) and c.content.strip():
                out.append((found.start(), at))
        elif c.type == "code_inline":
            tick = re.escape(c.markup)
            m = re.compile(f"(?<!`){tick}(?!`)[\\s\\S]*?(?<!`){tick}(?!`)").search(text, at, end)
            at = m.end() if m else at
        elif c.type == "html_inline":
            i = text.find(c.content, at, end)
            at = i + len(c.content) if i >= 0 else at
        elif c.type == "link_open":
            i = text.find("<" if c.markup == "autolink" else "[", at, end)
            opened.append((i, _is_label(text, c, i, end)))
            at = i + 1 if i >= 0 else at
        elif c.type == "link_close" and opened:
            i, _ = opened.pop()
            at = _after_link(text, i, end, at, c.markup == "autolink")
        elif c.type == "image":
            i = text.find("![", at, end)
            if i < 0:
                continue
            _walk(text, c.children or [], i + 2, end, out, False)
            at = _after_link(text, i + 1, end, at, False)
    return at


def _after_link(text: str, i: int, end: int, at: int, auto: bool) -> int:
    """Where the link or image whose `[` (`<`) is at i ends in the source."""
    if i < 0:
        return at
    if auto:
        j = text.find(">", max(at, i), end)
        return j + 1 if j >= 0 else at
    close = _closing_bracket(text, i, end)
    if close is None:
        return at
    if text.startswith("(", close + 1):
        depth = 0
        for j in range(close + 1, end):
            if text[j] == "\\":
                continue
            depth += (text[j] == "(") - (text[j] == ")")
            if depth == 0 and text[j - 1] != "\\":
                return j + 1
        return at
    if text.startswith("[", close + 1):
        j = text.find("]", close + 1, end)
        return j + 1 if j >= 0 else close + 1
    return close + 1


@functools.lru_cache(maxsize=4096)
def _source_of(content: str) -> re.Pattern:
    """What a text token's content may be in the source: each punctuation mark perhaps
    escaped (`\\*`), each character perhaps an entity (`&amp;`)."""
    parts = []
    for c in content:
        one = re.escape(c)
        if not c.isalnum() and not c.isspace():
            one = rf"\\?{one}"
        parts.append(f"(?:{one}|&#?\\w+;)")
    return re.compile("".join(parts))


def _is_label(text: str, link, at: int, end: int) -> bool:
    """Is this link's text its reference label ([text], [text][])? An inline link
    ([text](url)) and a full reference ([text][label]) are not; an autolink's text is
    its URL."""
    if link.markup in ("autolink", "linkify"):
        return True
    close = _closing_bracket(text, at, end) if at >= 0 else None
    if close is None:
        return True
    after = text[close + 1 : close + 3]
    return not (after.startswith("(") or (after.startswith("[") and after != "[]"))


def _closing_bracket(text: str, start: int, end: int) -> int | None:
    """The `]` that closes the `[` at `start` (escaped brackets skipped)."""
    depth = 0
    for i in range(start, end):
        if text[i] in "[]" and i > 0 and text[i - 1] == "\\":
            continue
        depth += (text[i] == "[") - (text[i] == "]")
        if depth == 0:
            return i
    return None


def _flat(children):
    for c in children:
        yield c
        if c.type == "image":  # its alt text
            yield from _flat(c.children or [])


def _stable(text: str, holes: list[tuple[int, int]], shape: list) -> bool:
    """Does the parse stay the same but for text when every letter, digit and mark of
    punctuation of the holes changes? (A hole that is really markup changes it: a `.` of
    a link's target found for the text's full stop.)"""
    out, at = [], 0
    for a, b in holes:
        swapped = re.sub(r"\d", "7", re.sub(r"[^\W\d_]", "x", text[a:b]))
        out += [text[at:a], re.sub(r"[^\w\s]", lambda m: ";" if m.group() == "," else ",", swapped)]
        at = b
    return _shape(parser().parse("".join(out) + text[at:])) == shape


def _shape(tokens) -> list:
    out = []
    for t in tokens:
        out.append((t.type, t.markup, t.info, t.map, t.content if t.type != "inline" else ""))
        for c in _flat(t.children or []):
            keep = c.content if c.type in ("code_inline", "html_inline") else ""
            out.append((c.type, c.markup, tuple(sorted((c.attrs or {}).items())) if c.type != "image" else c.attrs.get("src"), keep))
    return out


def _name(text: str, a: int, b: int, blocks: dict[int, str]) -> str:
    """What the skeleton text[a:b] is: a block's kind, else what its characters say (a
    code span, a link's target, HTML, a line's prefix: heading, quote, list), else markup."""
    piece, line = text[a:b], text.count("\n", 0, a)
    if blocks.get(line):
        return blocks[line]
    if line not in blocks and piece.strip():
        return "reference definition" if re.match(r"\s*\[[^\]]+\]:", piece) else "markup"
    if "](" in piece or "][" in piece:
        return "image" if "![" in piece else "link target"
    if "`" in piece:
        return "code span"
    if "<" in piece:
        return "HTML"
    m = _PREFIX.match(piece)
    if m and (a == 0 or text[a - 1] == "\n"):
        return ("heading marker", "quote marker", "list marker", "table")[m.lastindex - 1]
    if "*" in piece or "_" in piece:
        return "emphasis"
    if not piece.strip():
        return LINE
    return "markup"
