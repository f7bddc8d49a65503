"""Grammar suggestions: Harper's (Automattic's offline English grammar checker, `harper-py`)
corrections of a file's prose, for `fix`'s draft beside the spelling suggestions (spelling.py).

Harper proposes, the model verifies: the suggestions go into the draft, and the keep-bias
(keepbias.py) lets the model keep or reject each one. Only Harper's first suggestion of a
lint is used, and only for the rules in `kinds` (DEFAULT_RULES: chosen rule by rule by
measurement, scripts/harper_rules.py, kept in harper_rules.json; a lint kind such as
"Repetition" or a rule name such as "ThenThan" both select). `kinds=()` turns Harper off.

Only prose is touched, as spelling.prose_spans says, and never the skeleton (skeleton.py)
(Markdown: not code, URLs or tags; reST:
not literals or directives); a lint that crosses a span's edge is dropped. Markdown is
linted as Markdown, Python's comments and docstrings one by one as plain text (other string
literals are data, not prose), every other file as plain text. Harper's spans are in code
points, as Python's str indexes are.

One harper.Linter per process, built on first use (about a second); a Linter raises
RuntimeError when two threads call it at once, so calls hold a lock.
"""

from __future__ import annotations

import ast
import contextlib
import io
import json
import re
import threading
import tokenize
from collections.abc import Collection
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path

from . import skeleton
from .dialect import AUTO, resolve
from .spelling import by_length, checker, prose_spans, spellcheck

# Harper's rules whose first suggestions, each made alone, were right (brought the text
# closer to the correct one) at least 3 times in 4, over at least 3 suggestions, on the
# corpus's non-held-out fix tasks and examples/essay.md: harper_rules.json, written by
# scripts/harper_rules.py --write with every rule's counts.
RULES = Path(__file__).with_name("harper_rules.json")
DEFAULT_RULES = frozenset(json.loads(RULES.read_text(encoding="utf-8"))["chosen"])

_QUOTES = re.compile(r"""^[A-Za-z]*('''|\"\"\"|'|")""")
_HASHES = re.compile(r"^#+")
_EDGES = (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER)  # of statements
_LOCK = threading.Lock()  # a harper.Linter raises if two threads call it at once


@dataclass(frozen=True)
class Change:
    """One Harper suggestion: text[start:end] becomes `replacement` (code points)."""

    kind: str  # Harper's lint kind: "Agreement", "Repetition", ...
    rule: str  # the rule that found it: "PronounVerbAgreement", "RepeatedWords", ...
    start: int
    end: int
    replacement: str


@cache
def _linter():
    """Harper with its SpellCheck rule off: spelling is pyspellchecker's (spelling.py), and
    Harper's own suggestions for rare words cost a second on moby_dick.txt (25 ms without)."""
    import harper

    linter = harper.Linter()
    linter.set_lint_config({"SpellCheck": False})
    return linter


def changes(text: str, filename: str) -> list[Change]:
    """Every lint's first suggestion inside the prose of `text`, of any kind, overlaps and
    all, sorted by position."""
    suffix = filename.rsplit(".", 1)[-1].lower() if "." in filename else ""
    spans = _joined(prose_spans(text, filename))
    if suffix == "py":
        found = [c for a, unit in _python_units(text, spans) for c in _lint(unit, "plaintext", a)
                 if not (c.rule == "SentenceCapitalization" and c.start == a + _indent(unit))]  # fmt: skip
    else:
        found = _lint(text, "markdown" if suffix in ("md", "markdown") else "plaintext", 0)
    free = skeleton.holes(text, filename)  # never a change that touches the skeleton
    found = [_kept_break(text, c) for c in found if not _continued(text, c)]
    inside = [c for c in found if any(a <= c.start and c.end <= b for a, b in spans)
              and any(a <= c.start and c.end <= b for a, b in free)]  # fmt: skip
    return sorted((c for c in inside if not _code_like(text, c)), key=lambda c: (c.start, c.end, c.rule))


_MARKERS = " \t\r\n-*+>#_`|"  # what may stand between a sentence's end and the next word's start


