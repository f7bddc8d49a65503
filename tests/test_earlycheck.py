"""Checks that decide early (pedit/checks/earlycheck.py), by their invariants: whenever the
complete lines of an answer written so far are refused, the whole answer fails the rename
check, whatever it is; a refusal of its code says missed or strayed as the whole answer's
check does (unless what follows makes the answer's code unreadable, which the whole
answer's check counts as a stray, and the early one as the missed rename it saw first);
and the exact rename itself is never refused at any point."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pedit.checks.earlycheck import EarlyCheck
from pedit.checks.intentcheck import check, code_differs, code_tokens, missed
from pedit.tools.intent import RENAME, Intent
from pedit.tools.rename import rename

BEFORE = '''\
"""Wrap text to a width."""

import re


def wrap(text, width=70):
    """Split text into lines of at most width characters."""
    # the width counts characters, not bytes
    words = text.split()
    lines, line = [], ""
    # one word at a time
    for word in words:
        if len(line) + len(word) + 1 > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    return lines + [line]


def fill(text, width=70):
    return "\\n".join(wrap(text, width))  # joined with newlines


class Wrapper:
    def __init__(self, width):
        self.width = width
        self.pattern = re.compile(r"\\s+")
'''
RENAMES = {"width": "line_width"}
INTENT = Intent(RENAME, dict(RENAMES))
EXACT = rename(BEFORE, "wrap.py", RENAMES)
LINES = EXACT.splitlines(keepends=True)

# What a model does to the exact rename: one line changed in one of these ways
EDITS = [
    lambda line: line.replace("line_width", "width"),  # an old name left (missed)
    lambda line: line.replace("line", "row"),  # code that is not the rename's (strayed)
    lambda line: line.replace("characters", "letters"),  # a comment or docstring reworded
    lambda line: line.rstrip("\n") + "  # checked\n",  # a comment added
    lambda line: "",  # the line dropped
    lambda line: line + line,  # the line doubled
    lambda line: "\n" + line,  # a blank line added
    lambda line: line.replace("(", "[", 1),  # a bracket that never closes
    lambda line: line.replace('"""', "'''", 1),  # a docstring's quotes changed
]


@st.composite
def answers(draw) -> str:
    lines = list(LINES)
    for _ in range(draw(st.integers(0, 3))):
        i = draw(st.integers(0, len(lines) - 1))
        lines[i] = draw(st.sampled_from(EDITS))(lines[i])
    return "".join(lines)


def prefixes(answer: str):
    """What the answer is at the end of each pass: any cut, mid-line included."""
    yield from (answer[:n] for n in range(0, len(answer) + 1, 7))
    yield answer


@settings(max_examples=300, deadline=None)
@given(answers())
def test_a_refusal_of_a_prefix_is_the_whole_answers_verdict(answer):
    early = EarlyCheck("wrap.py", BEFORE, EXACT, RENAMES)
    verdict = check(INTENT, "wrap.py", BEFORE, answer, EXACT)
    for prefix in prefixes(answer):
        found = early.refuses(prefix)
        if found is None:
            continue
        assert not verdict.passed, (prefix, found)
        if found.reason.startswith("its code"):
            assert code_differs("wrap.py", EXACT, answer) is not None
            if code_tokens("wrap.py", answer) is not None:  # else the answer is a stray (below)
                assert found.missed == missed("wrap.py", BEFORE, EXACT, answer)
        break


def test_the_exact_rename_is_never_refused():
    early = EarlyCheck("wrap.py", BEFORE, EXACT, RENAMES)
    assert all(early.refuses(prefix) is None for prefix in prefixes(EXACT))


def test_a_reworded_comment_is_refused_as_soon_as_its_line_is_complete():
    """The issue's rename: the model changed a comment that names none of the names."""
    answer = EXACT.replace("one word at a time", "word by word")
    cut = answer.index("word by word") + len("word by word")
    early = EarlyCheck("wrap.py", BEFORE, EXACT, RENAMES)
    assert early.refuses(answer[:cut]) is None  # the line is not complete yet
    found = early.refuses(answer[: cut + 1])
    assert found is not None and not found.missed and "line 11 of the answer" in found.reason
    assert not check(INTENT, "wrap.py", BEFORE, answer, EXACT).passed


def test_an_old_name_left_in_code_is_a_missed_rename():
    answer = EXACT.replace("len(word) + 1 > line_width", "len(word) + 1 > width")
    end = answer.index("> width") + len("> width:\n")
    found = EarlyCheck("wrap.py", BEFORE, EXACT, RENAMES).refuses(answer[:end])
    assert found is not None and found.missed and found.reason.startswith("its code is not the exact rename")
    assert missed("wrap.py", BEFORE, EXACT, answer)
