"""The write guard judges edits, not word identity (pedit/checks/guard.py): a paragraph whose
words a fix corrected is kept, one replaced by other text is not; markup a fix adds is a
change nobody asked for. Real strings, no model; the CLI's refusals are in test_safety.py."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest

from pedit.bench.corpus import CORPUS, load_tasks
from pedit.checks import guard

ESSAY = (Path(__file__).parent.parent / "examples" / "essay.md").read_text()
ESSAY_FIXED = {  # its twelve errors (README), each corrected
    "Their is": "There are", "peoples enjoys": "people enjoy", "book take": "book takes",
    "it teach": "it teaches", "storys she choose": "stories she chose", "also help": "also helps",
    "You learns": "You learn", "you sees": "you see", "nobody interrupt": "nobody interrupts",
}  # fmt: skip


def fixed_essay() -> str:
    text = ESSAY
    for error, right in ESSAY_FIXED.items():
        assert text.count(error) == 1
        text = text.replace(error, right)
    return text


# --- 1. a corrected word is a kept word ---------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("This sentense have two mistake.\n", "This sentence has two mistakes.\n"),  # issue 26
        (
            "Their is many reasons why peoples enjoys reading.\n",
            "There are many reasons why people enjoy reading.\n",
        ),
        ("I recieve the lettre tomorow, she sayed.\n", "I receive the letter tomorrow, she said.\n"),
        (ESSAY, fixed_essay()),
    ],
)
def test_a_paragraph_with_dense_errors_is_fixed_not_dropped(old, new):
    assert guard.judge("n.md", old, new, judged=True) is None
    assert guard.Alignment(old, new).paragraph_lost() is None
    for p, q in zip(old.split("\n\n"), new.split("\n\n"), strict=True):  # one piece at a time too
        assert guard.judge_fix("n.md", p, q) is None


def test_every_learner_sentence_corrected_passes_alone_and_a_file_of_eight_is_refused_whole():
    """The learner sentences (issue 70): three to five errors a sentence, each sentence's
    correction passes as a file of its own (as a one-line file is fixed); eight of them in
    one file change more than WORDS of its words, which the guard refuses (forceable): a
    learner's essay this dense is fixed a sentence or a paragraph at a time (issue 70's
    open question, the note of 2026-12-07)."""
    tasks = [t for t in load_tasks() if t.multi]
    assert len(tasks) == 8
    for task in tasks:
        for old, new in zip(task.text().splitlines(True), task.reference().splitlines(True), strict=True):
            assert old != new and guard.judge("s.txt", old, new, judged=True) is None, (task.id, old)
    refused = [guard.judge(t.file, t.text(), t.reference(), judged=True) for t in tasks]
    assert sum(r is not None and r.forceable and "more than 25%" in r.reason for r in refused) == 7


def test_every_correct_fix_of_the_benchmark_passes():
    """The corpus's fix inputs with their introduced errors undone (SOURCES.md): whole, and
    paragraph by paragraph for the prose files (a paragraph cut out of a docstring is no
    piece of Python to lex alone: see guard.judge_fix)."""
    tasks = [t for t in load_tasks() if t.command == "fix" and t.reference() is not None and not t.multi]
    assert len(tasks) >= 10
    for task in tasks:
        old, new = task.text(), task.reference()
        assert old != new and guard.judge(task.file, old, new, judged=True) is None, task.id
        if not task.file.endswith(".py"):
            for p, q in zip(re.split(r"\n\s*\n", old), re.split(r"\n\s*\n", new), strict=True):
                assert guard.judge_fix(task.file, p, q) is None, (task.id, p)


def prose_pieces(size: int = 20) -> list[str]:
    words = " ".join(p.read_text() for p in sorted(CORPUS.glob("*.txt"))).split()
    return [" ".join(words[k : k + size]) for k in range(0, len(words) - size + 1, size)]


def test_a_paragraph_replaced_by_other_text_is_still_dropped():
    """Any 20-word piece of the benchmark's prose put in place of another (its 5 successors
    from the list, so pieces of the same book and of others): the fix is refused, however
    many of the other piece's words are close to the old one's ("then" for "the")."""
    pieces = prose_pieces()
    assert len(pieces) > 50
    for i, piece in enumerate(pieces):
        for other in (pieces[(i + k) % len(pieces)] for k in range(1, 6)):
            old = f"A first paragraph that stays as it is.\n\n{piece}\n\nAnd a last one, kept too.\n"
            found = guard.judge("a.md", old, old.replace(piece, other), judged=True)
            assert found and found.reason.startswith("a fix drops a paragraph ("), (piece, other)


@pytest.mark.parametrize(
    ("x", "y"),
    [("sentense", "sentence"), ("mistake.", "mistakes."), ("Their", "There"), ("storys", "stories"),
     ("recieve", "receive"), ("nieghbor", "neighbor"), ("dont", "don't"), ("year's", "years'"),
     ("THE", "the"), ("(quick,", "Quick"), ("weather", "whether")],
)  # fmt: skip
def test_close_spellings_are_corrections(x, y):
    assert guard.corrected(x, y) and guard.corrected(y, x)


@pytest.mark.parametrize(
    ("x", "y"),
    [("have", "has"), ("is", "are"), ("the", "then"), ("he", "she"), ("was", "were"), ("wrote", "worse"),
     ("house", "home"), ("paragraph", "photograph")],
)  # fmt: skip
def test_other_words_are_not(x, y):
    assert not guard.corrected(x, y) and not guard.corrected(y, x)


def longest(a: list[str], b: list[str]) -> int:
    """The most order-keeping pairs of corrected words, by trying every way (small lists)."""
    best = 0
    for n in range(1, min(len(a), len(b)) + 1):
        for i in itertools.combinations(range(len(a)), n):
            for j in itertools.combinations(range(len(b)), n):
                if all(guard.corrected(a[x], b[y]) for x, y in zip(i, j, strict=True)):
                    best = n
    return best


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Their is many reason", "There are many reasons"),
        ("the storys she choose", "she chose the stories"),
        ("a word word here there", "words here there word"),
        ("one two three", "four five six"),
    ],
)
def test_pairs_are_the_most_corrections_in_order(a, b):
    a, b = a.split(), b.split()
    pairs = guard._pairs(a, b)
    assert len(pairs) == longest(a, b)
    assert all(guard.corrected(a[i], b[j]) for i, j in pairs)
    assert all(i1 < i2 and j1 < j2 for (i1, j1), (i2, j2) in itertools.pairwise(pairs))


def test_a_fix_that_respells_every_word_changes_too_many():
    """A corrected word is still a changed word for the 25% rule: Title Case everywhere
    keeps every paragraph (each word a correction of itself) and is refused all the same."""
    titled = re.sub(r"\b[a-z]", lambda m: m.group().upper(), ESSAY)
    words = guard.Alignment(ESSAY, titled)
    assert words.paragraph_lost() is None
    assert guard.judge("essay.md", ESSAY, titled, judged=True).reason.startswith("a fix changes ")


# --- 2. markup a fix adds ------------------------------------------------------------------


DOC = '''def open_db(filename, flag="c", writeback=False):
    """Open a persistent dictionary for reading and writing.

    If the optional writeback parameter is set to True, every entry acessed is also
    cached in memory, and written back on sync() and close(). Keys are strings;
    a value can be any object that pickle can handle, such as anitem of a list.
    """
    return Shelf(filename, flag, writeback)
'''
DOC_FIXED = DOC.replace("acessed", "accessed").replace("anitem", "an item")


@pytest.mark.parametrize(
    ("name", "old", "new", "why"),
    [
        ("shelf.py", DOC, DOC_FIXED.replace("writeback parameter", "`writeback` parameter"),
         'a fix adds markup (backticks: "`writeback` parameter is set to True,…")'),
        ("shelf.py", DOC, DOC_FIXED.replace("sync() and close()", "``sync()`` and ``close()``"), "backticks"),
        ("notes.md", "It is realy important.\n", "It is **really** important.\n", "emphasis"),
        ("notes.txt", "It is realy important.\n", "It is _really_ important.\n", "emphasis"),
        ("notes.txt", "Shopping list\n\nEggs, milk.\n", "# Shopping list\n\nEggs, milk.\n", "headings"),
        # a level: no more headings, but the skeleton's heading marker changed
        ("notes.md", "## Setup\n\nRun it.\n", "### Setup\n\nRun it.\n",
         "a fix changes the heading marker on line 1 ('##' -> '###')"),
        ("notes.md", "#hashtag day\n", "# hashtag day\n", "headings"),
        ("tags.py", "#hashtag day\nx = 1\n", "# hashtag day\nx = 1\n", None),  # a comment in code
        ("notes.md", "Buy eggs and milk and bread.\n", "Buy:\n- eggs\n- milk\n- bread\n", "list items"),
        ("notes.md", "First, boil. Then, eat.\n", "1. Boil.\n2. Eat.\n", "list items"),
    ],
)  # fmt: skip
def test_markup_a_fix_adds_is_refused(name, old, new, why):
    refusal = guard.judge(name, old, new, judged=True)
    found = refusal.reason if refusal else None
    if why is None or why.startswith("a fix"):
        assert found == why
    else:
        assert found.startswith(f"a fix adds markup ({why}: "), found
    assert guard.judge(name, old, new, judged=False) is None  # asked for, it is no fault


MARKED = """# Using `pedit`

