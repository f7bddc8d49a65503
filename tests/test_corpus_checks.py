"""Every refactor task's checks, held to an answer written by hand (corpus/answers/<id>.py):
the right answer passes them all, the unchanged file fails at least one, and each kind of
check fails the wrong answer it exists to catch. No model."""

from __future__ import annotations

import re

import pytest

from pedit.bench.checks import run_checks
from pedit.bench.corpus import CORPUS, load_tasks

ANSWERS = CORPUS / "answers"
REFACTOR = [t for t in load_tasks() if t.command == "refactor"]
TASKS = {t.id: t for t in REFACTOR}


def answer(task_id: str) -> str:
    return (ANSWERS / f"{task_id}.py").read_text(encoding="utf-8")


def failed(task_id: str, output: str, **spec) -> set[str]:
    task = TASKS[task_id]
    return {c.name for c in run_checks(task.text(), output, {**task.check, **spec}) if not c.passed}


def swap(text: str, old: str, new: str) -> str:
    """`text` with its one `old` replaced (a wrong answer made from a right one)."""
    assert text.count(old) == 1, old
    return text.replace(old, new)


def spoilt(task_id: str, old: str, new: str) -> str:
    """The right answer to `task_id` with one thing in it made wrong."""
    return swap(answer(task_id), old, new)


def test_every_refactor_task_is_checked_and_answered():
    assert len(REFACTOR) >= 20 and all(t.check for t in REFACTOR)
    assert {p.name for p in ANSWERS.iterdir()} == {f"{t.id}.py" for t in REFACTOR}
    kinds = {
        "rename": [t for t in REFACTOR if "rename" in t.check],
        "hints": [t for t in REFACTOR if "hints" in t.check],
        "f-strings": [t for t in REFACTOR if "fstrings" in t.check],
        "extract": [t for t in REFACTOR if "calls" in t.check and "absent" not in t.check],
        "logging": [t for t in REFACTOR if "print" in t.check.get("absent", ())],
    }
    assert {k: len(v) >= 3 for k, v in kinds.items()} == dict.fromkeys(kinds, True)
    assert len(kinds["rename"]) >= 8 and any("rename_in" in t.check for t in kinds["rename"])
    assert len(REFACTOR) / 4 <= sum(t.heldout for t in REFACTOR) <= len(REFACTOR) / 2


@pytest.mark.parametrize("task", REFACTOR, ids=lambda t: t.id)
def test_the_right_answer_passes_and_no_change_fails(task):
    right = run_checks(task.text(), answer(task.id), task.check)
    assert [c for c in right if not c.passed] == []
    assert not all(c.passed for c in run_checks(task.text(), task.text(), task.check))


def test_a_rename_counts_tokens_not_text():
    # the old name inside longer names (prefixed_lines, itermonthdays2) is another name
    src = TASKS["code-textwrap-param-rename"].text()
    text_replace = src.replace("prefix", "padding")  # paddinged_lines: a line no rename touches
    assert failed("code-textwrap-param-rename", text_replace) == {"rename complete", "no unrelated lines"}
    src = TASKS["code-calendar-method-rename"].text()
    text_replace = src.replace("itermonthdays", "iter_day_numbers")  # iter_day_numbers4 too
    everything = {"rename complete", "behaviour kept", "no unrelated lines"}
    assert failed("code-calendar-method-rename", text_replace) == everything
    # a method renamed at its def but not at its call site `self.enterabs(...)`
    half = swap(TASKS["code-sched-method-rename"].text(), "def enterabs(", "def enter_at(")
    assert failed("code-sched-method-rename", half) == {"rename complete", "behaviour kept"}
    # a parameter that shadowed a builtin: one use left behind now reads the builtin
    left = spoilt("code-compileall-rename", "os.listdir(directory)", "os.listdir(dir)")
    assert failed("code-compileall-rename", left) == {"rename complete", "behaviour kept"}


def test_words_hold_the_docstrings_comments_and_strings():
    code_only = spoilt("code-graphlib-class-rename", "catch the GraphCycleError", "catch the CycleError")
    assert failed("code-graphlib-class-rename", code_only) == {"rename complete"}
    assert failed("code-graphlib-class-rename", code_only, words=False) == set()


