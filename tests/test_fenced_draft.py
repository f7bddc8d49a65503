"""Issue 38 item 4: a chat request with no `prediction` drafts from the one file its latest
fenced user message holds, as that block stands (serve/schema.fenced_file)."""

from __future__ import annotations

import pytest

from pedit.serve.schema import fenced_file

CODE = "def f(x):\n    return x\n"
CRLF = f"a.py\n```\n{CODE}```\n".replace("\n", "\r\n")
NEW = "new.py\n```\nx = 1\n```\n"


def user(text: str) -> dict:
    return {"role": "user", "content": text}


@pytest.mark.parametrize(
    "messages, draft",
    [
        ([user(f"f.py\n```python\n{CODE}```\n")], f"f.py\n```python\n{CODE}```\n"),  # aider's
        ([user(f"Fix this:\n```\n{CODE}```")], f"```\n{CODE}```"),  # a sentence is not a name
        ([user(f"````\n```\n{CODE}```\n````\n")], f"````\n```\n{CODE}```\n````\n"),  # a longer fence
        ([user(f"~~~\n{CODE}~~~\n")], f"~~~\n{CODE}~~~\n"),
        ([user(CRLF)], CRLF),
        # the latest user message with a block decides, even with an instruction after it
        ([user(f"f.py\n```\n{CODE}```\n"), {"role": "assistant", "content": "Ok."}, user("Rename x.")],
         f"f.py\n```\n{CODE}```\n"),
        ([user(f"old.py\n```\n{CODE}```\n"), user(NEW)], NEW),
        ([user(f"```\n{CODE}```\n```\n{CODE}```\n")], None),  # two files: which would come back?
        ([user(f"```\n{CODE}")], None),  # left open
        ([user(CODE)], None),  # not fenced
        ([{"role": "assistant", "content": f"```\n{CODE}```\n"}], None),  # not the user's
        ([{"role": "system", "content": f"```\n{CODE}```\n"}, user("Hi.")], None),
    ],
)  # fmt: skip
def test_the_one_fenced_file_of_the_latest_fenced_user_message(messages, draft):
    assert fenced_file(messages) == draft


# aider's whole-file chat, in short: its system prompt shows the answer's format with an
# example block, the files come in a user message of their own, and the instruction ends
# with the same example again (a reminder)
EXAMPLE = "path/to/file.js\n```\n// the whole file\n```\n"
AIDER = [
    {"role": "system", "content": f"Reply with the whole file, like this:\n\n{EXAMPLE}"},
    {"role": "user", "content": f"Here are the files.\n\nshapes.py\n```\n{CODE}```\n"},
    {"role": "assistant", "content": "Ok."},
    {"role": "user", "content": f"Rename x to count.\n\nReply with the whole file, like this:\n\n{EXAMPLE}"},
]


def test_the_formats_example_is_not_the_file():
    """The block the system prompt shows too is passed over: the file is the one sent."""
    assert fenced_file(AIDER) == f"shapes.py\n```\n{CODE}```\n"
    alone = [AIDER[0], AIDER[3]]  # the example and nothing else: no draft
    assert fenced_file(alone) is None


def test_aiders_rename_gets_the_rename_tool_on_its_file():
    from pedit.serve import tools

    got = tools.propose(AIDER, fenced_file(AIDER))
    assert (got.tool, got.filename) == ("rename", "shapes.py")
    assert got.draft == "shapes.py\n```\ndef f(count):\n    return count\n```\n"