Run **pedit fix** on a file; it fixes teh *prose* only:

- keeps `snake_case` names and __init__ as they are
- writes nothing without -y
"""


@pytest.mark.parametrize(
    "new",
    [
        MARKED.replace("teh", "the"),
        MARKED.replace("teh", "the").replace("- writes nothing", "- it writes nothing"),
        MARKED.replace("fixes teh *prose* only", "fixes only the *prose*"),  # a mark moved, not added
        MARKED.replace("teh", "the").replace("on a file;", "on a file's text;"),  # an apostrophe
    ],
)
def test_markup_kept_or_moved_is_no_change(new):
    assert guard.added_markup(MARKED, new) is None
    assert guard.judge("notes.md", MARKED, new, judged=True) is None


def test_quotes_apostrophes_and_code_are_not_markup():
    old = 'def f(*args, **kwargs):\n    # dont use __init__ here, its "wrong"\n    return a_b * 2\n'
    new = old.replace("dont", "don't").replace("its", "it's").replace('"wrong"', "'wrong'")
    assert guard.judge("f.py", old, new, judged=True) is None
    # in plain text, the lines under one that ends with ":" are an indented block: skeleton
    refused = guard.judge("f.txt", old, new, judged=True)
    assert refused is not None and refused.reason.startswith("a fix changes the indented block on line 2")
    code = "def f(cache_size=0):\n    # the cachesize argument, times 2\n    return cache_size * 2\n"
    named = code.replace("the cachesize", "the cache_size")  # the name spelled as the code does
    assert guard.judge("f.py", code, named, judged=True) is None


def test_a_docstring_fix_without_markup_passes():
    assert guard.judge("shelf.py", DOC, DOC_FIXED, judged=True) is None


# --- 3. the fix checks, on their own ---------------------------------------------------------


CASES = [  # (name, old, new): fixes good and bad, files that parse and that do not
    ("n.md", "This sentense have two mistake.\n", "This sentence has two mistakes.\n"),
    (
        "n.md",
        "One paragraph of five words.\n\nAnother of five words here.\n",
        "One paragraph of five words.\n",
    ),
    ("shelf.py", DOC, DOC_FIXED),
    ("shelf.py", DOC, DOC_FIXED.replace("writeback parameter", "`writeback` parameter")),
    ("shelf.py", DOC, DOC.replace('"""\n    return', "\n    return")),  # the docstring left open
    ("a.py", "x = 1\n", "x = = 1\n"),
    ("a.json", '{"a": "teh"}\n', '{"a": "the"}\n'),
    ("a.json", '{"a": "teh"}\n', '{"a": "the",}\n'),
    ("a.py", "    return x  # teh value\n", "    return x  # the value\n"),  # a piece: no parse
]


