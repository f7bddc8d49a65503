"""fix judges each piece: a piece whose answer is not whole, or that the write guard's fix
checks refuse, stays as it was, and the other pieces are still fixed (pedit/app/jobs.py).
On the reference backend (a tiny random model), whatever it answers."""

from __future__ import annotations

from dataclasses import replace

import pytest

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
