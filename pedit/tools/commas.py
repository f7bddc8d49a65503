"""Missing commas, as candidate edits the model scores (confusables.py's swaps of kind "comma").

A learner leaves out the comma that ends an introductory phrase or clause ("After a long
discussion we agreed") and the two around a non-restrictive clause ("The documentation
which was written by volunteers explains"). No rule can say where the introduction ends or
whether a clause restricts; the model can, reading the sentence with the comma in each
place a rule allows:

- after each of the first MAX_INTRO words of a sentence that opens as an introduction does
  (INTRO: a subordinating conjunction, a preposition, a sentence adverb; a word in -ly; a
  sentence with "ago" in its first words), where the sentence has no comma or other mark
  there yet; one place per sentence at most (`Swap.slot`);
- before "which" or "who" after a noun (no comma, no preposition before it), alone or with
  the closing comma after each word of the clause up to the sentence's next mark (one
  variant each: the pair is one edit); one per clause.

Each is an insertion (start == end) the model scores as it scores a confusion set's swap;
the likeliest of a slot's, where it is COMMA_THRESHOLD nats likelier than the sentence as
it is, goes into the draft (confusables.chosen).
"""

from __future__ import annotations

import difflib
import re

from . import morphology, skeleton
from .confusables import Swap
from .spelling import prose_spans

MAX_INTRO = 10  # words: an introduction's longest ("According to the documentation of the library")
# the words an introductory phrase or clause opens with (lower case)
INTRO = frozenset(re.findall(r"\w+",
    "after although as because before if once since though unless until when whenever while "
    "whereas whether wherever according at by despite during for from in on thanks to with "
    "without within besides instead apart however therefore moreover furthermore meanwhile "
    "nevertheless nonetheless otherwise still also finally first firstly secondly then later "
    "yesterday today tomorrow last next every each",
))  # fmt: skip
_RELATIVE = frozenset(("which", "who"))
# what a relative's word may follow and still open a non-restrictive clause (not "in which",
# "know who", "the one who")
_NOT_BEFORE = frozenset(re.findall(r"\w+",
    "in of to for on with by from at about into onto under over after before through during "
    "and or but than that this those these the a an one ones anyone someone everyone "
    "me you him her us them it those "
    "know knew known ask asked wonder wondered decide decided see saw tell told say said "
    "explain explains explained show shows showed choose chose chosen understand understood",
))  # fmt: skip
_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*")
_END = re.compile(r"[.!?](?:[\"'”’)\]]*)\s+|\n\s*\n")  # a sentence's end
_MARK = re.compile(r"[,;:()\[\]\"“”—–]|\s-\s")  # between two words: a mark already there


def candidates(text: str, filename: str) -> list[Swap]:
    """The comma swaps of `text`'s prose, in text order."""
    out: list[Swap] = []
    for a, b in skeleton.within(text, filename, prose_spans(text, filename)):
        at = a
        for end in [*(m.end() for m in _END.finditer(text, a, b)), b]:
            if end > at:
                out += _sentence(text, at, end)
            at = end
    return sorted(out, key=lambda s: s.start)


def _sentence(text: str, a: int, b: int) -> list[Swap]:
    words = list(_WORD.finditer(text, a, b))
    if len(words) < 3:
        return []
    # marked[i]: a mark, or anything but white space, between words[i] and words[i + 1]
    gaps = [text[w.end() : v.start()] for w, v in zip(words, words[1:], strict=False)]
    marked = [bool(_MARK.search(g)) or g.strip(" \t\n") != "" for g in gaps]
    return _intro(words, marked) + _relative(words, marked)


def _intro(words: list[re.Match], marked: list[bool]) -> list[Swap]:
    first = words[0].group().lower()
    opens = (
        first in INTRO
        or (first.endswith("ly") and len(first) > 4)
        or any(w.group().lower() == "ago" for w in words[1:5])
    )
    if not opens:
        return []
    out = []
    for k in range(min(MAX_INTRO, len(words) - 2)):  # after word k, two words at least after it
        if marked[k]:
            return []  # a mark already there: the introduction has its comma, or is no introduction
        w = words[k]
        out.append(
            Swap(start=w.end(), end=w.end(), word="", replacement=",", kind="comma", slot=words[0].start())
        )
    return out


