"""The refactor loop (pedit/app/refactor.py): tools propose, the model verifies, the
check of the intent decides. On the reference backend (a tiny random model), whatever it
answers: nothing that fails its check is ever the result, unless forced."""

from __future__ import annotations

import ast

import pytest
from flat_options import engine_options
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from pedit.app.jobs import Job
from pedit.app.options import EngineOptions
from pedit.app.refactor import rewrite
from pedit.app.templates import BUILTIN
from pedit.backends import open_backend
from pedit.checks.intentcheck import code_tokens, missed
from pedit.cli.app import app
from pedit.engine.sampling import Sampling
from pedit.errors import RefusedError
from pedit.tools.rename import rename
from pedit.ui.runs import answer

SRC = (
    "def f(name, pat):\n    pat = norm(pat)\n    return match(name, pat)\n\n"
    "def g(pat_str):\n    return pat_str\n"
)
EXACT = rename(SRC, "m.py", {"pat": "pattern"})


def job(instruction, backend, **options):
    return Job(backend, BUILTIN["refactor"], instruction, engine_options(**options))


def run(j, text=SRC, name="m.py"):
    return answer(rewrite(j, text, name))


@pytest.fixture(scope="module")
def reference():
    b = open_backend("reference")
    yield b
    b.close()


def test_a_model_that_keeps_the_tools_rename_passes_at_once(reference):
    """β large: the answer is the draft, the exact rename, checked and passed in one run."""
    out = run(job("rename pat to pattern", reference, keep_bias=1000.0))
    assert out.text == EXACT
    assert (out.verdict.check, out.verdict.passed, out.tries, out.answer) == ("rename", True, 1, "model")
    assert out.intent.renames == {"pat": "pattern"}
    assert len(out.stats) == 1


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**16), temperature=st.sampled_from([0.0, 1.0]))
def test_whatever_the_model_answers_a_rename_is_never_written_wrong(reference, seed, temperature):
    """The tool's β (no --keep-bias): the answer passes the check (its code is the exact
    rename's), or the result is the exact rename itself; a strayed answer costs no retry."""
    out = run(job("rename pat to pattern", reference, sampling=Sampling(temperature, seed=seed)))
    assert out.verdict.passed and out.verdict.check == "rename"
    assert code_tokens("m.py", out.text) == code_tokens("m.py", EXACT)
    assert out.answer == "model" or out.text == EXACT
    assert out.tries == len(out.stats) <= 2


def test_type_hints_under_the_edit_grammar_pass_their_check_whatever_the_model(reference):
    src = "def area(w, h=1):\n    return w * h\n"
    out = run(job("add type hints", reference), src)
    assert (out.verdict.check, out.verdict.passed) == ("hints", True)
    fn = ast.parse(out.text).body[0]
    assert fn.returns is not None and all(a.annotation is not None for a in fn.args.args)
    assert out.stats[0].coalesced_tokens > 0  # the file's own text was forced, not decoded


@pytest.mark.parametrize("seed", [4, 7, 9])  # seeds whose whole answer is not Python
def test_a_refactor_without_a_tools_proposal_that_does_not_parse_is_refused(reference, seed):
    """f-strings in a file with no %-format: flynt proposes nothing, so no draft and no
    retry; the check decides (exit 5); --force returns the answer with its failed verdict."""
    j = job("use f-strings", reference, sampling=Sampling(1.0, seed=seed))
    with pytest.raises(RefusedError, match="fails its fstrings check: it is not valid Python") as refused:
        run(j)
    assert refused.value.forceable
    forced = run(Job(j.backend, j.template, j.instruction, j.options, force=True))
    assert forced.verdict.check == "fstrings" and not forced.verdict.passed
    assert forced.verdict.reason in refused.value.message


@pytest.mark.parametrize("seed", [10, 11])
def test_a_refactor_without_a_tools_proposal_that_passes_is_returned_with_its_check(reference, seed):
    out = run(job("use f-strings", reference, sampling=Sampling(1.0, seed=seed), keep_bias=3.0))
    assert (out.verdict.check, out.verdict.passed, out.tries, out.answer) == ("fstrings", True, 1, "model")
    ast.parse(out.text)


def test_missed_tells_a_rename_left_undone_from_one_that_strayed():
    strayed = EXACT.replace("pat_str", "pattern_str")
    assert not missed("m.py", SRC, EXACT, strayed)
    undone = EXACT.replace("return match(name, pattern)", "return match(name, pat)")
    assert missed("m.py", SRC, EXACT, undone)