@pytest.mark.parametrize(("name", "old", "new"), CASES)
def test_reason_is_the_parse_check_then_the_fix_checks(name, old, new):
    found = guard.parse_error(name, old, new)
    parse = guard.Refusal(reason=found) if found else None
    assert guard.judge(name, old, new, judged=True) == (parse or guard.judge_fix(name, old, new))
    assert guard.judge(name, old, new, judged=False) == parse
    assert guard.judge_fix(name, old, old) is None


def test_the_fix_checks_judge_a_piece_that_does_not_parse_alone():
    piece = "    return x  # teh value\n"  # a line of a function: not Python on its own
    assert guard.judge_fix("a.py", piece, piece.replace("teh", "the")) is None
    assert guard.judge_fix("a.py", piece, piece.replace("x  #", "y  #")).reason.startswith(
        "a fix changes code"
    )
    assert guard.judge_fix("a.py", piece, piece.replace("teh value", "`x`")).reason.startswith(
        "a fix adds markup"
    )


@pytest.mark.parametrize("judged", [True, False])
def test_an_empty_answer_is_never_a_rewrite(judged):
    """Every template, judged or not: an empty answer (or blank lines) for a file with text is refused,
    and `never` says no flag may write it; a file that was empty may stay so."""
    for new in ("", "\n", "  \n\n"):
        assert guard.never("Some text.\n", new) == "the answer is empty"
        empty = guard.Refusal(reason="the answer is empty", forceable=False)
        assert guard.judge("a.md", "Some text.\n", new, judged=judged) == empty
        assert guard.judge("a.py", "x = 1\n", new, judged=judged) == empty
    assert guard.never("\n", "") is None and guard.never("", "") is None
    assert guard.never("Some text.\n", "Other text.\n") is None