def _continued(text: str, c: Change) -> bool:
    """A capital Harper asks for where the sentence goes on: the word is a name the
    dictionary does not know, written in lower case ("psutil (process and system
    utilities) is"), or the text before it ends with "," ":" or ";" (a list's items after
    "gives you:", the line after the list). Real text writes both so."""
    if c.rule != "SentenceCapitalization":
        return False
    word = text[c.start : c.end]
    if word.isalpha() and word.lower() not in checker():
        return True
    before = text[: c.start].rstrip(_MARKERS)
    return before.endswith((",", ":", ";"))


def _kept_break(text: str, c: Change) -> Change:
    """A doubled word across a line break ("the\nthe" -> "the") as the same fix that
    keeps the line break, which a fix may not remove (skeleton.py): the second word and
    the spaces after it deleted."""
    m = re.fullmatch(r"(\S+)([ \t]*\n[ \t]*)(\S+)", text[c.start : c.end])
    if m is None or c.replacement != m.group(1):
        return c
    start = c.start + m.start(3)
    end = c.end + len(text[c.end :]) - len(text[c.end :].lstrip(" \t"))
    return replace(c, start=start, end=end, replacement="")


def _indent(unit: str) -> int:
    return len(unit) - len(unit.lstrip())


def _python_units(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, str]]:
    """(offset, text to lint) for a Python file's prose: each docstring, its doctest lines
    (">>>", "...", and the output after them up to a blank line) blanked out; each run of
    comments on consecutive lines as one paragraph, its '#'s and indentation blanked out.
    Blanks keep every offset. A comment's first word is not a sentence's start (code's
    comments often begin in lower case): `changes` drops Harper's capital there."""
    docs, units, blocks = _docstrings(text), [], []
    for a, b in spans:
        if text[a] == "#":
            joined = (
                blocks and text[blocks[-1][1] : a].strip() == "" and text.count("\n", blocks[-1][1], a) == 1
            )
            blocks[-1:] = [(blocks[-1][0], b)] if joined else [*blocks[-1:], (a, b)]
        elif a in docs:
            start, end = _inner(text, a, b)
            units.append((start, _without_doctests(text[start:end])))
    hashes = re.compile(r"(?m)^[ \t]*#+")
    units += [(a, hashes.sub(lambda m: " " * len(m.group()), text[a:b])) for a, b in blocks]
    return units


def _without_doctests(doc: str) -> str:
    """A docstring with its code blanked out: doctest lines (">>>", "...", the output after
    them up to a blank line) and lines that are Python statements ("heap = []  # a heap")."""
    out, code = [], False
    for line in doc.splitlines(keepends=True):
        bare = line.strip()
        code = bare.startswith((">>>", "...")) or (code and bool(bare)) or _statement(bare)
        out.append(re.sub(r"[^\n]", " ", line) if code else line)
    return "".join(out)


def _statement(line: str) -> bool:
    """Is a docstring's line Python code: it parses, and has an assignment or a call?"""
    if not any(ch in line for ch in "=(["):
        return False
    try:
        ast.parse(line)
    except (SyntaxError, ValueError):
        return False
    return True


def _code_like(text: str, c: Change) -> bool:
    """A change to a word that is code written in prose: "a[k]", "heap.sort()", "x.a"."""
    after, before = text[c.end : c.end + 2], text[c.start - 1 : c.start] if c.start else ""
    return after[:1] in ("(", "[") or (after[:1] == "." and after[1:].isalnum()) or before in (".", "_")


