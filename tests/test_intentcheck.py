"""The checks of a refactor's intent (pedit/checks/intentcheck.py) on the quality corpus'
real files: every hand-written right answer passes its intent's check, the unchanged file
fails it, and the tools' own proposals pass."""

from __future__ import annotations

from pathlib import Path

import pytest

from pedit.app.refactor import fstrings
from pedit.bench.corpus import CORPUS, load_tasks
from pedit.checks.intentcheck import check, undefined
from pedit.tools.intent import OTHER, RENAME, parse
from pedit.tools.rename import rename

REFACTORS = [t for t in load_tasks() if t.command == "refactor"]


def exact(task, intent):
    if intent.kind != RENAME:
        return None
    return rename(task.text(), task.file, intent.renames, docs=intent.docs, within=intent.within)


@pytest.mark.parametrize("task", REFACTORS, ids=[t.id for t in REFACTORS])
def test_the_right_answer_passes_and_the_unchanged_file_fails(task):
    intent = parse(task.instruction)
    answer = next((CORPUS / "answers").glob(task.id + ".*")).read_text()
    assert check(intent, task.file, task.text(), answer, exact(task, intent)).passed
    unchanged = check(intent, task.file, task.text(), task.text(), exact(task, intent))
    assert unchanged.passed == (intent.kind == OTHER)  # "other" checks only that it parses


@pytest.mark.parametrize("task", [t for t in REFACTORS if "fstrings" in t.id], ids=lambda t: t.id)
def test_flynts_conversion_passes_the_fstrings_check(task):
    proposal = fstrings(task.text())
    assert proposal is not None
    assert check(parse(task.instruction), task.file, task.text(), proposal).passed


def test_a_name_bound_nowhere_fails_every_python_check():
    before = "def f(x):\n    return g(x)\n\ndef g(y):\n    return y\n"
    after = before.replace("def g(y)", "def helper(y)")  # g() still called, no longer defined
    assert undefined(before, after) == "it uses g, defined nowhere (a NameError when it runs)"
    verdict = check(parse("convert the loops to comprehensions"), "m.py", before, after)
    assert (verdict.check, verdict.passed) == ("parse", False)
    assert undefined("from os import *\nx = path\n", "from os import *\ny = sep\n") is None  # unknowable


def test_a_rename_asked_in_the_docstrings_too_leaves_no_old_word_there():
    src = 'def f(lo):\n    """lo is the bound."""\n    return lo\n'
    intent = parse("rename lo to low, in the docstring too")
    tool = rename(src, "m.py", intent.renames, docs=True)
    half = src.replace("f(lo)", "f(low)").replace("return lo", "return low")
    verdict = check(intent, "m.py", src, half, tool)
    assert not verdict.passed and "leaves 'lo' in a docstring" in verdict.reason
    assert check(intent, "m.py", src, tool, tool).passed


def test_the_corpus_answers_exist_for_every_refactor():
    assert {p.name.split(".")[0] for p in Path(CORPUS / "answers").iterdir()} >= {t.id for t in REFACTORS}


def test_an_fstring_that_drops_a_format_spec_is_not_flynts_and_fails():
    """The report's datetime task: a model wrote `{hh}` for `%02d` and lost the zero."""
    before = 'def clock(h, m):\n    return "%02d:%02d" % (h, m)\n'
    intent = parse("use f-strings")
    tool = fstrings(before)
    assert tool == 'def clock(h, m):\n    return f"{int(h):02}:{int(m):02}"\n'  # %d's int() kept
    lost = 'def clock(h, m):\n    return f"{h}:{m}"\n'
    verdict = check(intent, "m.py", before, lost, tool)
    assert not verdict.passed and "not the f-string flynt makes" in verdict.reason
    assert check(intent, "m.py", before, tool, tool).passed


def test_a_rename_whose_use_a_local_of_the_new_name_would_take_fails_the_rename_check():
    """The exact rename itself fails here: in f, `cell_len(s)` renamed would call the local
    int (rich's segment.py had this shape); a use outside any such scope passes."""
    before = (
        "def cell_len(x):\n    return len(x)\n\ndef f(s):\n    cell_length = 3\n"
        "    return cell_len(s) + cell_length\n"
    )
    after = before.replace("cell_len(", "cell_length(")
    verdict = check(parse("rename cell_len to cell_length"), "m.py", before, after, after)
    assert not verdict.passed
    assert verdict.reason == (
        "the scope at line 4 has a cell_length of its own: renamed, its use of cell_len would become it"
    )
    fine = before.replace("cell_length = 3", "n = 3").replace("+ cell_length", "+ n")
    renamed = fine.replace("cell_len(", "cell_length(")
    assert check(parse("rename cell_len to cell_length"), "m.py", fine, renamed, renamed).passed
