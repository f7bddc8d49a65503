"""Harper's grammar suggestions for fix's draft (pedit/tools/grammarcheck.py), on real text."""

from __future__ import annotations

import io
import threading
import tokenize
from pathlib import Path

import pytest

from pedit.bench.corpus import load_tasks
from pedit.tools import grammarcheck as gc
from pedit.tools.spelling import spellcheck

ESSAY = (Path(__file__).resolve().parent.parent / "examples" / "essay.md").read_text(encoding="utf-8")
FIX_TASKS = [t for t in load_tasks() if t.command == "fix"]


def test_agreement_is_fixed():
    assert gc.suggest("They has asked what I got by it.\n", "a.txt") == "They have asked what I got by it.\n"
    # Harper 0.2.0 has no rule for "some" + verb: walden.txt's "Some has asked" is left to the model
    assert gc.suggest("Some has asked what I got by it.\n", "a.txt") == "Some has asked what I got by it.\n"


def test_the_essay_gets_harpers_four_right_changes_and_not_its_wrong_ones():
    # not "# Why I like Reading" (title case) nor "new" -> "knew", both Harper's too
    want = (
        ESSAY.replace("Their is", "There is").replace("storys", "stories")
        .replace("You learns", "You learn").replace("you sees", "you see")
    )  # fmt: skip
    assert gc.suggest(ESSAY, "essay.md") == want
    found = gc.kinds_of_changes(ESSAY, "essay.md")
    assert [(c.kind, ESSAY[c.start : c.end], c.replacement) for c in found] == [
        ("Grammar", "Their", "There"),
        ("Grammar", "storys", "stories"),
        ("Agreement", "learns", "learn"),
        ("Agreement", "sees", "see"),
    ]


def test_a_doubled_word_loses_one_copy_even_where_an_overlapping_lint_says_otherwise():
    text = "At present I am a a sojourner in civilized life again, and it is is genius.\n"
    want = "At present I am a sojourner in civilized life again, and it is genius.\n"
    assert gc.suggest(text, "walden.txt") == want
    # "a a": Harper's AnA lint ("a" -> "an") overlaps the repetition; the longer lint wins
    assert gc.suggest(text, "walden.txt", kinds={"Repetition", "Miscellaneous"}) == want
    # "said the the": Harper's dedup keeps its Typo lint ("that the"), a kind not chosen
    assert gc.suggest("The people said the the thing.\n", "a.txt") == "The people said the thing.\n"


def test_spans_are_code_points():
    text = "Café naïve 😀 — I am a a sojourner.\n"
    assert gc.suggest(text, "a.txt") == "Café naïve 😀 — I am a sojourner.\n"


def test_a_lint_across_a_line_break_of_a_paragraph_counts_and_keeps_the_break():
    # the line break is skeleton (a fix keeps the file's lines): the second word goes
    text = "A good book takes you to the\nthe other world.\n"
    assert gc.suggest(text, "a.md") == "A good book takes you to the\nother world.\n"
    assert gc.suggest("I read the\n  the book.\n", "a.txt") == "I read the\n  book.\n"


def test_markdown_code_and_urls_are_left_alone():
    text = (
        "Run the the tool.\n\nUse `a a` here, see <https://example.com/is/is>.\n\n"
        "```\nit is is code\n```\n\n    the the indented code\n"
    )
    assert gc.suggest(text, "a.md") == text.replace("Run the the", "Run the")


def test_rst_literals_and_directives_are_left_alone():
    text = "Run the the tool with ``a a``.\n\nExample::\n\n    it is is code\n\n.. note:: the the end\n"
    assert gc.suggest(text, "a.rst") == text.replace("Run the the", "Run the")


PY = (
    '''def greet(name):
    """Return a a greeting. They has a name.

    This can be use to make triple-quoted strings line up.
    """
    # the the name is is checked here
    message = "it is is data, a a string"
    return message.format(name=name)  # You learns it
'''
    + "\n\ndef wave(name):\n    r'''They has a hand.'''\n"
)  # Harper reads "'''They" as no pronoun


