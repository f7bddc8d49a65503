"""The skeleton's pieces: spans, kinds of file, and the rules every kind shares
(the package's docstring)."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

# scheme URLs and e-mail addresses: what a reader's client links in any text
URL_OR_MAIL = re.compile(
    r"(?P<url>\b(?:https?|ftp|file)://[^\s<>\"'`]*[^\s<>\"'`.,;:!?)\]}*_])"
    r"|(?P<mail>\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b)"
)
LINE = "line break"


@dataclass(frozen=True)
class Span:
    """text[start:end] is skeleton of this kind ("code span", "link target", LINE...)."""

    start: int
    end: int
    kind: str


@dataclass(frozen=True)
class Kind:
    """A kind of file: the characters that are markup wherever they stand in its prose,
    and whether a line's first word may start a block (Markdown's lists and headings)."""

    name: str
    marks: str
    blocks: bool = False


@dataclass(frozen=True)
class Skeleton:
    """A text cut into skeleton spans (in order, disjoint, none empty) and prose holes."""

    text: str
    spans: tuple[Span, ...]
    kind: Kind

    def holes(self) -> list[tuple[int, int]]:
        """(start, end) of every non-empty stretch of prose, in order."""
        out, at = [], 0
        for s in self.spans:
            if s.start > at:
                out.append((at, s.start))
            at = s.end
        if at < len(self.text):
            out.append((at, len(self.text)))
        return out

    def items(self) -> list[tuple[str, str, int]]:
        """(kind, text, line) of every span but line breaks, adjacent spans of one kind as
        one, their text without surrounding whitespace: what a fix must keep, in order."""
        out: list[tuple[str, str, int]] = []
        last = None
        for s in self.spans:
            if s.kind == LINE:
                last = None
                continue
            piece = self.text[s.start : s.end]
            if last is not None and last.kind == s.kind and last.end == s.start:
                kind, body, line = out.pop()
                out.append((kind, (body + piece).strip(), line))
            elif piece.strip():
                out.append((s.kind, piece.strip(), self.text.count("\n", 0, s.start) + 1))
            last = s
        return out

    def sliced(self, start: int, end: int) -> Skeleton:
        """The skeleton of text[start:end] as this one cuts it (a chunk of the file)."""
        spans = tuple(
            Span(max(s.start, start) - start, min(s.end, end) - start, s.kind)
            for s in self.spans
            if s.end > start and s.start < end
        )
        return Skeleton(self.text[start:end], spans, self.kind)

    @property
    def skeleton_chars(self) -> int:
        return sum(s.end - s.start for s in self.spans)


_WORDISH = re.compile(r"[^\W_]")


def finish(text: str, found: list[Span], kind: Kind) -> Skeleton:
    """The kind's own spans with the rules every kind shares (module docstring), merged
    into disjoint spans in order (where two overlap, the first found names the char)."""
    names: list[str | None] = [None] * len(text)

    def mark(a: int, b: int, what: str) -> None:
        for i in range(a, b):
            if names[i] is None:
                names[i] = what

    for s in found:
        mark(s.start, s.end, s.kind)
    at = 0
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")
        lead = len(body) - len(body.lstrip())
        mark(at, at + lead, LINE)
        mark(at + len(body.rstrip()), at + len(line), LINE)
        at += len(line)
    for a, b in _free_runs(names):  # in prose only: a link's text may be a URL too
        for m in URL_OR_MAIL.finditer(text, a, b):
            mark(m.start(), m.end(), "URL" if m.group("url") else "e-mail address")
    for i, c in enumerate(text):
        if names[i] is None and (c in kind.marks or _unseen(c)):
            names[i] = "markup character"
    _widen(text, names, kind.marks)
    return Skeleton(text, tuple(_runs(names)), kind)


# control, format, private-use and surrogate characters, and line, paragraph and other
# space separators than " ": never a hole's (the grammar's \p{C} and \s leave them out).
# Not "Cn": a character this Python's Unicode does not know may be one a newer one does
# (llguidance's), and is text there.
_UNSEEN = {"Cc", "Cf", "Cs", "Co", "Zl", "Zp", "Zs"}


def _unseen(c: str) -> bool:
    return c not in " \t" and unicodedata.category(c) in _UNSEEN


def _widen(text: str, names: list[str | None], marks: str) -> None:
    """A span is never continued by the prose beside it. One that starts with a
    character a hole's text could hold (not a space, not a mark) takes in the prose
    before it back to a space or a mark (a hole's text lexeme would swallow its first
    byte: the grammar's docstring); one that ends with a letter or digit takes in the
    letters and digits after it."""
    n = len(text)

    def free(c: str) -> bool:
        return not c.isspace() and c not in marks

    for i in range(n):
        if names[i] is not None and free(text[i]) and (i == 0 or names[i - 1] is None):
            j = i - 1
            while j >= 0 and names[j] is None and free(text[j]):
                names[j] = names[i]
                j -= 1
    for i in range(n - 1, -1, -1):
        if names[i] is not None and _WORDISH.match(text[i]):
            j = i + 1
            while j < n and names[j] is None and _WORDISH.match(text[j]):
                names[j] = names[i]
                j += 1


def _free_runs(names: list[str | None]) -> list[tuple[int, int]]:
    """(start, end) of every maximal run of prose."""
    out, start = [], None
    for i, n in enumerate([*names, "end"]):
        if n is None and start is None:
            start = i
        elif n is not None and start is not None:
            out.append((start, i))
            start = None
    return out


def _runs(names: list[str | None]) -> list[Span]:
    out: list[Span] = []
    start = 0
    for i in range(1, len(names) + 1):
        if i == len(names) or names[i] != names[start]:
            if names[start] is not None:
                out.append(Span(start, i, names[start]))
            start = i
    return out


