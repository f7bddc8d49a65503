"""A word's other forms, from its lemmas: the candidates of agreement and of verb forms.

lemminflect (Jascak's lemmatizer and inflector: a lexicon from the Specialist Lexicon, with
rules for words outside it, no spaCy model needed; 1.1 MB with its data) gives a word's
lemmas by part of speech and each lemma's inflections by Penn tag:

    "finds"  -> VERB find, NOUN find;  find -> VB find, VBZ finds, VBD found, VBN found, ...
    "children" -> NOUN child;          child -> NN child, NNS children

What it cannot say is which part of speech a word is *here*; the model says that, scoring
each candidate in context (confusables.py), as it scores a confusion set's members.

- `other_number`: a verb's other number (VBZ <-> VB/VBP: "need" <-> "needs", "goes" <->
  "go") and a noun's (NN <-> NNS: "child" <-> "children"), the "Reviews helps" and
  "It need to" of a learner's agreement.
- `forms_after`: the form a verb takes after a modal, "to" or "did" (VB: "can finds" ->
  "can find", "to went" -> "to go") and after a modal's or "to"'s "be" or a perfect's
  "have" (VBN: "can be merge" -> "can be merged", "has went" -> "has gone").

The verbs "be", "have" and "do" are left to the confusion sets (confusables.SETS), whose
pairs are their numbers already.
"""

from __future__ import annotations

from functools import cache

_OWN = frozenset(("be", "have", "do"))  # their numbers are confusion sets (confusables.SETS)
# a word's tags by number: (the singular's, the plural's)
_NUMBER = {"VERB": (("VBZ",), ("VBP", "VB")), "NOUN": (("NN",), ("NNS",))}


@cache
def _lemmas(word: str) -> dict[str, tuple[str, ...]]:
    from lemminflect import getAllLemmas

    return getAllLemmas(word)


@cache
def _inflections(lemma: str, upos: str) -> dict[str, tuple[str, ...]]:
    """Every inflection of `lemma` by tag; a tag the lexicon lacks ("merge" has no VBN) made
    by lemminflect's rules."""
    from lemminflect import getAllInflections, getInflection

    out = dict(getAllInflections(lemma, upos=upos))
    tags = ("VB", "VBD", "VBG", "VBN", "VBP", "VBZ") if upos == "VERB" else ("NN", "NNS")
    for tag in tags:
        if tag not in out:
            made = getInflection(lemma, tag=tag)
            if made:
                out[tag] = tuple(made)
    return out


def _forms(infl: dict[str, tuple[str, ...]], tags: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(w for t in tags for w in infl.get(t, ())))


@cache
def other_number(word: str) -> tuple[str, ...]:
    """`word`'s other number as a verb or a noun (lower case in, lower case out): the forms
    of the other number of each lemma it is a form of (none where both numbers are the word:
    "sheep")."""
    out: list[str] = []
    for upos, lemmas in _lemmas(word).items():
        if upos not in _NUMBER:
            continue
        singular, plural = _NUMBER[upos]
        for lemma in lemmas:
            if upos == "VERB" and lemma in _OWN:
                continue
            infl = _inflections(lemma, upos)
            # the lexicon lists a noun's singular among its plurals too ("fact": NNS facts,
            # fact), for its uncountable use: a word of both numbers is its singular
            if word in _forms(infl, singular):
                out += _forms(infl, plural)
            elif word in _forms(infl, plural):
                out += _forms(infl, singular)
    return tuple(w for w in dict.fromkeys(out) if w != word and w.isalpha())


def warm() -> None:
    """Load lemminflect and its lexicon (about 0.4 s), as a first word would."""
    _lemmas("finds")
    _inflections("find", "VERB")


def is_form(word: str, tags: tuple[str, ...]) -> bool:
    """Is `word` one of the `tags` forms of a verb it is a form of?"""
    return any(word in _forms(_inflections(lemma, "VERB"), tags) for lemma in _lemmas(word).get("VERB", ()))


def possessor(word: str) -> tuple[str, ...]:
    """The singulars of the nouns `word` is the plural of, and not a singular too (lower
    case in and out): "designers" -> ("designer",), "facts" -> ("fact",); none for a word of
    both numbers ("news") or a singular ("fact", though the lexicon lists it among its plurals)."""
    out: list[str] = []
    for lemma in _lemmas(word).get("NOUN", ()):
        infl = _inflections(lemma, "NOUN")
        if word in _forms(infl, ("NNS",)) and word not in _forms(infl, ("NN",)):
            out += _forms(infl, ("NN",))
    return tuple(w for w in dict.fromkeys(out) if w != word and w.isalpha())


def noun(word: str) -> bool:
    """Can `word` be a noun (lemminflect's lexicon or its rules)?"""
    return "NOUN" in _lemmas(word)


def known(word: str) -> bool:
    """Does the lexicon (or its rules) know `word` as any part of speech?"""
    return bool(_lemmas(word))


@cache
def forms_after(word: str, tag: str) -> tuple[str, ...]:
    """The `tag` forms ("VB" or "VBN") of the verbs `word` is a form of, where `word` is not
    one of them already ("finds" -> "find"; "merge" -> "merged"); none for a word that is
    no verb's form."""
    out: list[str] = []
    for lemma in _lemmas(word).get("VERB", ()):
        forms = _forms(_inflections(lemma, "VERB"), (tag,))
        if word in forms:
            return ()
        out += forms
    return tuple(w for w in dict.fromkeys(out) if w != word)


@cache
def tags(word: str) -> frozenset[str]:
    """The Penn tags `word` can have (lemminflect's lemmas, then their inflections): "went"
    -> {VBD}, "proud" -> {JJ}, "very" -> {RB, JJ}, "help" -> {VB, VBP, NN}."""
    from lemminflect import getAllInflections

    out: set[str] = set()
    for upos, lemmas in _lemmas(word).items():
        for lemma in lemmas:
            infl = _inflections(lemma, upos) if upos in ("VERB", "NOUN") else getAllInflections(lemma, upos=upos)
            out.update(tag for tag, forms in infl.items() if word in forms)
    return frozenset(out)