def test_a_rename_in_one_function_leaves_the_others_alone():
    everywhere = re.sub(r"\bresult\b", "best", TASKS["code-heapq-local-rename"].text())
    assert failed("code-heapq-local-rename", everywhere) == {"rename complete", "no unrelated lines"}
    assert failed("code-heapq-local-rename", everywhere, rename_in=None, scope=None) == set()
    src = TASKS["code-posixpath-join-rename"].text()
    every_p = re.sub(r"\bp\b", "rest", re.sub(r"\ba\b", "first", src))
    assert "rename complete" in failed("code-posixpath-join-rename", every_p)
    only_a = spoilt("code-posixpath-join-rename", "def join(first, *rest):", "def join(first, *p):")
    assert failed("code-posixpath-join-rename", only_a) == {"rename complete", "behaviour kept"}
    gone = spoilt("code-heapq-local-rename", "def nsmallest(", "def n_smallest(")
    assert "rename complete" in failed("code-heapq-local-rename", gone)


def test_f_strings_leave_no_old_formatting_and_keep_the_messages():
    one_left = spoilt("code-difflib-fstrings", "f'{beginning},{length}'", "'{},{}'.format(beginning, length)")
    assert failed("code-difflib-fstrings", one_left) == {"f-strings"}
    # strftime's "%z" is not %-formatting: it stays, and its line is out of scope
    strftime = spoilt("code-email-fstrings", 'strftime("%z")', 'strftime(f"%z")')
    assert failed("code-email-fstrings", strftime) == {"no unrelated lines"}
    # str() instead of an f-string: the formatting is gone, but no f-string came
    concat = spoilt("code-email-fstrings", "f'Invalid date value or format \"{data}\"'",
                    "'Invalid date value or format \"' + str(data) + '\"'")  # fmt: skip
    assert failed("code-email-fstrings", concat) == {"f-strings"}
    # a message reworded: only `messages = true` sees it
    reworded = spoilt("code-datetime-fstrings", "f\"can't compare '", "f\"cannot compare '")
    assert failed("code-datetime-fstrings", reworded) == {"behaviour kept"}
    assert failed("code-datetime-fstrings", reworded, messages=False) == set()


def test_f_strings_count_apart_from_their_format_specs():
    source, output = "x = '%*d' % (3, 1)\n", "w = 3\nx = f'{1:{w}d}'\n"
    assert [c.passed for c in run_checks(source, output, {"fstrings": 1})] == [True, True]
    assert [c.passed for c in run_checks(source, output, {"fstrings": 2})] == [True, False]


def test_an_extract_moves_the_code_out():
    src = TASKS["code-closematches-extract"].text()
    loop = src[src.index("    result = []\n") : src.index("    # Move the best scorers")]
    call = "    result = _good_matches(word, possibilities, cutoff)\n"
    inline = spoilt("code-closematches-extract", call, loop)  # the helper defined, not used
    unused = {"get_close_matches calls _good_matches", "no loop in get_close_matches"}
    assert failed("code-closematches-extract", inline) == unused
    wrong = spoilt("code-normpath-extract", "new_comps[-1] == dotdot", "new_comps[-1] != dotdot")
    assert failed("code-normpath-extract", wrong) == {"behaviour kept"}


def test_logging_leaves_no_print_and_may_drop_blank_lines():
    one_left = spoilt("code-compileall-logging", "logger.info('Listing %r...', dir)", "print('Listing', dir)")
    assert failed("code-compileall-logging", one_left) == {"no print call"}
    no_blanks = answer("code-sysconfig-logging").replace("    logger.info('')\n", "")
    assert no_blanks != answer("code-sysconfig-logging")
    assert failed("code-sysconfig-logging", no_blanks) == set()


def test_type_hints_everywhere_and_nothing_else():
    no_varargs = spoilt("code-genericpath-types", "*args: object", "*args")
    assert failed("code-genericpath-types", no_varargs) == {"type hints everywhere"}
    rewritten = spoilt("code-colorsys-hsv-types", "    return (y, i, q)", "    return y, i, q")
    assert failed("code-colorsys-hsv-types", rewritten) == {"no unrelated lines"}
