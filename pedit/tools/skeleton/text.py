"""The skeleton of plain text and of reStructuredText, by regular expressions.

Plain text: paths, and indented blocks (lines indented four columns or more past the
text's least indented line, set apart from the paragraph above: code, a quoted message,
a table), besides what every kind keeps (URLs, e-mail addresses,
line breaks and indentation).

reStructuredText: directives and comments (a line that starts ".. ") with their indented
bodies and options, hyperlink targets, literal blocks (the indented lines after a
paragraph that ends "::"), section over- and underlines, field names, list markers, and
inline: ``literals``, :roles:`...`, `references`_ whole, `text <url>`_ but its text,
|substitutions|.
"""

from __future__ import annotations

import re

from .base import Kind, Span

TEXT_SUFFIXES = ("", ".txt", ".text")
RST_SUFFIXES = (".rst", ".rest")
TEXT = Kind("text", "/@\\")
RST = Kind("restructuredtext", "`*|\\_/@", blocks=True)

_PATH = re.compile(r"(?<![\w/.~-])(?:~|\.{1,2}|[A-Za-z]:)?(?:[\w.~-]*[/\\][\w.~-]+)+[/\\]?")
_RST_INLINE = re.compile(
    r"(?P<literal>``[^`\n]+``)"
    r"|(?P<role>:[\w.+-]+:`[^`\n]*`)"
    r"|(?P<reference>`[^`\n]*(?:\n[^`\n]*)?`__?)"
    r"|(?P<interpreted>`[^`\n]*(?:\n[^`\n]*)?`(?::[\w.+-]+:)?)"
    r"|(?P<substitution>\|[^|\n]+\|_{0,2})"
    r"|(?P<footnote>\[[#*\w.-]*\]_)"
)
_INLINE_NAMES = {
    "literal": "inline literal", "role": "role", "reference": "link target",
    "interpreted": "role", "substitution": "substitution", "footnote": "footnote",
}  # fmt: skip
_LINK_TEXT = re.compile(r"`(?P<text>[^`<]*?[^\s`<])\s*<[^`>]+>`__?", re.S)
_ADORNMENT = re.compile(r"^([!-/:-@\[-`{-~])\1{2,}[ \t]*$")
_FIELD = re.compile(r"^[ \t]*:[^:\n]+:(?=\s)")
_LIST = re.compile(r"^[ \t]*(?:[-*+•]|#\.|\d{1,9}[.)]|\(\d{1,9}\))(?=[ \t]+\S)")


def text_spans(text: str) -> list[Span]:
    """Paths, and indented blocks: lines indented four columns or more past the text's
    least indented line, after a blank line or a line that ends with ":" (a licence
    indented as a whole, and a list item's hanging indent, are prose; a command set
    under a paragraph is not)."""
    def indent(line: str) -> int:
        return len(line.expandtabs(8)) - len(line.expandtabs(8).lstrip())

    base = min((indent(line) for line in text.splitlines() if line.strip()), default=0)
    out, at, block, previous = [], 0, False, ""
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        deep = bool(body.strip()) and indent(body) >= base + 4
        block = deep and (block or not previous.strip() or previous.rstrip().endswith(":"))
        if block:
            out.append(Span(at, at + len(body), "indented block"))
        previous = body if body.strip() else ""
        at += len(line)
    return out + [Span(m.start(), m.end(), "path") for m in _PATH.finditer(text)]


def rst_spans(text: str) -> list[Span]:
    """Block spans (directives, literal blocks, adornments, fields, list markers) line by
    line, then the inline ones."""
    out: list[Span] = []
    at, body, literal = 0, None, False  # body: the kind of the indented block being read
    lines = text.splitlines(keepends=True)
    for i, line in enumerate(lines):
        stripped = line.strip()
        indented = line[:1] in (" ", "\t")
        if body and (not stripped or indented):
            out.append(Span(at, at + len(line), body))
            at += len(line)
            continue
        body = None
        if line.lstrip().startswith(".."):
            target = re.match(r"\s*\.\. _", line)
            body = "hyperlink target" if target else "directive"
            out.append(Span(at, at + len(line), body))
        elif literal and indented:
            body = "literal block"
            out.append(Span(at, at + len(line), body))
        elif _ADORNMENT.match(line.rstrip("\r\n")) and (i == 0 or lines[i - 1].strip() or True):
            out.append(Span(at, at + len(line), "section marker"))
        else:
            for pattern, name in ((_FIELD, "field"), (_LIST, "list marker")):
                if m := pattern.match(line):
                    out.append(Span(at + m.start(), at + m.end(), name))
        if stripped:
            literal = stripped.endswith("::")
        at += len(line)
    for m in _RST_INLINE.finditer(text):
        linked = _LINK_TEXT.fullmatch(m.group()) if m.lastgroup == "reference" else None
        if linked:  # `text <url>`_: its text is prose, its backtick and target are not
            out.append(Span(m.start(), m.start() + 1, "link target"))
            out.append(Span(m.start() + linked.end("text"), m.end(), "link target"))
        else:
            out.append(Span(m.start(), m.end(), _INLINE_NAMES[m.lastgroup]))
    return out