def _joined(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Spans that touch made one (Markdown's are lines: "the\nthe" is inside one paragraph)."""
    out: list[tuple[int, int]] = []
    for a, b in spans:
        if out and out[-1][1] == a:
            out[-1] = (out[-1][0], b)
        else:
            out.append((a, b))
    return out


def warm() -> None:
    """Build what fix's tools build on first use (Harper's linter, about 0.7 s here; the
    spelling dictionary and its words by length, 0.2 s; lemminflect's lexicon, 0.4 s), so a
    shell can do it while the model loads (loading.load_with_cost's `beside`)."""
    from . import morphology

    with _LOCK:
        _linter()
    by_length()
    morphology.warm()


def _lint(text: str, language: str, offset: int) -> list[Change]:
    from harper import SuggestionKind

    with _LOCK:
        by_rule = _linter().organized_lints(text, language=language, dedup=False)
    out = []
    for rule, lints in by_rule.items():
        for lint in lints:
            if not lint.suggestions:
                continue  # LongSentences and the like: a remark, nothing to apply
            s, start, end = lint.suggestions[0], lint.span.start + offset, lint.span.end + offset
            if s.kind == SuggestionKind.INSERT_AFTER:
                start, rep = end, s.replacement_text
            else:
                rep = "" if s.kind == SuggestionKind.REMOVE else s.replacement_text
            out.append(Change(kind=lint.lint_kind, rule=rule, start=start, end=end, replacement=rep))
    return out


def _inner(text: str, start: int, end: int) -> tuple[int, int]:
    """A comment without its '#'s, a string literal without its prefix and quotes."""
    if text[start] == "#":
        return start + _HASHES.match(text[start:end]).end(), end
    quote = _QUOTES.match(text[start:end])
    n = len(quote.group(1)) if quote else 0
    return start + (quote.end() if quote else 0), max(end - n, start)


def _docstrings(text: str) -> set[int]:
    """Offsets of the string literals that are statements of their own (docstrings): the
    other strings of a Python file are data."""
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    types, offsets = [tokenize.NEWLINE], [-1]  # a chunk may end inside a string: the tokens before it
    with contextlib.suppress(tokenize.TokenError, SyntaxError, IndentationError):
        for t in tokenize.generate_tokens(io.StringIO(text).readline):
            if t.type not in (tokenize.NL, tokenize.COMMENT):
                types.append(t.type)
                offsets.append(starts[t.start[0] - 1] + t.start[1])
    types.append(tokenize.NEWLINE)
    return {
        offsets[i]
        for i in range(1, len(types) - 1)
        if types[i] == tokenize.STRING and types[i - 1] in _EDGES and types[i + 1] in _EDGES
    }


def chosen(found: list[Change], kinds: Collection[str]) -> list[Change]:
    """The changes whose kind or rule is in `kinds`, in text order, without overlaps: the
    first wins, at one start the longer ("a a" -> "a" over "a" -> "an"), on one span the rule
    named first ("Their" -> "There", TheirToThere, over "They're"). Overlaps are resolved
    after the kinds are chosen: Harper's own dedup would prefer "said the the" -> "said that
    the" (a Typo lint) to the Repetition lint "the the" -> "the"."""
    out: list[Change] = []
    for c in sorted(found, key=lambda c: (c.start, -c.end, c.rule)):
        if (c.kind in kinds or c.rule in kinds) and not (out and _overlap(out[-1], c)):
            out.append(c)
    return out


def _overlap(a: Change, b: Change) -> bool:
    """Do two changes touch the same characters (or insert at the same point)? `a` starts first."""
    return a.start < b.end and b.start < a.end or (a.start, a.end) == (b.start, b.end)


def apply(text: str, changes: list[Change]) -> str:
    """`text` with non-overlapping `changes` made, right to left so the spans stay valid."""
    for c in sorted(changes, key=lambda c: (c.start, c.end), reverse=True):
        text = text[: c.start] + c.replacement + text[c.end :]
    return text


def kinds_of_changes(text: str, filename: str, *, kinds: Collection[str] = DEFAULT_RULES) -> list[Change]:
    """The suggestions `suggest` makes to `text`: what the quality report checks the model's
    output against, kind by kind (was text[start:end] -> replacement kept?)."""
    return chosen(changes(text, filename), kinds) if kinds else []


def suggest(text: str, filename: str, *, kinds: Collection[str] = DEFAULT_RULES) -> str:
    """`text` with Harper's first suggestion made for every lint of a chosen kind in its prose."""
    return apply(text, kinds_of_changes(text, filename, kinds=kinds))


def draft(text: str, filename: str, *, kinds: Collection[str] = DEFAULT_RULES, variety: str = AUTO) -> str:
    """fix's draft: Harper's suggestions, then pyspellchecker's on the words still unknown
    that the text's variety of English does not spell so (`variety`: dialect.resolve's)."""
    return spellcheck(suggest(text, filename, kinds=kinds), filename, resolve(variety, text))
