"""fix's spelling suggestions: what goes into the draft, and when."""

from __future__ import annotations

from pedit.app.jobs import EngineOptions, Job
from pedit.app.spelling import spellcheck
from pedit.app.templates import BUILTIN
from pedit.backends import open_backend

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
            EngineOptions(**options),
        )
        return job.request(TEXT, "a.md").draft

    assert draft() == spellcheck(TEXT, "a.md") != TEXT
    assert draft(spelling=False) is None
    assert draft(keep_bias=0.0) is None  # with β = 0 the draft cannot change the answer: the file drafts
    assert draft(keep_bias=-1.0) is None  # and β < 0 would push the model away from the suggestions
    assert draft("refactor") is None and draft("refactor", keep_bias=1.0) is None
    assert draft("refactor", keep_bias=1.0, spelling=True) == spellcheck(TEXT, "a.md")
    assert Job(backend, BUILTIN["fix"], None, EngineOptions()).request("All is well.\n", "a.md").draft is None
