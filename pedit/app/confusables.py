"""Words a writer confuses, as candidate edits the model scores: `fix`'s third tool.

A dictionary cannot see "I lived their two years", "it was to dark", "they was filled":
every word is spelt right. Harper's rules see some (a pronoun's verb); a confusion set
sees the rest if something can tell which member the sentence wants. That something is
the model: each occurrence of a set's member, swapped for each other member, is a
variant of the prompt, and engine/likelihood.py scores how much likelier the model finds
it, reading the sentence as it goes on. A swap it prefers by more than THRESHOLD nats
becomes a suggestion in the draft, beside Harper's and the spelling's, and the rewrite
verifies it as it verifies those (keep-bias, keepbias.py).

The sets are the common English confusions (homophones and near-homophones, and the
verbs whose number a subject decides). THRESHOLD was chosen on the report's fix tasks,
held-out files excluded: `scripts/confusables.py` prints every swap's Δ and whether it
was the right correction.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .spelling import prose_spans

SETS = (
    "their there they're", "its it's", "your you're", "whose who's", "to too", "than then",
    "passed past", "aloud allowed", "wander wonder", "affect effect", "lose loose",
    "accept except", "weather whether", "principal principle", "quite quiet", "advice advise",
    "lead led", "peace piece", "brake break", "hear here", "knew new", "write right",
    "threw through", "whole hole", "weak week", "later latter", "were where",
    "was were", "is are", "has have", "does do", "doesn't don't", "isn't aren't", "wasn't weren't",
)  # fmt: skip
THRESHOLD = 3.0  # nats: e^3 ≈ 20 times likelier

_ALTERNATIVES: dict[str, tuple[str, ...]] = {}
for _set in SETS:
    for _w in _set.split():
        _ALTERNATIVES[_w] = tuple(
            dict.fromkeys((*_ALTERNATIVES.get(_w, ()), *(x for x in _set.split() if x != _w)))
        )
_WORD = re.compile(r"(?<![\w'’])[A-Za-z]+(?:'[a-z]+)?(?![\w'’])")


@dataclass(frozen=True)
class Swap:
    start: int  # text[start:end] is the word
    end: int
    word: str
    replacement: str


def candidates(text: str, filename: str) -> list[Swap]:
    """Every member of a set in the prose of `text`, once per other member, in text order;
    the case of its first letter kept (a word in capitals is left alone)."""
    out = []
    for a, b in prose_spans(text, filename):
        for m in _WORD.finditer(text, a, b):
            word = m.group()
            if word.isupper() and len(word) > 1:
                continue
            for alt in _ALTERNATIVES.get(word.lower(), ()):
                rep = alt[0].upper() + alt[1:] if word[0].isupper() else alt
                out.append(Swap(m.start(), m.end(), word, rep))
    return out


def apply(text: str, swaps: list[Swap]) -> str:
    """`text` with the swaps made (at most one per word: the first given wins)."""
    chosen: dict[int, Swap] = {}
    for s in swaps:
        chosen.setdefault(s.start, s)
    for s in sorted(chosen.values(), key=lambda s: s.start, reverse=True):
        text = text[: s.start] + s.replacement + text[s.end :]
    return text
