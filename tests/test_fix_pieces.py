"""fix judges each piece: a piece whose answer is not whole, or that the write guard's fix
checks refuse, stays as it was, and the other pieces are still fixed (pedit/app/jobs.py).
On the reference backend (a tiny random model), whatever it answers."""

from __future__ import annotations

from dataclasses import replace

import pytest

from pedit.app import wholefile
from pedit.app.jobs import Job
from pedit.app.options import EngineOptions
from pedit.app.refactor import rewrite
from pedit.app.templates import BUILTIN
from pedit.backends import open_backend
from pedit.checks import guard
from pedit.engine.options import EditOptions
from pedit.engine.sampling import Sampling
from pedit.ui.runs import answer

TEXT = (
    "Their is many reasons why peoples enjoys reading books in the evening.\n\n"
    "A good book take you to another world, and it teach you new things every day.\n\n"
    "Reading also help you to think clearly, and you learns new words from it.\n"
)


@pytest.mark.parametrize("seed", range(6))
def test_every_piece_is_the_models_fix_or_stays_as_it_was(seed):
    backend = open_backend("reference")
    options = EngineOptions(edit=EditOptions(sampling=Sampling(1.0, seed=seed)), keep_bias=0.0)
    job = Job(backend, BUILTIN["fix"], None, options, chunk_tokens=24)
    pieces = job.pieces(TEXT, "notes.md", "rewrite")
    assert len(pieces) == 3
    out = answer(rewrite(job, TEXT, "notes.md"))
    kept = [n for n in out.notes if "kept as it was" in n]
    assert len(kept) == len(out.notes)
    parts = out.text.split("\n\n")
    assert len(parts) == 3  # the paragraphs are all there, each fixed or as it was
    for piece, part in zip(pieces, parts, strict=True):
        assert part.strip() == piece.strip() or guard.judge_fix("notes.md", piece, part + "\n") is None
    if len(kept) == len(pieces):
        assert out.text == TEXT  # nothing the checks passed: the file as it was, not refused


def test_a_part_is_told_which_part_it_is_only_with_the_lever():
    """The note costs its tokens in every run of a file cut in runs: by default a part's
    instruction is the whole file's; `part_note` (the report's +partnote) adds it."""
    job = Job(open_backend("reference"), BUILTIN["fix"], None, EngineOptions())
    whole = job.request("Some text.\n", "a.md")
    assert job.request("Some text.\n", "a.md", "part 2 of 3") == whole
    told = replace(job, part_note=True).request("Some text.\n", "a.md", "part 2 of 3")
    note = "\n\n(This is part 2 of 3 of the file; rewrite only this part.)"
    assert told.instruction == whole.instruction + note


def test_every_run_of_a_file_keeps_the_english_detected_on_the_whole_file(monkeypatch):
    """The variety of English is the file's, detected once: a part that alone reads as
    American ("color") still keeps the British spellings of the file it is part of."""
    from pedit.tools import dialect, fix

    text = (
        "The colour of the centre was organised by the neighbours, whose behaviour was odd.\n\n"
        "The color of it was realised late, and teh rest too.\n"
    )
    assert dialect.detect(text) == "british" and dialect.detect(text.split("\n\n")[1]) == "american"
    seen, draft = [], fix.draft
    monkeypatch.setattr(fix, "draft", lambda t, name, o: seen.append(o.dialect) or draft(t, name, o))
    job = Job(open_backend("reference"), BUILTIN["fix"], None, EngineOptions(), chunk_tokens=24)
    assert len(job.pieces(text, "notes.md", "rewrite")) == 2
    seen.clear()
    answer(rewrite(job, text, "notes.md"))
    assert set(seen) == {"british"} and len(seen) >= 2  # every part's drafts, British
    refactor = Job(open_backend("reference"), BUILTIN["refactor"], "rename x to y", EngineOptions())
    assert wholefile._english_of(refactor, text) is refactor  # no spelling kept: nothing detected
