"""Issue 38 item 4: pedit serve runs the CLI's tools on a chat that sends a file with a
prediction: the intent read in the latest user message, the tool's edit as the draft, the
CLI's check of the answer in the extension field; the text is the model's, unchanged."""

from __future__ import annotations

import pytest

from pedit.app.templates import BUILTIN
from pedit.checks import intentcheck
from pedit.engine.remote import remote_prompt
from pedit.request import EditRequest
from pedit.serve import tools
from pedit.tools import grammarcheck
from pedit.tools.intent import parse
from pedit.tools.rename import rename

CODE = 'def area(width, height):\n    """The area."""\n    return width * height\n\n\nprint(area(2, 3))\n'
RENAMED = rename(CODE, "shapes.py", {"width": "w"})
ESSAY = "Their is a dog in teh garden. It likes to runs.\n"


def request(instruction: str, text: str, name: str, continues: bool = False) -> tuple[list[dict], str]:
    """What pedit's remote backend sends (-b openai): the messages and the prediction."""
    msgs, _, _, prediction = remote_prompt(EditRequest(text, instruction, name), "rewrite", continues)
    return msgs, prediction


@pytest.mark.parametrize("continues", [False, True])
def test_a_rename_drafts_the_exact_rename_in_the_predictions_fences(continues):
    msgs, prediction = request(BUILTIN["refactor"].render("rename width to w"), CODE, "shapes.py", continues)
    got = tools.propose(msgs, prediction)
    assert (got.tool, got.filename, got.before, got.exact) == ("rename", "shapes.py", CODE, RENAMED)
    assert got.draft == prediction.replace(CODE, RENAMED)
    assert got.verdict(got.draft) == {"check": "rename", "passed": True}
    strayed = got.draft.replace("return w * height", "return height * w")
    after = strayed[strayed.index("\n") + 1 : strayed.rindex("```")] if not continues else strayed[:-3]
    want = intentcheck.check(parse("rename width to w"), "shapes.py", CODE, after, RENAMED)
    assert got.verdict(strayed) == want.to_dict() and not want.passed


def test_a_fix_drafts_the_spelling_and_grammar_suggestions():
    msgs, prediction = request(BUILTIN["fix"].render(None), ESSAY, "essay.md")
    got = tools.propose(msgs, prediction)
    assert (got.tool, got.filename, got.intent) == ("fix", "essay.md", None)
    assert got.exact == grammarcheck.draft(ESSAY, "essay.md") != ESSAY
    assert got.draft == prediction.replace(ESSAY, got.exact)
    assert got.verdict(got.draft) == {"check": "fix", "passed": True}
    dropped = got.draft.replace(got.exact, "")
    assert got.verdict(dropped)["passed"] is False
    assert got.variants == (prediction,)  # the file as sent drafts beside the tool's edit


WRAPPED = "# Notes\n\nTheir is a dog in teh garden.\nIt likes to runs.\n"


def test_a_prose_files_variants_are_the_file_as_sent_and_each_unwrapped():
    """Beside the tool's draft: the prediction as sent (the model may refuse an edit), and
    for prose each with its paragraphs on one line (a model often unwraps them); a code
    file is not unwrapped, and a prediction no tool changed has no copy of itself."""
    msgs, prediction = request(BUILTIN["fix"].render(None), WRAPPED, "notes.md")
    got = tools.propose(msgs, prediction)
    joined = "garden. It"
    assert got.variants == (
        prediction,
        got.draft.replace("garden.\nIt", joined),
        prediction.replace("garden.\nIt", joined),
    )
    msgs, prediction = request("Make it shorter.", WRAPPED, "notes.md")
    assert tools.propose(msgs, prediction).variants == (prediction.replace("garden.\nIt", joined),)
    msgs, prediction = request(BUILTIN["refactor"].render("rename width to w"), CODE, "shapes.py")
    assert tools.propose(msgs, prediction).variants == (prediction,)


def test_no_tool_for_what_no_tool_reads_or_a_file_that_only_mentions_it():
    # the instruction is read outside the fenced file: a comment that says "rename" is not one
    text = "# rename width to w later\nx = 1\n"
    msgs, prediction = request("Add a docstring.", text, "a.py")
    assert tools.propose(msgs, prediction) == tools.Tooled(prediction)
    msgs, prediction = request("rename nothing to w", CODE, "shapes.py")  # the tool cannot: no draft
    assert tools.propose(msgs, prediction) == tools.Tooled(prediction)


@pytest.mark.parametrize(
    "text, parts",
    [
        ("x = 1\n", ("", "x = 1\n", "")),
        ("```python\nx = 1\n```", ("```python\n", "x = 1\n", "```")),
        ("a.py\n````\nx = '```'\n````\n", ("a.py\n````\n", "x = '```'\n", "````\n")),
        ("x = 1\n```", ("", "x = 1\n", "```")),  # a continued answer: the file, then the fence
        ("```\nx = 1\n", ("```\n", "x = 1\n", "")),  # cut off before its fence
    ],
)
def test_split_finds_the_file_between_its_fences(text, parts):
    assert tools.split(text) == parts
    assert "".join(parts) == text


@pytest.mark.parametrize(
    "head, text, name",
    [("", "x = 1\n", "file.py"), ("```js\n", "let x;\n", "file.js"), ("", "Some prose: here.\n", "file.txt")],
)
def test_a_file_with_no_name_is_named_by_its_fence_or_its_parse(head, text, name):
    assert tools._filename("", head, text) == name


def test_the_check_reads_the_file_in_an_answer_with_words_around_it():
    """A model that says "Sure" first (aider's answers do): the check reads its one file."""
    msgs, prediction = request(BUILTIN["refactor"].render("rename width to w"), CODE, "shapes.py")
    got = tools.propose(msgs, prediction)
    assert got.verdict(f"Sure, here it is:\n\n{got.draft}\nDone.\n") == {"check": "rename", "passed": True}
