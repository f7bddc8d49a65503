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