def test_a_rename_of_a_name_not_in_the_file_is_refused_before_the_model_loads(tmp_path):
    f = tmp_path / "m.py"
    f.write_text(SRC)
    result = CliRunner().invoke(app, ["refactor", str(f), "rename zz to q", "--diff", "-b", "reference"])
    assert result.exit_code == 2
    assert "zz is not a name in the file" in result.stderr and "loading" not in result.stderr


def test_the_check_goes_into_the_json_record(tmp_path):
    f = tmp_path / "m.py"
    f.write_text(SRC)
    args = ["refactor", str(f), "rename pat to pattern", "--json", "-b", "reference", "--keep-bias", "1000"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.stderr
    import json

    record = json.loads(result.stdout)[0]
    assert record["check"] == {
        "check": "rename", "passed": True, "tries": 1, "answer": "model", "intent": "rename pat -> pattern",
    }  # fmt: skip
    assert record["text"] == EXACT


# --- checks that decide early (earlycheck.py) ---------------------------------------------

FUNCTION = "def f{i}(name, pat):\n    # step {i} of the walk\n    pat = norm(pat, {i})\n"
FUNCTION += "    return match(name, pat)\n\n"
LONG = "".join(FUNCTION.format(i=i) for i in range(12))
LONG_EXACT = rename(LONG, "m.py", {"pat": "pattern"})


@pytest.mark.parametrize(
    "answer, tries",
    [
        (LONG_EXACT.replace("# step 1 of the walk", "# the second step"), 1),  # strayed: a comment reworded
        (LONG_EXACT.replace("norm(pattern, 1)", "norm(pat, 1)"), 2),  # missed: an old name left
        (LONG_EXACT.replace("norm(pattern, 1)", "norm(pattern, 1.0)"), 1),  # strayed: code changed
    ],
    ids=["comment", "missed", "code"],
)
def test_a_rename_answer_is_stopped_where_it_fails_with_the_result_it_would_have(monkeypatch, answer, tries):
    """A model that departs from the exact rename near the start of a file: checked as it
    writes, it is stopped at the pass where what it wrote fails the check, and the result
    (the exact rename, after a retry for a missed rename as before) is the one the whole
    answer gets; the stopped runs make a fraction of the tokens and passes."""
    from pedit.app import refactor
    from scripted import Answering

    outs = {}
    for early in (False, True):
        monkeypatch.setattr(refactor, "EARLY", early)
        outs[early] = run(job("rename pat to pattern", Answering(answer)), LONG)
    whole, stopped = outs[False], outs[True]
    assert whole.text == stopped.text == LONG_EXACT and whole.answer == stopped.answer == "tool"
    assert whole.tries == stopped.tries == tries
    assert [s.stop_reason for s in stopped.stats] == ["check"] * tries
    assert [s.stop_reason for s in whole.stats] == ["fence"] * tries
    for cut, full in zip(stopped.stats, whole.stats, strict=True):
        assert 4 * cut.completion_tokens < full.completion_tokens
        assert cut.forward_passes < full.forward_passes


def test_a_forced_rename_answer_is_read_whole(monkeypatch):
    """--force may write the model's answer: it is never cut short."""
    from scripted import Answering

    answer = LONG_EXACT.replace("# step 1 of the walk", "# the second step")
    j = Job(Answering(answer), BUILTIN["refactor"], "rename pat to pattern", EngineOptions(), force=True)
    out = run(j, LONG)
    assert [s.stop_reason for s in out.stats] == ["fence"]


def test_the_models_reading_of_a_vague_instruction_is_counted_as_a_tools_read(reference):
    """Issue 38: the run that reads a vague instruction's intent is not hidden: its time
    and passes are the first run's tools' reads (and among its forward passes)."""
    src = "def f(total):\n    return total + 1\n"
    out = run(job("give the variable total a better name, say subtotal", reference), src)
    assert out.intent.source == "model"
    first = out.stats[0]
    assert first.tool_passes >= 1 and first.tool_seconds > 0
    assert first.forward_passes > first.tool_passes
    plain = run(job("rename total to subtotal", reference), src).stats[0]  # read by the patterns
    assert (plain.tool_passes, plain.tool_seconds) == (0, 0.0)