def _relative(words: list[re.Match], marked: list[bool]) -> list[Swap]:
    out = []
    for i in range(1, len(words) - 1):
        if words[i].group() not in _RELATIVE or marked[i - 1] or words[i - 1].group().lower() in _NOT_BEFORE:
            continue
        open_at = words[i - 1].end()
        base = {"start": open_at, "end": open_at, "word": "", "replacement": ",", "kind": "comma",
                "slot": words[i].start()}  # fmt: skip
        out.append(Swap(**base))  # the clause runs to the sentence's end, or its close is there
        for j in range(i + 2, len(words) - 1):  # its closing comma after words[j]: two words in it at least
            if marked[j - 1] or marked[j]:  # the clause ends there, or its close is there already
                break
            close = words[j].end()
            out.append(Swap(**base, also=(close, close, ",")))
    return out


# A comma after a short introductory phrase of time or place ("Last weekend", "In my country",
# "On Fridays") is optional: a learner's correctors leave it out (the learner sentences'
# training part: the model put 5 such commas in of its own, none in a correction), while an
# introductory clause's ("After I finished university,") and a linking phrase's ("In my
# opinion,", "However,") are wanted. `optional_added` takes out the ones the answer put in
# that neither the file nor the draft has (commas.candidates' own, scored, stay).
SHORT_INTRO = 3  # words: "In the future", "Last weekend"
# what a short phrase of time or place opens with (lower case)
_ADJUNCT = frozenset(re.findall(r"\w+",
    "in on at during for from since by within throughout after before until last next this "
    "every each yesterday today tomorrow tonight",
))  # fmt: skip
# a word that makes it a clause (a subject pronoun, a finite verb's usual words) or a linking
# phrase ("in my opinion", "for example", "in fact"): its comma is not optional
_NOT_OPTIONAL = frozenset(re.findall(r"\w+",
    "i you he she it we they is are was were am be been has have had do does did can could "
    "will would shall should may might must opinion view fact addition general conclusion "
    "short summary instance example particular contrast comparison brief total other case end",
))  # fmt: skip
_FINITE = frozenset(("VBD", "VBZ"))  # "After the lesson finished," is a clause
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9'’-]*|[^\sA-Za-z0-9]")


def optional_added(source: str, draft: str | None, output: str) -> str:
    """`output` without each comma it added (one `source` has not there) after a sentence's
    first SHORT_INTRO words or fewer, where they open as a phrase of time or place does and
    hold no clause's or linking phrase's word, and the draft has no comma there either."""
    src, out = list(_TOKEN.finditer(source)), list(_TOKEN.finditer(output))
    ops = difflib.SequenceMatcher(
        None, [m.group().lower() for m in src], [m.group().lower() for m in out], autojunk=False
    ).get_opcodes()
    drop = []
    for tag, _, _, j1, j2 in ops:
        if tag != "insert" or j2 - j1 != 1 or out[j1].group() != ",":
            continue
        phrase = _opening(output, out, j1)
        if phrase and not _has_comma_after(draft, phrase):
            drop.append(out[j1].start())
    for at in reversed(drop):
        output = output[:at] + output[at + 1 :]
    return output


def _opening(text: str, toks: list[re.Match], j: int) -> list[str] | None:
    """The words before toks[j] back to their sentence's start, where they are a short
    phrase of time or place (`optional_added`); else None."""
    i = j
    while i > 0 and _WORD.fullmatch(toks[i - 1].group()):
        i -= 1
    words = [m.group().lower() for m in toks[i:j]]
    starts = i == 0 or toks[i - 1].group() in ".!?" or "\n" in text[toks[i - 1].end() : toks[i].start()]
    if not (starts and 1 <= len(words) <= SHORT_INTRO and words[0] in _ADJUNCT):
        return None
    if any(w in _NOT_OPTIONAL or morphology.tags(w) & _FINITE for w in words[1:]) or words[0] in _NOT_OPTIONAL:
        return None
    return words


def _has_comma_after(draft: str | None, words: list[str]) -> bool:
    """Whether `draft` has `words` (case aside) followed by a comma."""
    if not draft:
        return False
    pattern = r"\b" + r"\s+".join(map(re.escape, words)) + r"\s*,"
    return re.search(pattern, draft, re.I) is not None
