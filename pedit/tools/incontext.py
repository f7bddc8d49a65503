"""A misspelling whose correction needs its sentence, and a word a learner left out: candidate
edits the model scores (confusables.py's swaps of kinds "spell" and "missing"; issue 70).

**Spelling in context.** The spelling's draft (spelling.py) takes a misspelling's most
frequent neighbour: "We painted ther house" becomes "the house", where the sentence wants
"their". Here each unknown prose word gets the known words one edit away (two where none
is one away), the SPELL_CANDIDATES most frequent, the spelling's own correction always
among them, and, after a modal, "to", "did" or a "be", each candidate's form there ("I will
writeing" -> "writing" -> "write": morphology.forms_after). The model scores each in the
sentence (where its first token is no less likely than the misspelling's: SPELL_PREFILTER);
the likeliest, where it is SPELL_THRESHOLD nats likelier than the misspelling,
goes into the draft instead of the spelling's choice (confusables.chosen, one per word).
A word the text's variety of English spells so is never a candidate (dialect.accepted,
as for the spelling's draft).

**Missing words.** "My parents very proud of me", "After the meeting the went home",
"I want go home": a form of *be*, a subject pronoun, or "to", put in before a word whose
part of speech can follow it (lemminflect: *be* before an adjective, an adverb, a
participle or an -ing form after a noun or pronoun; a pronoun before a verb's finite form
after a conjunction; "to" before a verb's base form after a verb or an adjective). Most places allow one by those rules alone, so the model decides twice: a
candidate is read only where the inserted word's first token is MISSING_PREFILTER nats
likelier, reading up to it, than the word the text has there (the prefilter costs nothing:
the base's own reading gives it), and taken only above MISSING_THRESHOLD (confusables.py:
both chosen on the learner sentences' training part).
"""

from __future__ import annotations

import re

from . import morphology, skeleton
from .confusables import Swap, _cased
from .spelling import _two_edits, checker, correction, prose_spans

SPELL_CANDIDATES = 10  # a misspelling's neighbours scored, the most frequent first
# the prefilters and thresholds: confusables.SPELL_* and MISSING_* (Swap.prefilter, chosen)

_WORD = re.compile(r"(?<![\w'`/.@-])[A-Za-z][a-z]+(?:'[a-z]+)?(?![\w`/@-])")  # spelling.py's
_ANY = re.compile(r"[A-Za-z]+(?:'[a-z]+)?")
_MODALS = frozenset("can could will would shall should may might must".split())
_BASE_BEFORE = _MODALS | frozenset(("to", "do", "does", "did", "don't", "doesn't", "didn't"))
_BE = frozenset(("be", "been"))
PRONOUNS = ("they", "he", "she", "it", "we", "I")
COPULAS = ("is", "are", "am", "was", "were")
# words a missing word is never put before or after (a determiner's noun, a preposition's)
_NOT_AFTER = frozenset(re.findall(r"\w+",
    "a an the this that these those my your his her its our their to of in on at for with by "
    "from is are am was were be been being not and or but very too so",
))  # fmt: skip


def spelling(text: str, filename: str, accepted: frozenset[str] = frozenset()) -> list[Swap]:
    """The swaps of each unknown prose word (not in `accepted`, the words the text's variety
    spells so) for its neighbours, in text order: kind "spell"."""
    words, out = checker(), []
    for a, b in skeleton.within(text, filename, prose_spans(text, filename)):
        for m in _WORD.finditer(text, a, b):
            word = m.group()
            low = word.lower()
            if low in words or low in accepted or "'" in low:
                continue
            first = correction(low)
            if first is None or first == low:
                continue
            before = _word_before(text, m.start())
            for alt in _neighbours(low, first, before):
                out.append(Swap(start=m.start(), end=m.end(), word=word, replacement=_cased(word, alt), kind="spell"))
    return out


def unknown_words(text: str, filename: str) -> set[str]:
    """The prose words of `text` the dictionary does not know."""
    words = checker()
    spans = skeleton.within(text, filename, prose_spans(text, filename))
    return {w for a, b in spans for w in _WORD.findall(text, a, b) if w.lower() not in words}


def _neighbours(word: str, first: str, before: str | None) -> list[str]:
    """`first` (the spelling's correction) and the other known words one edit from `word`
    (two where none is one away), SPELL_CANDIDATES in all, the most frequent first; then
    each one's form after `before` where that word asks for one."""
    words = checker()
    freq = words.word_frequency
    near = words.known(words.edit_distance_1(word)) or _two_edits(word)
    ranked = sorted((w for w in near if w != first and len(w) > 1), key=lambda w: (-freq[w], w))
    out = [first, *ranked[: SPELL_CANDIDATES - 1]]
    if before in _BASE_BEFORE or before in _BE:
        tag = "VB" if before in _BASE_BEFORE else "VBN"
        out += [f for w in list(out) for f in morphology.forms_after(w, tag) if f in words]
    return list(dict.fromkeys(out))


def _word_before(text: str, at: int) -> str | None:
    """The word right before `at`, lower case, if only spaces stand between them."""
    m = re.search(r"([A-Za-z']+) +$", text[max(0, at - 30) : at])
    return m.group(1).lower() if m else None


def missing(text: str, filename: str) -> list[Swap]:
    """A form of *be*, a subject pronoun or "to" put in before each prose word that can
    follow it (see the module's docstring), in one sentence (not its first word: a
    capital's sentence is the writer's); insertions (start == end), kind "missing"."""
    out = []
    for a, b in skeleton.within(text, filename, prose_spans(text, filename)):
        last = None
        for m in _ANY.finditer(text, a, b):
            gap = text[last.end() : m.start()] if last else "."
            prev = last.group().lower() if last and gap == " " else None
            last = m
            if prev is None or prev in _NOT_AFTER:
                continue
            low = m.group().lower()
            for word in _insertions(prev, low):
                out.append(Swap(start=m.start(), end=m.start(), word="", replacement=f"{word} ", kind="missing"))
    return out


def _insertions(prev: str, low: str) -> tuple[str, ...]:
    """The words that may be missing between `prev` and `low`: a form of *be* between a
    noun or pronoun and an adjective, adverb or participle ("parents very proud"); a
    subject pronoun between a conjunction and a verb's finite form ("and do not talk");
    "to" between a verb or an adjective and a verb's base form ("want go", "difficult buy")."""
    tags, before = morphology.tags(low), _tags_before(prev)
    out: list[str] = []
    if tags & {"JJ", "RB", "VBG", "VBN"} and before & {"NN", "NNS", "PRP"}:
        out += COPULAS
    if tags & {"VBD", "VBZ", "VBP"} and prev in _CONJUNCTIONS:
        out += PRONOUNS
    if "VB" in tags and before & {"VB", "VBD", "VBZ", "VBP", "JJ"} and low not in ("be", "have", "do"):
        out.append("to")
    return tuple(out)


_CONJUNCTIONS = frozenset("and but so because when if then that while after before since".split())


def _tags_before(word: str) -> frozenset[str]:
    """The tags of the word before a gap; a subject pronoun is PRP."""
    return frozenset({"PRP"}) if word in _SUBJECTS else morphology.tags(word)


_SUBJECTS = frozenset(("i", "you", "he", "she", "it", "we", "they"))
