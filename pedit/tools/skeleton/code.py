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
QUOTES = "docstring quotes"
_OPEN = re.compile(r"^(?:#+!?|//+!?|/\*+!?|<!--|--+|;+|%+|\*+)[ \t]*")  # a comment's marker
_CLOSE = re.compile(r"[ \t]*(?:\*+/|-->)$")
_DOC_OPEN = re.compile(r"^[rRuUbBfF]{0,2}(?:\"\"\"|'''|\"|')")
_DOC_CLOSE = re.compile(r"(?:\"\"\"|'''|\"|')$")
_TEXT_LEXERS = ("HTML", "XML", "TeX")


def kind(text: str, spans: list[Span]) -> Kind:
    """The kind of this code file: MARKS and the quotes that open its docstrings."""
    quotes = {text[s.end - 1] for s in spans if s.kind == QUOTES and text[s.end - 1] in "\"'"}
    return Kind("code", MARKS + "".join(sorted(quotes)))


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
    for kind_, value in lexer.get_tokens(text):
        end = at + len(value)
        comment = kind_ in Comment and kind_ not in Comment.Preproc and kind_ not in Comment.Hashbang
        doc = kind_ in String.Doc
        words = text_prose and kind_ in Text and re.search(r"[^\W\d_]", value) is not None
        if not (comment or doc or words):
            out.append(Span(at, end, "code"))
        elif not words:  # its marker and its end (a comment's), its quotes (a docstring's)
            head = (_DOC_OPEN if doc else _OPEN).match(value)
            tail = (_DOC_CLOSE if doc else _CLOSE).search(value)
            a = at + (head.end() if head else 0)
            cut = len(tail.group()) if tail and (not head or tail.start() >= head.end()) else 0
            b = max(a, end - cut)
            if a > at:
                out.append(Span(at, a, QUOTES if doc else "code"))
            if b < end:
                out.append(Span(b, end, QUOTES if doc else "code"))
        at = end
    if at != len(text):  # the lexer changed the text (it should not): all of it is code
        return [Span(0, len(text), "code")]
    return out
