"""The author's English: which variety a document is spelt in, and the words a fix must
not change because they are right in it.

pyspellchecker's dictionary is American: "behaviour", "organised" and "demeanour" are
unknown to it, so its corrections made a British or Canadian text American. Harper knows
the varieties (harper.Dialect: American, British, Canadian, Australian, Indian): its
SpellCheck rule, alone, flags the words a variety does not spell so ("colour" in
American, "color" in British). With F_d the document's words that variety d flags:

    score(d) = |F_american - F_d| - |F_d - F_american|
        (the words d accepts that American flags, less those it flags that American accepts)
    detect   = the variety of highest score when it is above 0 (the first in NAMES on a
               tie: tied varieties judge every word of the document alike), else American

(lower-case words of three letters or more: a capitalised word is often a name). Then:

    spelling   a word the variety accepts is never a spelling correction's (spelling.py:
               pyspellchecker's corrections are only of words Harper flags too)
    keep_words where the answer replaced one word right in the variety by another that
               the variety flags ("colour" -> "color" or "grey" -> "gray" in a British
               text), or, in a variety other than American, one of the variety's own
               spellings (right in it, flagged by American) by a word American accepts
               ("demeanour" -> "demeanor": Harper's British and Canadian accept both),
               the first is put back: a fix never respells a word that was right in the
               document's own English

`--dialect` and the `dialect` config key force a variety ("auto": detect).
"""

from __future__ import annotations

import difflib
import re
import threading
from collections.abc import Iterable
from functools import cache, lru_cache

NAMES = ("american", "british", "canadian", "australian", "indian")
AUTO = "auto"
CHOICES = (AUTO, *NAMES)
_WORD = re.compile(r"[A-Za-z]+(?:'[a-z]+)?")
_LOCK = threading.Lock()  # a harper.Linter raises if two threads call it at once


@cache
def _speller(name: str):
    """Harper with only its SpellCheck rule on, for the variety `name` (the first one
    built takes about 0.6 s: the dictionary; the others a few ms)."""
    import harper

    linter = harper.Linter(dialect=getattr(harper.Dialect, name.upper()))
    linter.set_lint_config({rule: rule == "SpellCheck" for rule in linter.get_lint_config()})
    return linter


def flagged(words: Iterable[str], name: str) -> set[str]:
    """The words (as given) that variety `name` does not spell so."""
    unique = sorted(set(words))
    if not unique:
        return set()
    text = "\n".join(unique)
    with _LOCK:
        lints = _speller(name).lint(text)
    return {text[lint.span.start : lint.span.end] for lint in lints}


def accepted(words: Iterable[str], name: str) -> set[str]:
    words = set(words)
    return words - flagged(words, name)


@lru_cache(maxsize=64)
def detect(text: str) -> str:
    words = {w for w in _WORD.findall(text) if w.islower() and len(w) >= 3}
    american = flagged(words, "american")
    best, top = "american", 0
    for name in NAMES[1:]:
        mine = flagged(words, name)
        score = len(american - mine) - len(mine - american)
        if score > top:
            best, top = name, score
    return best


def resolve(choice: str, text: str) -> str:
    """The variety a fix of `text` keeps: `choice`, or the detected one for "auto"."""
    return detect(text) if choice == AUTO else choice


def keep_words(source: str, output: str, name: str) -> str:
    """`output` with each word that replaced one word of `source` (in a run of as many
    words replaced by as many) put back where variety `name` accepts the old word and
    flags the new one, or (`name` not American) the old word is one American flags and
    the new one American accepts."""
    if source == output:
        return output
    a, b = list(_WORD.finditer(source)), list(_WORD.finditer(output))
    ops = difflib.SequenceMatcher(None, [m.group(0) for m in a], [m.group(0) for m in b], autojunk=False)
    pairs = [pair for tag, i1, i2, j1, j2 in ops.get_opcodes() if tag == "replace" and i2 - i1 == j2 - j1
             for pair in zip(a[i1:i2], b[j1:j2], strict=True)]  # fmt: skip
    if not pairs:
        return output
    words = [m.group(0).lower() for pair in pairs for m in pair]
    bad = flagged(words, name)
    us = flagged(words, "american") if name != "american" else set()
    out, at = [], 0
    for old, new in pairs:
        o, n = old.group(0).lower(), new.group(0).lower()
        if o not in bad and (n in bad or (o in us and n not in us)):
            out += [output[at : new.start()], old.group(0)]
            at = new.end()
    return "".join(out) + output[at:]
