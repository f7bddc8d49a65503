"""A code file's skeleton: everything but the prose of its comments and docstrings, by
pygments' lexer for the file's name (the guard's code check reads the file the same way).

A comment's marker (`#`, `//`, `/*`, `*/`, `--`) and a docstring's quotes and prefix are
skeleton; the text between them is prose. Other strings are code: a fix does not know
which of them a program compares or parses. In HTML, XML and TeX the text between the
tags and commands is prose too.
"""

from __future__ import annotations

import re

from .base import Kind, Span

# `\` (an escape), `/` and `@` (no URL or address written into prose, no `*/` closing a C
# comment), and the quote characters its docstrings are delimited by (a hole cannot close one)
MARKS = "`\\/@"


def kind(text: str, spans: list[Span]) -> Kind:
    """The kind of this code file: MARKS and the quotes that open its docstrings."""
    quotes = {text[s.end - 1] for s in spans if s.end > s.start and text[s.end - 1] in "\"'"}
    return Kind("code", MARKS + "".join(sorted(quotes)))
_OPEN = re.compile(r"^(?:[rRuUbBfF]{0,2}(?:\"\"\"|'''|\"|')|#+!?|//+!?|/\*+!?|<!--|--+|;+|%+|\*+)[ \t]*")
_CLOSE = re.compile(r"[ \t]*(?:\"\"\"|'''|\"|'|\*+/|-->)$")
_TEXT_LEXERS = ("HTML", "XML", "TeX")


def spans(text: str, name: str) -> list[Span] | None:
    """The skeleton spans of a code file, or None if pygments knows no lexer for it."""
    from pygments.lexers import get_lexer_for_filename
    from pygments.token import Comment, String, Text
    from pygments.util import ClassNotFound

    try:
        lexer = get_lexer_for_filename(name, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return None
    text_prose = lexer.name in _TEXT_LEXERS
    out, at = [], 0
    for kind, value in lexer.get_tokens(text):
        end = at + len(value)
        prose = (kind in Comment and kind not in Comment.Preproc and kind not in Comment.Hashbang) or kind in String.Doc
        if text_prose and kind in Text and re.search(r"[^\W\d_]", value):
            prose = True
        if not prose:
            out.append(Span(at, end, "code"))
        else:  # its marker and its end are code
            head = _OPEN.match(value) if not (text_prose and kind in Text) else None
            tail = _CLOSE.search(value) if kind not in Text else None
            a = at + (head.end() if head else 0)
            b = max(a, end - (len(tail.group()) if tail and (not head or tail.start() >= head.end()) else 0))
            if a > at:
                out.append(Span(at, a, "code"))
            if b < end:
                out.append(Span(b, end, "code"))
        at = end
    if at != len(text):  # the lexer changed the text (it should not): all of it is code
        return [Span(0, len(text), "code")]
    return out
