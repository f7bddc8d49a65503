"""A skeleton as an edit grammar: the spans literal, the holes free prose.

    start: s_0 hole(h_1) s_1 hole(h_2) ... s_n          (s_i: the spans between holes, forced)

A line break between two holes of one paragraph (`SOFT`) may also be written as a space:
a model joins a paragraph's lines, and a grammar that held it to them would leave it no way
to end its answer. It can never add a line.

A hole is runs of text T (printable characters that are neither spaces nor the kind's
marks) between runs of spaces and tabs SP: no line break, no mark, so a hole can neither
write markup nor end a line. Its first and last characters are of the classes the
original hole's are (a letter or digit, punctuation, a space), so what touches each span
stays what it was: emphasis keeps its flanking, a URL is never continued by a word. A hole that starts a line in a kind whose lines start blocks (Markdown, reST)
starts with a letter if the original did, and with punctuation other than - + = (a list
item or an underline) if the original started with punctuation.

llguidance lexes greedily, byte by byte, so a hole has one kind of text lexeme (two, a
word and punctuation, would part inside a character's bytes: "who’s" cannot be lexed),
and a span is forced from the first byte no hole lexeme can take: at once after a hole
that cannot go on (the span starts with a mark or a line break), or, for a span that
starts with a letter after a space (a bare URL), from its first mark ("https:/"). A hole
the rules cannot match is not a hole: it is forced too (`holes`).
"""

from __future__ import annotations

import json
import re

from .base import LINE, Skeleton

SPACE = " \t"
# a line break between two holes with nothing but the next line's indentation: a paragraph's
# soft break, which a fix may also write as one space (a model joins a paragraph's lines, and
# app/linebreaks.py puts them back); never two breaks, nor a hard break's trailing spaces
SOFT = re.compile(r"\r?\n[ \t]*")
STARTERS = ("list marker", "quote marker", "heading marker", "field", LINE)


def _cls(c: str) -> str:
    return "S" if c in SPACE else "W" if re.match(r"[^\W_]", c) else "P"


def _class(marks: str, which: str, llg: bool = False) -> str:
    """One character of a hole, as a regex: any ("C": printable, not a space, not a
    mark), a letter or digit ("W"), a letter ("L"), punctuation ("P"), punctuation but
    - + = ("Q"). For llguidance (`llg`), no control or format character (\\p{C}); a hole's
    own text has none (base.finish makes them skeleton), so Python's regex needs no such
    class (its `re` has none)."""
    bad = "".join("\\" + c if c in "\\]^-[/" else c for c in marks) + ("\\p{C}" if llg else "")
    under = "" if "_" in marks else "|_"
    return {
        "C": f"[^\\s{bad}]", "W": "[^\\W_]", "L": "[^\\W\\d_]",
        "P": f"(?:[^\\w\\s{bad}]{under})", "Q": f"(?:[^\\w\\s{bad}\\-+=]{under})",
    }[which]  # fmt: skip


def _text_regex(marks: str, first: str, last: str, llg: bool = False) -> str:
    """A run of hole characters without a space (one lexeme), its first character of
    class `first`, its last of class `last` ("C": any):  F C* T, or one character of both."""
    f, c, t = (_class(marks, x, llg) for x in (first, "C", last))
    if last == "C":
        both = f
    elif first == "C":
        both = t
    elif (first in "WL" and last == "W") or (first in "PQ" and last == "P"):
        both = f
    else:
        return f"{f}{c}*{t}"
    return f"(?:{f}{c}*{t}|{both})"


def signature(sk: Skeleton, a: int, b: int) -> tuple[str, str, str]:
    """(first, last, start) of the hole text[a:b]: its first and last characters'
    classes (W, P, S), and "L" (a line's start, a letter), "Q" (a line's start,
    punctuation but - + =) or "" (anything)."""
    text = sk.text
    first, last = _cls(text[a]), _cls(text[b - 1])
    start = ""
    if sk.kind.blocks and (a == 0 or _starts_line(sk, a)):
        if first == "W" and not text[a].isdigit():
            start = "L"
        elif first == "P" and text[a] not in "-+=":
            start = "Q"
    return first, last, start


