"""A code file's skeleton: everything but the prose of its comments and docstrings, by
pygments' lexer for the file's name (the guard's code check reads the file the same way).

A comment's marker (`#`, `//`, `/*`, `*/`, `--`) and a docstring's quotes and prefix are
skeleton; the text between them is prose. So is a message: the text of a string (not a
raw or bytes string) that reads as words, two words of two letters or more with a space
between them ("Hello wrold"), its quotes, escapes and placeholders skeleton. Any other
string is code ("utf-8", a key, a pattern): a fix does not know which of them a program
compares or parses. In HTML, XML and TeX the text between the tags and commands is prose
too.
"""

from __future__ import annotations

import re

from .base import Kind, Span

# `\` (an escape), `/` and `@` (no URL or address written into prose, no `*/` closing a C
# comment), `{` `}` `%` (no placeholder written into a message), and the quote characters
# its docstrings and messages are delimited by (a hole cannot close one)
MARKS = "`\\/@{}%"
QUOTES = "docstring quotes"
_OPEN = re.compile(r"^(?:#+!?|//+!?|/\*+!?|<!--|--+|;+|%+|\*+)[ \t]*")  # a comment's marker
_CLOSE = re.compile(r"[ \t]*(?:\*+/|-->)$")
_DOC_OPEN = re.compile(r"^[rRuUbBfF]{0,2}(?:\"\"\"|'''|\"|')")
_DOC_CLOSE = re.compile(r"(?:\"\"\"|'''|\"|')$")
_TEXT_LEXERS = ("HTML", "XML", "TeX")
_WORDS = re.compile(r"[A-Za-z]{2,}.* .*[A-Za-z]{2,}")


def kind(text: str, spans: list[Span]) -> Kind:
    """The kind of this code file: MARKS and the quotes that open its docstrings."""
    quotes = {text[s.end - 1] for s in spans if s.kind == QUOTES and text[s.end - 1] in "\"'"}
    return Kind("code", MARKS + "".join(sorted(quotes)))


def _message(kind, value: str, raw: bool, String) -> bool:
    """Is this string token a message's text (module docstring)?"""
    plain = kind in String and not any(kind in getattr(String, k) for k in ("Doc", "Escape", "Interpol", "Affix", "Regex"))
    return plain and not raw and "\n" not in value and _WORDS.search(value) is not None


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
    out, at, raw, closing = [], 0, False, False
    for kind_, value in lexer.get_tokens(text):
        end = at + len(value)
        comment = kind_ in Comment and kind_ not in Comment.Preproc and kind_ not in Comment.Hashbang
        message = _message(kind_, value, raw, String)
        doc = kind_ in String.Doc or message
        words = text_prose and kind_ in Text and re.search(r"[^\W\d_]", value) is not None
        if message and out and out[-1].end == at and text[at - 1] in "\"'":  # its opening quote
            out[-1:] = [Span(out[-1].start, at - 1, "code"), Span(at - 1, at, QUOTES)][out[-1].start == at - 1 :]
        if not (comment or doc or words):
            out.append(Span(at, end, QUOTES if closing and value[:1] in "\"'" else "code"))
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
        closing = message
        if kind_ in String.Affix:
            raw = bool(re.search("[rRbB]", value))
        elif kind_ not in String:
            raw = False
        at = end
    if at != len(text):  # the lexer changed the text (it should not): all of it is code
        return [Span(0, len(text), "code")]
    return out