def _code_tokens(text: str) -> list[str]:
    """The tokens of `text` but its comments and docstrings (the strings in triple quotes)."""
    toks = [t for t in tokenize.generate_tokens(io.StringIO(text).readline) if t.type != tokenize.COMMENT]
    return [t.string for t in toks if not (t.type == tokenize.STRING and t.string[-3:] in ('"""', "'''"))]


def test_python_comments_and_docstrings_only():
    want = (
        PY.replace("a a greeting", "a greeting").replace("They has", "They have")
        .replace("be use to", "be used to").replace("the the name is is", "the name is")
        .replace("You learns", "You learn").replace("r'''They has", "r'''They have")
    )  # fmt: skip
    out = gc.suggest(PY, "greet.py")
    assert out == want
    assert _code_tokens(out) == _code_tokens(PY)  # the data string's "is is" and "a a" stay


@pytest.mark.parametrize("task", FIX_TASKS, ids=lambda t: t.id)
def test_a_correct_file_is_returned_unchanged_and_suggestions_are_idempotent(task):
    ref, text = task.reference(), task.text()
    assert gc.suggest(ref, task.file) == ref  # MassNouns ("gave a disgust" -> "gave disgust") is not chosen
    once = gc.suggest(text, task.file)
    assert gc.suggest(once, task.file) == once


def test_no_kinds_no_harper():
    assert gc.suggest(ESSAY, "essay.md", kinds=()) == ESSAY
    assert gc.kinds_of_changes(ESSAY, "essay.md", kinds=()) == []
    assert gc.draft(ESSAY, "essay.md", kinds=()) == spellcheck(ESSAY, "essay.md")


def test_the_draft_is_harper_then_spelling_on_what_harper_left():
    text = "I still remember the storys she told, at a a pleasent distance.\n"
    assert spellcheck(text, "a.txt") == text.replace("storys", "story").replace("pleasent", "pleasant")
    want = "I still remember the stories she told, at a pleasant distance.\n"
    assert gc.draft(text, "a.txt") == want


def test_threads_share_the_linter_safely():
    errors, outs, text = [], [], ESSAY * 20  # long enough that unguarded calls do meet

    def run():
        try:
            outs.extend(gc.suggest(text, "essay.md") for _ in range(10))
        except Exception as e:  # a harper.Linter called from two threads at once raises RuntimeError
            errors.append(e)

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and len(set(outs)) == 1 and len(outs) == 40


def test_warm_builds_the_linter_and_the_dictionary_once():
    """What the CLI builds while the model loads: afterwards both are the ones first use gets."""
    from pedit.tools import spelling

    gc.warm()
    linter, words, lengths = gc._linter(), spelling.checker(), spelling.by_length()
    gc.warm()
    assert gc._linter() is linter and spelling.checker() is words and spelling.by_length() is lengths
    assert gc.draft("Their is a cat.", "a.txt").startswith("There")


def test_a_python_files_code_in_prose_is_left_alone():
    """Doctest lines are code, a run of comments is one paragraph whose first word may be
    lower case, and a word written as code ("a[k]", "heap.sort()") is not prose."""
    src = (
        'def f(a):\n'
        '    """Return the the value.\n\n'
        '    >>> f(a) is is None\n'
        '    True\n'
        '    """\n'
        '    # we find the\n'
        '    # denominator here. the next one is\n'
        '    # a odd one\n'
        '    return a[0]  # raises IndexError\n'
    )  # fmt: skip
    rules = set(gc.DEFAULT_RULES) | {"SentenceCapitalization", "AnA", "RepeatedWords"}
    found = [
        (src[c.start : c.end], c.replacement, c.rule) for c in gc.kinds_of_changes(src, "f.py", kinds=rules)
    ]
    # the docstring's "the the", the comment's ". the next" and "a odd": not the doctest's
    # "is is", nor "we", "denominator" or "raises" at a comment line's start
    assert found == [("the the", "the", "RepeatedWords"), ("the", "The", "SentenceCapitalization"),
                     ("a", "an", "AnA")]  # fmt: skip
    prose = "Heaps are arrays for which a[k] <= a[2*k+1], kept by heap.sort() as a heap.\n"
    assert gc.kinds_of_changes(prose, "a.txt", kinds={"AnA", "SentenceCapitalization"}) == []