def _starts_line(sk: Skeleton, a: int) -> bool:
    before = [s for s in sk.spans if s.end == a]
    return bool(before) and (before[0].kind in STARTERS or sk.text[:a].rstrip(" \t").endswith("\n"))


def hole_rule(first: str, last: str, start: str) -> tuple[str, str, set[tuple[str, str]]]:
    """(name, rule, the text lexemes it uses): [SP] T (SP T)* [SP], its first and last
    text runs of the classes the signature says.
        first S:  SP (T SP)* ...        first W or P: T_first ...
    """
    head = start or first
    name = f"h_{first}{last}{start}".lower()
    used: set[tuple[str, str]] = {("C", "C")}

    def t(f: str, l: str) -> str:
        used.add((f, l))
        return f"T_{f}{l}"

    if first == "S" and last == "S":
        alts = ["SP (T_CC SP)*"]
    elif first == "S":
        alts = [f"SP (T_CC SP)* {t('C', last)}"]
    elif last == "S":
        alts = [f"{t(head, 'C')} (SP T_CC)* SP"]
    else:
        alts = [t(head, last), f"{t(head, 'C')} (SP T_CC)* SP {t('C', last)}"]
    return name, f"{name}: {' | '.join(alts)}", used


def pattern(marks: str, first: str, last: str, start: str) -> re.Pattern:
    """The Python regex a hole's text must match for hole_rule(first, last, start)."""
    def t(f: str, l: str) -> str:
        return _text_regex(marks, f, l)

    head, run, sp = start or first, t("C", "C"), "[ \t]+"
    if first == "S" and last == "S":
        body = f"{sp}(?:{run}{sp})*"
    elif first == "S":
        body = f"{sp}(?:{run}{sp})*{t('C', last)}"
    elif last == "S":
        body = f"{t(head, 'C')}(?:{sp}{run})*{sp}"
    else:
        body = f"(?:{t(head, last)}|{t(head, 'C')}(?:{sp}{run})*{sp}{t('C', last)})"
    return re.compile(body)


def holes(sk: Skeleton) -> list[tuple[int, int, tuple[str, str, str]]]:
    """The holes the grammar leaves free, with their signatures: those their rule matches."""
    out = []
    for a, b in sk.holes():
        sig = signature(sk, a, b)
        if pattern(sk.kind.marks, *sig).fullmatch(sk.text, a, b):
            out.append((a, b, sig))
    return out


def lark(sk: Skeleton, free: list[tuple[int, int, tuple[str, str, str]]] | None = None) -> str:
    """The grammar (module docstring); its text ends where sk.text does, less one final
    newline (a rewrite's answer gets it with the closing fence)."""
    free = holes(sk) if free is None else free
    text = sk.text
    end = len(text) - 1 if text.endswith("\n") and not (free and free[-1][1] == len(text)) else len(text)
    items, rules, used, at = [], {}, set(), 0
    for i, (a, b, sig) in enumerate(free):
        if a > at:
            literal = json.dumps(text[at:a], ensure_ascii=False)
            joins = i > 0 and free[i - 1][1] == at and SOFT.fullmatch(text, at, a)
            items.append(f'({literal} | " ")' if joins else literal)
        name, rule, lex = hole_rule(*sig)
        rules[name], used = rule, used | lex
        items.append(name)
        at = b
    if end > at:
        items.append(json.dumps(text[at:end], ensure_ascii=False))
    body = " ".join(items) if items else '""'
    out = [f"start: {body}", *rules.values()]
    if rules:
        marks = sk.kind.marks
        out += ["SP: /[ \\t]+/", *(f"T_{f}{l}: /{_text_regex(marks, f, l, llg=True)}/" for f, l in sorted(used))]
    return "\n".join(out) + "\n"
