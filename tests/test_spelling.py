"""fix's spelling suggestions: what goes into the draft, and when."""

from __future__ import annotations

from flat_options import engine_options
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from pedit.app.jobs import Job
from pedit.app.options import EngineOptions
from pedit.app.templates import BUILTIN
from pedit.backends import open_backend
from pedit.tools import spelling
from pedit.tools.spelling import spellcheck

TEXT = "We recieved the letter.\n\n```python\nrecieve = 1  # teh value\n```\n"


def test_suggestions_touch_prose_and_comments_but_not_code():
    assert spellcheck(TEXT, "a.md") == TEXT.replace("We recieved", "We received")
    code = 'def recieve():\n    """Teh value."""  # a commment\n    return recieve\n'
    assert spellcheck(code, "a.py") == code.replace("Teh", "The").replace("commment", "comment")


def test_a_chunk_of_code_that_ends_inside_a_string_keeps_its_earlier_suggestions():
    piece = '# a commment\nx = """an unfinished\n'
    assert spellcheck(piece, "a.py") == piece.replace("commment", "comment")


def test_fix_drafts_with_the_suggestions_unless_told_not_to_or_without_a_keep_bias():
    backend = open_backend("reference")

    def draft(template="fix", **options):
        job = Job(
            backend,
            BUILTIN[template],
            "rename x" if template == "refactor" else None,
            engine_options(**options),
        )
        return job.request(TEXT, "a.md").draft

    assert draft() == spellcheck(TEXT, "a.md") != TEXT
    assert draft(spelling=False) is None
    assert draft(keep_bias=0.0) is None  # with β = 0 the draft cannot change the answer: the file drafts
    assert draft(keep_bias=-1.0) is None  # and β < 0 would push the model away from the suggestions
    assert draft("refactor") is None and draft("refactor", keep_bias=1.0) is None
    assert draft("refactor", keep_bias=1.0, spelling=True) == spellcheck(TEXT, "a.md")
    assert Job(backend, BUILTIN["fix"], None, EngineOptions()).request("All is well.\n", "a.md").draft is None


# words two of pyspellchecker's edits from a short dictionary word, as a reader's typo
_LETTERS = "abcdefghijklmnopqrstuvwxyz"
_EDIT = st.tuples(st.integers(0, 3), st.integers(0, 8), st.sampled_from(_LETTERS))


def _edited(word: str, edits) -> str:
    for op, at, letter in edits:
        i = at % (len(word) + 1)
        word = [word[:i] + word[i + 1 :], word[:i] + letter + word[i:], word[:i] + letter + word[i + 1 :],
                word[:i] + word[i + 1 : i + 2] + word[i : i + 1] + word[i + 2 :]][op]  # fmt: skip
    return word


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(["house", "water", "garden", "number", "people", "letter", "quiet", "spelling"]),
       st.lists(_EDIT, min_size=1, max_size=3))  # fmt: skip
def test_the_correction_is_pyspellcheckers_own(word, edits):
    """spelling.correction finds exactly pyspellchecker's candidates (one edit, else two:
    the Damerau–Levenshtein distance) and takes the most frequent of them."""
    typo = _edited(word, edits)
    assume(len(typo) > 1)
    words = spelling.checker()
    theirs = words.candidates(typo)
    ours = spelling.correction(typo)
    if theirs is None:
        assert ours is None
    else:
        frequency = words.word_frequency
        assert ours in theirs and frequency[ours] == max(frequency[w] for w in theirs)
        if not words.known(words.edit_distance_1(typo)) and typo not in words:
            assert spelling._two_edits(typo) == theirs


def test_equally_frequent_candidates_give_the_first_in_the_alphabet():
    """ "zyx" is one edit from "lyx", "nyx" and "pyx", each seen 50 times: "lyx", whatever
    order the set of candidates comes in."""
    words = spelling.checker()
    assert words.candidates("zyx") == {"lyx", "nyx", "pyx"}
    assert {words.word_frequency[w] for w in ("lyx", "nyx", "pyx")} == {50}
    assert spelling.correction("zyx") == "lyx"
