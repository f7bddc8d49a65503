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
verbs whose number a subject decides); beside them, every word whose other number is a
word too ("take" <-> "takes", "child" <-> "children": `_number`, from lemminflect:
morphology.py), scored only where the model, reading up to it, already prefers the other
form (NUMBER_PREFILTER), as a verb after its subject does; a verb's form after a modal,
"to" or "did" ("can finds") or a passive's "be" ("was knock": `_forms`); a plural noun's
possessive before a noun ("the designers job": `_possessive`); and commas (commas.py).
THRESHOLD was chosen on the report's fix tasks,
held-out files excluded: `scripts/confusables.py` prints every swap's Δ and whether it
was the right correction. Measured (Intel Xeon, 2 cores, 2026-11-25; 958 swaps, 831 of
them ruled out by their first token, none of those right): above 3 nats the tuning files'
swaps were 27 right and none wrong (the highest wrong one scored 0.9, "latter" ->
"later"), the held-out files' 8 right and none wrong; 3 keeps a margin of 2 nats over
the wrong swaps measured, at the cost of 4 right ones between 1 and 3 nats (which
Harper's suggestions or the rewrite itself mostly make anyway).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from functools import cache

from ..engine import likelihood
from . import morphology, skeleton
from .options import ARTICLES, FORMS, POSSESSIVES, REAL_WORDS
from .spelling import checker, prose_spans

SETS = (
    "their there they're", "its it's", "your you're", "whose who's", "to too", "than then",
    "passed past", "aloud allowed", "wander wonder", "affect effect", "lose loose",
    "accept except", "weather whether", "principal principle", "quite quiet", "advice advise",
    "lead led", "peace piece", "brake break", "hear here", "knew new", "write right",
    "threw through", "whole hole", "weak week", "later latter", "were where",
    "was were", "is are", "has have", "does do", "doesn't don't", "isn't aren't", "wasn't weren't",
)  # fmt: skip
# the sets whose two members are one verb's two numbers (chosen: one agreement with a noun's number)
_NUMBER_SETS = frozenset(frozenset(x.split()) for x in (
    "was were", "is are", "has have", "does do", "doesn't don't", "isn't aren't", "wasn't weren't",
))  # fmt: skip
THRESHOLD = 3.0  # nats: e^3 ≈ 20 times likelier
# Above GUESS, a swap goes into the speculative draft alone (EditRequest.guess: speed only);
# the model made all 4 tuning swaps scored 2 to 3 nats (`scripts/confusables.py --guess`).
GUESS = 2.0
NUMBER = True  # a word's other number ("take" <-> "takes") is a candidate too
NUMBER_PREFILTER = 0.0  # nats (Swap.prefilter)
# Real-word errors ("from" for "form"): a word's frequent neighbours at one edit, read where
# the model prefers them by 4 nats, taken above 8: the right ones scored 6.3 to 19.2 nats on
# the tuning tasks, the wrong ones up to 5.9 (`scripts/confusables.py`; Mays et al. 1991).
REAL_FREQUENCY = 20_000
REAL_PREFILTER = -4.0  # nats (Swap.prefilter)
REAL_THRESHOLD = 8.0  # nats
# A dropped article put back (ARTICLES): right ones scored 9.9 and 8.4 nats on the tuning
# tasks, wrong ones up to 5.5, so the threshold is 7; read only where the article's first
# token is 4 nats likelier, since each read costs a pass's rows (`scripts/confusables.py`).
ARTICLE_PREFILTER = -4.0
ARTICLE_THRESHOLD = 7.0  # nats; never in the guess alone (GUESS): wrong ones score 2 to 5
# A verb's form after a modal, "to", "did" (its base: "can finds" -> "find") or a modal's
# "be" or a perfect's "have" (its participle: "can be merge" -> "merged"), from lemminflect
# (morphology.py), and a passive's participle after a finite "be" or a "get" ("was knock");
# read only where the model, reading up to it, prefers it already. The threshold is the
# sets': on the tuning tasks (learner training part included) the 24 right ones scored 4.9
# to 11.4 nats and no wrong one was read (`scripts/confusables.py`, AMD EPYC, 2026-11-30;
# held out: 22 right, 3.5 to 14.4, none wrong; the passive's added "expand", "involve",
# "knock" and a README's "kill" on the tuning tasks, all right).
FORM_PREFILTER = 0.0  # nats
FORM_THRESHOLD = 3.0  # nats
# A comma put in (commas.py): after an introduction, around a non-restrictive clause. On
# the tuning tasks the wrong ones scored up to 2.82 nats (a README's, then Darwin's), the right ones
# from -5.7 up; above 3 nats 13 of 28 right and none wrong (held out: 14 of 30, none wrong),
# above 2, 18 right and 2 wrong (`scripts/confusables.py`, AMD EPYC, 2026-11-29).
# Read only where the comma's first token is no less likely than the word it goes before
# (issue 71): of the commas a fix scores, those it took had that token 0.82 nats likelier or
# more on the training tasks (2.42 held out), and those below 0 were 11% of the scoring's
# window rows there (7% held out), none taken: `pedit fix`'s decisions are the same on both
# parts (`python scripts/scoring_rows.py train` and `held`, AMD EPYC, 2026-12-07).
COMMA_PREFILTER = 0.0  # nats
COMMA_THRESHOLD = 3.0  # nats
# A plural noun's possessive before a noun (`_possessive`): "the template designers job".
# On the tuning tasks the 6 right ones scored 5.2 to 11.9 nats; the wrong ones above 3 were
# the other possessive of a word whose right one scored higher ("projects'" 5.6 under
# "project's" 11.9, "designers'" 4.5 under 5.97: `chosen` takes the likeliest) and
# "Barker's" (5.6), wrong only for its straight apostrophe in a file that writes "’" (the
# text's own apostrophe since). So the sets' threshold. Every right one's first token was
# likelier than the word's already (by 0.6 to 6.6 nats), so, as a verb's form, it is read
# only there (`scripts/confusables.py`, AMD EPYC, 2026-11-30; read down to -4 nats, the
# report's fix tasks' outputs were the same). Its cost (`+nopossessives`, run first on four
# files): the same seconds where none is taken, 1.1 s more on the file where two are.
POSSESSIVE_PREFILTER = 0.0  # nats
POSSESSIVE_THRESHOLD = 3.0  # nats
# A misspelling's neighbours (incontext.spelling): read where its first token is no less
# likely than the misspelling's, the likeliest taken where it beats the misspelling by the
# sets' margin. On the learner sentences' training part (issue 70; `scripts/confusables.py
# --tasks lrs- --sentences`, AMD EPYC, 2026-12-07) the likeliest neighbour was right for 23
# of 24 misspellings ("ther" -> "their" 14.2 over "the" 13.4 in one sentence, "there" 6.0
# over "their" 0.3 in another), the 24th ("buyed" -> "buyer", 0.9) under the threshold; the
# right ones' first tokens were 2.5 to 12.5 nats likelier than the misspelling's (so a
# prefilter of 0, where reading all of them cost that part 1.1x to 1.26x the seconds).
# A missing word (incontext.missing) is read only where its first token is 4 nats likelier
# than the text's word there; on that part the 6 right ones scored 3.5 to 7.4 nats, the
# wrong ones up to 4.65, so 5 (3 right taken, none wrong).
SPELL_PREFILTER = 0.0  # nats
SPELL_THRESHOLD = 3.0  # nats
MISSING_PREFILTER = -4.0  # nats
MISSING_THRESHOLD = 5.0  # nats
NEAR = 2  # words between two swaps that `chosen` counts as one agreement
# A suggestion the model's reading finds SURE_THRESHOLD nats likelier is leant on harder
# (Template.sure_bias): right ones the output declined scored up to 19.0 on the tuning
# tasks, the highest wrong one 7.0 (`scripts/confusables.py --sure`).
SURE_THRESHOLD = 9.0  # nats

ALTERNATIVES: dict[str, tuple[str, ...]] = {}
for _set in SETS:
    for _w in _set.split():
        ALTERNATIVES[_w] = tuple(
            dict.fromkeys((*ALTERNATIVES.get(_w, ()), *(x for x in _set.split() if x != _w)))
        )
_WORD = re.compile(r"(?<![\w'’])[A-Za-z]+(?:'[a-z]+)?(?![\w'’])")


@dataclass(frozen=True)
class Swap:
    start: int  # text[start:end] is the word
    end: int
    word: str
    replacement: str
    # "set": a confusion set's; "number": the word's other number; "article": an article
    # put in (start == end: before the word); "real": a word one edit away (_real);
    # "harper": one of Harper's suggestions, scored for `sure` only (never `chosen`); "form":
    # a verb's form after a modal, "to", "did", a "be", a "get" or a perfect's "have"
    # (_forms); "possessive": a plural noun's possessive before a noun (_possessive);
    # "comma": a comma put in (commas.py); "spell": a misspelling's neighbour, "missing": a
    # word put in (incontext.py)
    kind: str = "set"
    slot: int = -1  # swaps of one slot are one choice (`chosen`: the likeliest); -1: the word's
    also: tuple[int, int, str] | None = None  # a second edit made with it: (start, end, replacement)

    def edits(self) -> list[tuple[int, int, str]]:
        return [(self.start, self.end, self.replacement), *([self.also] if self.also else [])]

    @property
    def prefilter(self) -> float:
        """How much less likely (nats) its first token may be, reading up to it, and still
        be scored (likelihood.PREFILTER): a number swap only where the model already
        prefers it there (a verb's number follows its subject, which comes first); an
        article or a real word only where it prefers it by far (ARTICLE_PREFILTER,
        REAL_PREFILTER)."""
        return {"number": NUMBER_PREFILTER, "article": ARTICLE_PREFILTER, "real": REAL_PREFILTER,
                "form": FORM_PREFILTER, "comma": COMMA_PREFILTER, "possessive": POSSESSIVE_PREFILTER,
                "spell": SPELL_PREFILTER, "missing": MISSING_PREFILTER,
                }.get(self.kind, likelihood.PREFILTER)  # fmt: skip


def candidates(
    text: str,
    filename: str,
    number: bool = NUMBER,
    articles: bool = ARTICLES,
    real: bool = REAL_WORDS,
    forms: bool = FORMS,
    possessives: bool = POSSESSIVES,
) -> list[Swap]:
    """Every member of a set in the prose of `text`, once per other member, and (`number`)
    every other word whose -s form or stem is a word too ("take" <-> "takes", "teach" <->
    "teaches", "fly" <-> "flies": a verb's number, or a noun's), in text order; the case of
    its first letter kept (a word in capitals is left alone). With `articles`, the
    articles of `_articles` too; with `real`, each word's neighbours of `_real`; with
    `forms`, a verb's forms of `_forms`; with `possessives`, a plural noun's possessive
    before a noun (`_possessive`)."""
    out = []
    mark = "’" if text.count("’") > text.count("'") else "'"  # the text's apostrophe
    for a, b in skeleton.within(text, filename, prose_spans(text, filename)):
        last = None  # the word before
        for m in _WORD.finditer(text, a, b):
            word = m.group()
            gap = text[last.end() : m.start()] if last else "."
            before = last if _phrase(gap) else None  # in one phrase with it
            if possessives and before is not None and gap == " ":  # the word before's, first: text order
                out += _possessive(before, m, mark)
            if articles:  # the word before, if nothing between them ends a sentence or clause
                out += _articles(text, None if _BREAK.search(gap) else last, m)
            if forms:
                out += _forms(text, before, m)
            last = m
            if word.isupper() and len(word) > 1:
                continue
            low = word.lower()
            kind, alts = ("set", ALTERNATIVES[low]) if low in ALTERNATIVES else ("number", _number(low))
            swaps = [(kind, alt) for alt in alts if kind != "number" or number]
            if real:
                swaps += [("real", alt) for alt in _real(low) if alt not in alts]
            for kind, alt in swaps:
                rep = _cased(word, alt)
                out.append(Swap(start=m.start(), end=m.end(), word=word, replacement=rep, kind=kind))
    return out


@cache
def _real(word: str) -> tuple[str, ...]:
    """The known words one edit from `word` (a letter added, taken, changed, or two
    swapped) with at least REAL_FREQUENCY uses, commonest first; none for a word the
    dictionary does not know (a misspelling is the spelling's)."""
    known = _dictionary()
    if "'" in word or word not in known:
        return ()
    freq = known.word_frequency
    near = [w for w in known.known(known.edit_distance_1(word)) if w != word and len(w) > 1 and "'" not in w]
    return tuple(sorted((w for w in near if freq[w] >= REAL_FREQUENCY), key=lambda w: (-freq[w], w)))


_MODALS = frozenset(re.findall(r"\w+", "can could will would shall should may might must"))
_DO = frozenset(re.findall(r"[\w']+", "do does did don't doesn't didn't"))
_PERFECT = frozenset(("has", "have", "had"))
# a finite "be" or a "get" before a base form: a passive's participle ("are not expand",
# "was knock", "get involve"); where the word is an adjective too ("is open"), the model says
_PASSIVE = frozenset(re.findall(r"\w+", "am is are was were being get gets got getting"))
_ADVERBS = frozenset(re.findall(r"\w+", "not never also always just only really even still often"))


def _forms(text: str, before: re.Match | None, m: re.Match) -> list[Swap]:
    """A verb's form where the word before it (`before`, in its phrase; an adverb between
    them skipped: "did not looked") asks for one (morphology.forms_after): its base after a
    modal, "to" or a "do" ("can finds" -> "find", "to went" -> "go", "did looked" ->
    "look"), its participle after a "be" or "been" ("can be merge" -> "merged"), after a
    finite "be" or a "get" when it is a base form (a passive's: "was knock" -> "knocked",
    "get involve" -> "involved") or after a perfect's "have" when it is a base or past form
    ("has went" -> "gone"); and after a modal, a "to" taken out ("must to finish" -> "must
    finish")."""
    while before is not None and before.group().lower() in _ADVERBS:
        words = list(_WORD.finditer(text, max(0, before.start() - 40), before.start()))
        prev = words[-1] if words else None
        before = prev if prev is not None and _phrase(text[prev.end() : before.start()]) else None
    if before is None:
        return []
    t, word = before.group().lower(), m.group()
    if t in _MODALS and word.lower() == "to":
        return [
            Swap(
                start=before.end(),
                end=m.end(),
                word=text[before.end() : m.end()],
                replacement="",
                kind="form",
            )
        ]
    if t in _MODALS or t in _DO or t == "to":
        alts = morphology.forms_after(word.lower(), "VB")
    elif (
        t in ("be", "been")
        or (t in _PERFECT and morphology.is_form(word.lower(), ("VB", "VBD")))
        or (t in _PASSIVE and morphology.is_form(word.lower(), ("VB",)))
    ):
        alts = morphology.forms_after(word.lower(), "VBN")
    else:
        return []
    known = _dictionary()
    return [Swap(start=m.start(), end=m.end(), word=word, replacement=_cased(word, alt), kind="form")
            for alt in alts if alt in known]  # fmt: skip


def _possessive(before: re.Match, m: re.Match, mark: str = "'") -> list[Swap]:
    """A plural noun right before a noun, as its singular's possessive or its own
    ("the template designers job" -> "designer's", "designers'"): the apostrophe a writer
    left out, as `mark` (the text's: "'" or "’"). The next word may be one the lexicon does
    not know ("codebases")."""
    word, after = before.group(), m.group().lower()
    if word.isupper() or not (morphology.noun(after) or not morphology.known(after)):
        return []
    alts = [f"{one}{mark}s" for one in morphology.possessor(word.lower())]
    alts += [f"{word.lower()}{mark}"] if alts and word.lower().endswith("s") else []
    return [Swap(start=before.start(), end=before.end(), word=word, replacement=_cased(word, alt),
                 kind="possessive") for alt in alts]  # fmt: skip


def _phrase(gap: str) -> bool:
    """Are two words with `gap` between them in one phrase (no mark of a sentence's or a
    clause's end, no comma)?"""
    return not _BREAK.search(gap) and "," not in gap


def _cased(word: str, alt: str) -> str:
    """`alt` with `word`'s first letter's case."""
    return alt[0].upper() + alt[1:] if word[0].isupper() else alt


def _articles(text: str, before: re.Match | None, m: re.Match) -> list[Swap]:
    """The article swaps at word `m`, `before` the word before it in its sentence (None at
    a sentence's start, where none is proposed): "the", then "a" or "an" (by its first
    letter), put in before a word that follows neither a determiner nor a number nor a
    possessive and is itself no determiner, pronoun, preposition or conjunction."""
    low = m.group().lower()
    if before is None:
        return []
    prev = before.group().lower()
    if (
        prev in _DETERMINERS or prev in _CLOSED and prev not in _LEADS or prev.endswith(("'s", "s'"))
        or low in _DETERMINERS or low in _CLOSED or len(low) < 3 or text[m.start() - 1 : m.start()] != " "
    ):  # fmt: skip
        return []
    a = "an" if low[0] in "aeiou" else "a"
    return [Swap(start=m.start(), end=m.start(), word="", replacement=f"{x} ", kind="article")
            for x in ("the", a)]  # fmt: skip


_ARTICLES = frozenset(("a", "an", "the"))
_BREAK = re.compile(r"[.!?:;()\[\]`*_\"“”]|\n\s*\n")  # between two words: not one phrase
# what a noun phrase's article cannot follow (a determiner, a possessive pronoun, a number)
_DETERMINERS = frozenset(re.findall(r"\w+",
    "a an the this that these those my your his her its our their whose which what whatever "
    "some any no every each either neither another such several both all many much few "
    "one two three four five six seven eight nine ten first second last next",
))  # fmt: skip
# words of _CLOSED an article may still follow ("from the library", "with a copy")
_LEADS = frozenset(re.findall(r"\w+",
    "after over under upon with from into onto about above below for and but nor yet when "
    "how why towards besides whereas unless also just only even ever never not perhaps always",
))  # fmt: skip


def chosen(
    text: str, swaps: list[Swap], deltas: list[float | None], threshold: float | None = None
) -> list[Swap]:
    """The swaps the model finds likelier by more than `threshold` (an article by more
    than ARTICLE_THRESHOLD, a real word by more than REAL_THRESHOLD too, a verb form or a
    comma by more than theirs), the likeliest one per word or slot; of two swaps of a
    word's number that are close (at most NEAR words apart: `_agreement`), the verb's
    (`_verb_side`): "the streets takes" scores both "street" and "take", "the rooms was"
    both "room" and "were", and the two together would break what each one mends.
    `threshold`: THRESHOLD unless given."""
    threshold = THRESHOLD if threshold is None else threshold
    best: dict[tuple[bool, int], tuple[float, Swap]] = {}
    for w, d in zip(swaps, deltas, strict=True):
        need = _need(w.kind, threshold)
        key = (w.slot >= 0, w.slot if w.slot >= 0 else w.start)
        if d is not None and d > need and d > best.get(key, (-1.0, w))[0]:
            best[key] = (d, w)
    out: list[tuple[float, Swap]] = []
    for d, w in sorted(best.values(), key=lambda x: (_verb_side(x[1]), x[0]), reverse=True):
        if not any(_agreement(w) and _agreement(o) and _near(text, w, o) for _, o in out):
            out.append((d, w))
    return sorted((w for _, w in out), key=lambda w: w.start)


def _need(kind: str, threshold: float) -> float:
    """The Δ a swap of this kind must pass to be `chosen` at `threshold`."""
    return {"article": ARTICLE_THRESHOLD, "real": max(threshold, REAL_THRESHOLD),
            "form": max(threshold, FORM_THRESHOLD), "comma": max(threshold, COMMA_THRESHOLD),
            "possessive": max(threshold, POSSESSIVE_THRESHOLD),
            "spell": max(threshold, SPELL_THRESHOLD), "missing": MISSING_THRESHOLD,
            }.get(kind, threshold)  # fmt: skip


def least(swap: Swap) -> float:
    """The least Δ at which this swap can change what fix.scored does: be `chosen` for the
    guess (at min(GUESS, THRESHOLD), whose bars are the lowest), or, Harper's, be `sure`.
    A swap whose Δ cannot reach it need not be read (likelihood.score's `need`)."""
    return SURE_THRESHOLD if swap.kind == "harper" else _need(swap.kind, min(GUESS, THRESHOLD))


def _verb_side(s: Swap) -> tuple[bool, int]:
    """Which of an agreement's two swaps is its verb's, taken first (`chosen`): a verb of
    the sets ("the rooms was", "there is many"), else the later word (its position: a
    subject comes before its verb, "Reviews helps"); a learner gets the verb wrong far more
    often than the noun's number, and a sentence read alone gives the model less to tell
    them apart (the learner training part, each sentence a file: "Reviews helps" became
    "Review helps", "the logs shows" "the log shows")."""
    return (s.kind == "set", s.start) if _agreement(s) else (False, 0)


def _agreement(s: Swap) -> bool:
    """A swap of a word's number: a number swap, or a verb's of the sets whose members a
    subject's number decides ("the rooms was": "room" or "were", never both)."""
    pair = frozenset((s.word.lower(), s.replacement.lower()))
    return s.kind == "number" or (s.kind == "set" and pair in _NUMBER_SETS)


def _near(text: str, a: Swap, b: Swap) -> bool:
    a, b = (a, b) if a.start < b.start else (b, a)
    return len(_WORD.findall(text, a.end, b.start)) <= NEAR


def _number(word: str) -> tuple[str, ...]:
    """The word's other number, if the dictionary knows it: a verb's or a noun's other
    number from lemminflect (morphology.other_number: "need" <-> "needs", "child" <->
    "children"); for a word its lexicon does not know ("widgets"), -s, -es, -ies added or
    taken."""
    if len(word) < 3 or "'" in word or word in _CLOSED:
        return ()
    known = _dictionary()
    if morphology.known(word):
        return tuple(f for f in morphology.other_number(word) if f in known and word in known)
    if word.endswith("ies"):
        forms = [word[:-3] + "y"]
    elif word.endswith(("ches", "shes", "sses", "xes", "zes", "oes")):
        forms = [word[:-2]]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        forms = [word[:-1]]
    elif word.endswith("y") and word[-2] not in "aeiou":
        forms = [word[:-1] + "ies"]
    elif word.endswith(("ch", "sh", "ss", "x", "z", "o")):
        forms = [word + "es"]
    else:
        forms = [word + "s"]
    return tuple(f for f in forms if f in known and word in known)


# words with no other number (pronouns, determiners, prepositions, conjunctions, adverbs)
_CLOSED = frozenset(re.findall(r"\w+",
    "you your yours her hers his him our ours their theirs they them she who whom whose what "
    "this that these those thus out one none some many much few less least more most also "
    "after over under upon with from into onto about above below both each either neither "
    "such why how when well very just only even ever never not nor but yet for and the any "
    "all own same other another always perhaps towards afterwards besides whereas unless",
))  # fmt: skip


@cache
def _dictionary():
    return checker()


def apply(text: str, swaps: list[Swap]) -> str:
    """`text` with the swaps made (at most one per word: the first given wins; an edit that
    overlaps one made already is left out)."""
    chosen: dict[int, Swap] = {}
    for s in swaps:
        chosen.setdefault(s.start, s)
    edits = sorted((e for s in chosen.values() for e in s.edits()), key=lambda e: (e[0], e[1]), reverse=True)
    limit, put = len(text) + 1, -1  # the start of the last edit made (they go from the end back),
    for start, end, rep in edits:  # and where the last insertion went
        if end > limit or start == end == put:
            continue
        text, limit, put = text[:start] + rep + text[end:], start, start if start == end else -1
    return text


def sure(taken: list[Swap], swaps: list[Swap], deltas: list[float | None]) -> list[tuple[int, int]]:
    """The spans (start, end) of the suggestions the model is sure of: the swaps `taken`
    and Harper's ("harper" swaps) whose Δ is SURE_THRESHOLD or more."""
    chosen = set(taken)
    return [(a, b) for w, d in zip(swaps, deltas, strict=True)
            if d is not None and d >= SURE_THRESHOLD and (w in chosen or w.kind == "harper")
            for a, b, _ in w.edits()]  # fmt: skip


def doubtful(text: str, draft: str, spans: list[tuple[int, int]]) -> str:
    """`draft` with its changes to `text` at `spans` undone (a character alignment of the
    two: each differing run that touches a span goes back to the text's), so what the
    draft changes beyond it is the suggestions at those spans."""
    out, ops = [], difflib.SequenceMatcher(None, text, draft, autojunk=False).get_opcodes()
    for tag, i1, i2, j1, j2 in ops:
        touched = tag != "equal" and any(a <= i2 and i1 <= b if i1 == i2 or a == b else a < i2 and i1 < b
                                         for a, b in spans)  # fmt: skip
        out.append(text[i1:i2] if touched else draft[j1:j2])
    return "".join(out)
