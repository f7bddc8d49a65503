"""Spelling suggestions: a dictionary spell checker's (pyspellchecker) corrections of the
unknown words in a file's prose.

`fix` offers them to the model as its draft: the predicted output and the keep-bias
(keepbias.py) then lean towards the corrected word, and the model keeps or rejects each
correction (a proper noun the dictionary does not know stays as the file has it, because
the model prefers it by more than β). Alone, `spellcheck` is the quality report's non-LLM
baseline (every unknown word replaced by its top correction).

Only prose is touched, and never the skeleton (skeleton.py: links' targets, code, markup): in Markdown not fenced code, inline code, URLs or HTML tags; in
reStructuredText not literal blocks (after a line ending in "::"), directives or
``literals``; in code only comments and docstrings (and other strings). Words with a
capital letter after the first, digits or underscores are left alone (identifiers).

With a variety of English (dialect.py), a word Harper's speller accepts in it is never
corrected: "behaviour" stays in a British text, "runtime" and "versioning" (unknown to
pyspellchecker) in any.
"""

from __future__ import annotations

import io
import re
import tokenize
from functools import cache, lru_cache

from . import dialect, skeleton

_WORD = re.compile(r"(?<![\w'`/.@-])[A-Za-z][a-z]+(?:'[a-z]+)?(?![\w`/@-])")
_MD_SKIP = re.compile(r"`[^`\n]*`|<[^>\n]*>|\]\([^)\n]*\)|https?://\S+")
_RST_SKIP = re.compile(r"``[^`\n]*``|`[^`\n]*`_?|https?://\S+|:\w+:`[^`\n]*`")


def prose_spans(text: str, filename: str) -> list[tuple[int, int]]:
    """(start, end) character ranges of `text` that are prose a spell checker may touch."""
    suffix = filename.rsplit(".", 1)[-1].lower() if "." in filename else ""
    if suffix == "py":
        return _python_spans(text)
    if suffix in ("md", "markdown"):
        return _line_spans(text, _md_code_lines(text), _MD_SKIP)
    if suffix == "rst":
        return _line_spans(text, _rst_code_lines(text), _RST_SKIP)
    return [(0, len(text))]


def _md_code_lines(text: str) -> set[int]:
    code, fence = set(), None
    for n, line in enumerate(text.splitlines()):
        m = re.match(r"\s*(`{3,}|~{3,})", line)
        if fence is None and m:
            fence = m.group(1)
            code.add(n)
        elif fence is not None:
            code.add(n)
            if line.strip().startswith(fence):
                fence = None
        elif line.startswith(("    ", "\t")):
            code.add(n)
    return code


def _rst_code_lines(text: str) -> set[int]:
    code, literal = set(), False
    lines = text.splitlines()
    for n, line in enumerate(lines):
        if literal and (not line.strip() or line[:1] in " \t"):
            code.add(n)
            continue
        literal = False
        if line.lstrip().startswith(".. "):
            code.add(n)
            literal = True  # a directive's indented body (code-block, image options, ...)
        elif line.rstrip().endswith("::"):
            literal = True
    return code


def _line_spans(text: str, skip_lines: set[int], skip: re.Pattern) -> list[tuple[int, int]]:
    spans, at = [], 0
    for n, line in enumerate(text.splitlines(keepends=True)):
        if n not in skip_lines:
            pos = 0
            for m in skip.finditer(line):
                spans.append((at + pos, at + m.start()))
                pos = m.end()
            spans.append((at + pos, at + len(line)))
        at += len(line)
    return [s for s in spans if s[1] > s[0]]


def _python_spans(text: str) -> list[tuple[int, int]]:
    """Comments and strings; a piece of a file (a chunk) may end inside a string: the
    spans found before the tokenizer gives up are kept."""
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    spans = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type in (tokenize.COMMENT, tokenize.STRING):
                (r1, c1), (r2, c2) = tok.start, tok.end
                spans.append((starts[r1 - 1] + c1, starts[r2 - 1] + c2))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        pass
    return spans


@cache
def checker():
    """pyspellchecker's English dictionary, one per process (about 0.2 s to build)."""
    from spellchecker import SpellChecker

    return SpellChecker()


def spellcheck(text: str, filename: str, variety: str | None = None) -> str:
    """`text` with every unknown prose word replaced by pyspellchecker's top correction;
    with a `variety` of English (dialect.py), not a word that variety spells so."""
    spans = skeleton.within(text, filename, prose_spans(text, filename))
    fixes = {w: _correct(w) for start, end in spans for w in _WORD.findall(text[start:end])}
    fixes = {w: c for w, c in fixes.items() if c != w}
    if variety and fixes:
        right = dialect.accepted({w.lower() for w in fixes}, variety)
        fixes = {w: c for w, c in fixes.items() if w.lower() not in right}
    out, at = [], 0
    for start, end in spans:
        out.append(text[at:start])
        out.append(_WORD.sub(lambda m: fixes.get(m.group(0), m.group(0)), text[start:end]))
        at = end
    out.append(text[at:])
    return "".join(out)


def _correct(word: str) -> str:
    low = word.lower()
    best = correction(low)
    if best is None or best == low:
        return word
    return best.capitalize() if word[0].isupper() else best


@lru_cache(maxsize=1 << 16)  # bounded: a server corrects whatever its clients send
def correction(word: str) -> str | None:
    """pyspellchecker's correction of a lower-case word (itself when it is known, None when
    nothing is near), found faster, the last 65,536 remembered per process.

        candidates = the known words one edit away (pyspellchecker's own edit_distance_1);
                     none: those two edits away
        correction = the most frequent candidate; among equals the first in the alphabet

    An edit is pyspellchecker's: delete, insert, replace a letter, swap two neighbours.
    Two of them in turn reach exactly the words at Damerau–Levenshtein distance <= 2 (the
    unrestricted distance counts the fewest such edits), which rapidfuzz finds among the
    words of length n-2..n+2 in about 0.06 s, where pyspellchecker builds every string
    two edits away (about 0.5 s a word: 2.5 s of a 140-line file's draft). Equal
    frequencies: pyspellchecker takes whichever its set yields first, which follows the
    strings' hashes and so changes between processes; the alphabet does not."""
    words = checker()
    table = words.word_frequency
    if word in words or len(word) > table.longest_word_length + 3:
        return word  # known, or longer than pyspellchecker checks
    near = words.known(words.edit_distance_1(word)) or _two_edits(word)
    return min(near, key=lambda w: (-table[w], w)) if near else None


def _two_edits(word: str) -> set[str]:
    from rapidfuzz import process
    from rapidfuzz.distance import DamerauLevenshtein

    lengths = by_length()
    found = set()
    for n in range(max(1, len(word) - 2), len(word) + 3):
        pool = lengths.get(n, ())
        hits = process.extract(word, pool, scorer=DamerauLevenshtein.distance, score_cutoff=2, limit=None)
        found.update(hit[0] for hit in hits)
    return found


@cache
def by_length() -> dict[int, list[str]]:
    """The dictionary's words by length (about 0.02 s)."""
    lengths: dict[int, list[str]] = {}
    for w in checker().word_frequency.dictionary:
        lengths.setdefault(len(w), []).append(w)
    return lengths
