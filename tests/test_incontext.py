"""Issue 70's candidates (pedit/tools/incontext.py): a misspelling's neighbours scored in its
sentence, and a missing word put in. Which swaps are proposed, and which `chosen` takes
from the model's scores; the rewrite that verifies them is the same as for every other swap
(test_confusables.py: lossless on the reference backend)."""

from __future__ import annotations

from pedit.tools import confusables, fix, incontext
from pedit.tools.confusables import apply, chosen
from pedit.tools.options import ToolOptions
from pedit.tools.spelling import correction


def spelled(text: str, name: str = "a.txt") -> list[tuple[str, str]]:
    return [(s.word, s.replacement) for s in incontext.spelling(text, name)]


def test_a_misspelling_gets_the_spellings_choice_first_and_the_other_words_near_it():
    text = "We painted ther house last summer.\n"
    got = spelled(text)
    assert got[0] == ("ther", correction("ther")) == ("ther", "the")
    assert ("ther", "their") in got and ("ther", "there") in got
    assert len(got) == len(set(got)) <= incontext.SPELL_CANDIDATES
    assert all(s.kind == "spell" and text[s.start : s.end] == "ther" for s in incontext.spelling(text, "a.txt"))


def test_a_known_word_a_capitalised_correction_and_code_are_left_as_the_spelling_leaves_them():
    assert spelled("The house was big and their dog was old.\n") == []
    assert spelled("Ther house.\n")[0] == ("Ther", "The")  # the case of its first letter kept
    assert spelled("Run `ther` and see <https://ther.example>.\n", "a.md") == []


def test_after_a_modal_a_misspellings_neighbours_come_with_their_base_form():
    """ "I will writeing": "writing" is one edit away, but "will" asks for "write"."""
    got = [r for _, r in spelled("I will writeing a letter.\n")]
    assert got[0] == "writing" and "write" in got
    assert "write" not in [r for _, r in spelled("I like writeing letters.\n")]


def test_a_word_the_texts_variety_spells_so_is_not_a_candidate():
    text = "The colour of the harbour was grey, and the theatre was full of neighbours.\n"
    unknown = {w.lower() for w in incontext.unknown_words(text, "a.txt")}
    accepted = fix._accepted(text, "a.txt", ToolOptions(dialect="british"))
    assert accepted and accepted <= unknown
    assert {s.word.lower() for s in incontext.spelling(text, "a.txt")} == unknown
    assert {s.word.lower() for s in incontext.spelling(text, "a.txt", accepted)} == unknown - accepted


def test_the_likeliest_neighbour_above_the_threshold_is_taken_one_per_word():
    text = "We painted ther house.\n"
    swaps = incontext.spelling(text, "a.txt")
    deltas = [9.0 if s.replacement == "their" else 6.0 for s in swaps]
    assert [s.replacement for s in chosen(text, swaps, deltas)] == ["their"]
    assert apply(text, chosen(text, swaps, deltas)) == "We painted their house.\n"
    low = [confusables.SPELL_THRESHOLD - 0.1] * len(swaps)
    assert chosen(text, swaps, low) == []  # none likelier by the margin: the spelling's draft stands


def test_a_missing_be_pronoun_or_to_is_an_insertion_before_a_word_that_can_follow_it():
    text = "My parents very proud of me. I want go home.\n"
    swaps = incontext.missing(text, "a.txt")
    assert all(s.kind == "missing" and s.start == s.end for s in swaps)
    at = {(text[s.start :].split()[0], s.replacement) for s in swaps}
    assert ("very", "are ") in at and ("go", "to ") in at
    are = next(s for s in swaps if s.replacement == "are " and text[s.start :].startswith("very"))
    assert apply(text, [are]) == "My parents are very proud of me. I want go home.\n"
    # never after a determiner, a preposition or a form of be; never at a sentence's start
    for s in swaps:
        prev = text[: s.start].rstrip().split()[-1]
        assert prev.lower().strip(".") not in ("my", "of", "the", "a", "is", "are", "to") and not prev.endswith(".")


def test_a_missing_word_is_taken_only_above_its_own_threshold():
    text = "My parents very proud of me.\n"
    swaps = incontext.missing(text, "a.txt")
    below = [confusables.MISSING_THRESHOLD - 0.1 if s.replacement == "are " else None for s in swaps]
    assert chosen(text, swaps, below, threshold=0.0) == []
    above = [confusables.MISSING_THRESHOLD + 0.1 if s.replacement == "are " else None for s in swaps]
    assert [s.replacement for s in chosen(text, swaps, above)] == ["are "]


def test_the_fixs_swaps_include_them_as_the_options_say():
    from pedit.request import EditRequest

    req = EditRequest("We painted ther house. My parents very proud.\n", "fix", "a.txt", "")
    kinds = {s.kind for s in fix.swaps_of(req, ToolOptions())}  # on by default (options.py)
    assert {"spell", "missing"} <= kinds
    off = {s.kind for s in fix.swaps_of(req, ToolOptions(context_spelling=False, missing=False))}
    assert not {"spell", "missing"} & off
