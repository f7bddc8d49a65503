"""The quality instrument: fix scoring, refactor checks, the spell-check baseline, the
report. No model: outputs are written by hand (the right answer, nothing, half of it)."""

from __future__ import annotations

import json
import re
from dataclasses import replace

import pytest
from typer.testing import CliRunner

from pedit.bench.checks import run_checks
from pedit.bench.corpus import KINDS, introduced_errors, load_tasks
from pedit.bench.quality import change_kind, distance, score_fix, tokens
from pedit.bench.quality_report import goals, markdown, summarize
from pedit.bench.quality_run import Config, QualityRun, evaluate
from pedit.cli.app import app
from pedit.tools.options import ToolOptions
from pedit.tools.spelling import prose_spans, spellcheck

TASKS = {t.id: t for t in load_tasks()}
FIX = [t for t in TASKS.values() if t.reference() is not None]
REFACTOR = [t for t in TASKS.values() if t.check]


def test_corpus_has_what_the_issue_asks():
    kinds = {t.file.rsplit(".", 1)[1] for t in FIX}
    assert len(FIX) >= 15 and {"txt", "md", "rst", "py"} <= kinds
    assert len(REFACTOR) >= 6
    assert any(t.heldout for t in FIX)
    # every fix file has its errors listed, and every listed file is a task
    assert {t.file for t in FIX} == set(introduced_errors())


@pytest.mark.parametrize("task", FIX, ids=lambda t: t.id)
def test_the_right_answer_scores_one_and_no_change_zero(task):
    src, ref = task.text(), task.reference()
    n = len(introduced_errors()[task.file])
    perfect = score_fix(src, ref, ref)
    assert (perfect.score, perfect.fixed, perfect.errors, perfect.collateral) == (1.0, n, n, 0)
    assert perfect.f05 == 1.0 and not perfect.stray_fence
    nothing = score_fix(src, src, ref)
    assert (nothing.score, nothing.fixed, nothing.collateral, nothing.precision) == (0.0, 0, 0, 1.0)
    assert nothing.recall == 0.0 and not nothing.worse


def test_partial_fixes_collateral_and_worse():
    src = "I lived their two years. I am a a sojourner in civilized life."
    ref = "I lived there two years. I am a sojourner in civilized life."
    one = score_fix(src, src.replace("their", "there"), ref)
    assert (one.fixed, one.errors, one.collateral) == (1, 2, 0) and one.score == 0.5
    doubled = score_fix(src, src.replace("a a", "a"), ref)
    assert doubled.fixed == 1 and doubled.collateral == 0
    # a fix plus an unrelated change: the change is collateral, precision falls
    extra = score_fix(src, ref.replace("civilized", "civilised"), ref)
    assert (extra.fixed, extra.collateral) == (2, 1) and extra.precision == pytest.approx(2 / 3)
    # a wrong "fix" of an error is not a fix, and costs collateral
    wrong = score_fix(src, src.replace("their", "they're"), ref)
    assert (wrong.fixed, wrong.collateral) == (0, 1) and wrong.worse is False and wrong.score == 0
    worse = score_fix(src, src.replace("years", "yeers").replace("life", "lief"), ref)
    assert worse.worse and worse.score == -1.0
    # a punctuation error is one token; whitespace is not a token
    assert score_fix("hollow and", "hollow,\n and", "hollow, and").fixed == 1
    fenced = score_fix(src, "```\n" + ref + "\n```", ref)
    assert fenced.stray_fence


def test_distance_and_tokens():
    assert tokens("It's a  test, isn't it?") == ["It's", "a", "test", ",", "isn't", "it", "?"]
    assert distance(list("kitten"), list("sitting")) == 3
    assert distance([], ["a", "b"]) == 2


def test_baseline_touches_prose_only():
    md = "Some beatiful text.\n\n```python\nimport nmpy\n```\n\nUse `nmpy` here, see <https://exmple.org>.\n"
    out = spellcheck(md, "x.md")
    assert "beautiful text" in out and "import nmpy" in out and "`nmpy`" in out and "exmple.org" in out
    code = 'def f(nmpy):\n    """Retrun the valeu."""\n    return nmpy  # teh end\n'
    fixed = spellcheck(code, "x.py")
    assert fixed.startswith("def f(nmpy):") and "return nmpy" in fixed and "Return" in fixed
    rst = "Some beatiful text::\n\n    import nmpy\n\n.. code:: python\n\n    nmpy.thing()\n"
    assert spellcheck(rst, "x.rst").count("nmpy") == 2
    assert prose_spans("x", "notes.txt") == [(0, 1)]


def _right_answer(task_id: str, src: str) -> str:
    if task_id == "code-colorsys-rename":
        return re.sub(r"\b_v\b", "_hue_to_channel", src)
    if task_id == "code-bisect-rename":
        return re.sub(r"\bhi\b", "high", re.sub(r"\blo\b", "low", src))
    if task_id == "code-fnmatch-rename":
        return re.sub(r"\bpat\b", "pattern", src)
    if task_id == "code-calendar-types":
        for old, new in [
            ("isleap(year):", "isleap(year: int) -> bool:"),
            ("leapdays(y1, y2):", "leapdays(y1: int, y2: int) -> int:"),
            ("weekday(year, month, day):", "weekday(year: int, month: int, day: int) -> int:"),
            ("_prevmonth(year, month):", "_prevmonth(year: int, month: int) -> tuple[int, int]:"),
            ("_nextmonth(year, month):", "_nextmonth(year: int, month: int) -> tuple[int, int]:"),
        ]:
            src = src.replace(old, new)
        return src
    if task_id == "code-fnmatch-comprehension":
        start = src.index("        # normcase on posix")
        return src[:start] + (
            "        # normcase on posix is NOP. Optimize it away from the loop.\n"
            "        result = [name for name in names if match(name)]\n"
            "    else:\n"
            "        result = [name for name in names if match(os.path.normcase(name))]\n"
            "    return result\n"
        )
    raise KeyError(task_id)


@pytest.mark.parametrize(
    "task_id",
    ["code-colorsys-rename", "code-bisect-rename", "code-fnmatch-rename", "code-calendar-types",
     "code-fnmatch-comprehension"],
)  # fmt: skip
def test_refactor_checks_pass_the_right_answer_only(task_id):
    task = TASKS[task_id]
    src = task.text()
    good = run_checks(src, _right_answer(task_id, src), task.check)
    assert all(c.passed for c in good), [c for c in good if not c.passed]
    unchanged = run_checks(src, src, task.check)
    assert not all(c.passed for c in unchanged)


def test_refactor_checks_catch_what_goes_wrong():
    task = TASKS["code-colorsys-rename"]
    src = task.text()
    good = _right_answer(task.id, src)

    def failed(out: str) -> set[str]:
        return {c.name for c in run_checks(src, out, task.check) if not c.passed}

    changed = good.replace("(m2-m1)*hue*6.0", "(m2-m1)*hue*5.0")
    assert failed(changed) == {"behaviour kept", "no unrelated lines"}
    assert failed(good.replace("m1 = 2.0*l", "m0 = 2.0*l")) >= {"rename complete"}
    broken = good.replace("def _hue_to_channel(m1, m2, hue):", "def _hue_to_channel(m1, m2, hue)")
    assert failed(broken) == {"parses"}
    assert failed(good.replace("# L: color lightness", "# L: colour lightness")) == {"no unrelated lines"}
    half = src.replace("def _v(", "def _hue_to_channel(")
    assert "rename complete" in failed(half) and "behaviour kept" in failed(half)


def test_report_from_runs_without_a_model():
    walden, colorsys = TASKS["prose-walden"], TASKS["code-colorsys-rename"]
    runs = [
        QualityRun(
            task=walden.id,
            config="spellcheck",
            output=spellcheck(walden.text(), walden.file),
            refused=None,
            seconds=0.1,
        ),
        QualityRun(task=walden.id, config="m", output=walden.reference(), refused=None, seconds=2.0),
        QualityRun(
            task=colorsys.id,
            config="m",
            output=_right_answer(colorsys.id, colorsys.text()),
            refused=None,
            seconds=3.0,
        ),
    ]
    runs = [evaluate(walden if r.task == walden.id else colorsys, r) for r in runs]
    s = summarize(runs, "m")
    assert (s.score, s.recall, s.worse, s.refactor_pass, s.seconds) == (1.0, 1.0, 0, 1.0, 2.5)
    met = {goal.split(":")[0]: ok for goal, _, ok in goals(runs, "m", set())}
    assert all(met.values()), met
    data = {
        "command": "test", "started": "now", "default": "m",
        "machine": {"cpu": "cpu", "cores": 2, "python": "3.11"},
        "tasks": [{"id": walden.id}, {"id": colorsys.id}], "runs": [r.__dict__ for r in runs],
    }  # fmt: skip
    text = markdown(data, "quality.png")
    assert "| `m` | 1.00 | 100% | 100% | 1.00 | 0 of 1 | 0 | 100% of 1 | 0 | 2.5 |" in text
    assert "![quality against seconds per file](quality.png)" in text
    # per kind: walden's errors (3 misspellings, a homophone, a doubled word, an agreement), all
    # fixed, under "the other fix files" (walden is not of the natural-error corpus)
    assert "| spelling | 0 / 0 | – | – | 0 / 0 | – | – | 3 / 3 | 100% | 100% |" in text
    assert "| homophone | 0 / 0 | – | – | 0 / 0 | – | – | 1 / 1 | 100% | 100% |" in text


def test_config_names():
    assert Config.parse("qwen2.5-coder-0.5b+plain") == Config(
        "qwen2.5-coder-0.5b+plain", "qwen2.5-coder-0.5b", "llama.cpp", ("plain",)
    )
    assert Config.parse("m@transformers").backend == "transformers"
    with pytest.raises(ValueError, match="unknown variant"):
        Config.parse("m+nosuch")


def test_bench_quality_command_with_the_baseline(tmp_path):
    out = tmp_path / "quality.md"
    args = ["bench", "--quality", "--configs", "spellcheck", "--tasks", "walden,click"]
    result = CliRunner().invoke(app, [*args, "--markdown", str(out)])
    assert result.exit_code == 0, result.output
    data = json.loads(out.with_suffix(".json").read_text())
    assert {(r["task"], r["config"]) for r in data["runs"]} == {
        ("prose-walden", "spellcheck"),
        ("md-click-fix", "spellcheck"),
    }
    walden = next(r for r in data["runs"] if r["task"] == "prose-walden")
    assert (walden["fix"]["fixed"], walden["fix"]["errors"]) == (3, 6)
    assert "| `spellcheck` |" in out.read_text() and out.with_suffix(".png").exists()
    bad = CliRunner().invoke(app, ["bench", "--quality", "--configs", "m+nosuch"])
    assert bad.exit_code == 2 and "unknown variant" in bad.output


def test_variants_combine():
    v = Config.parse("m+plain+kb-1.5+whole+nospell").variant()
    assert (v.speculate, v.keep_bias, v.chunk_tokens, v.spelling) == ("off", -1.5, 0, False)
    assert Config.parse("m").variant().keep_bias is None  # the command's own, as the CLI
    assert Config.parse("m+kb0").variant().keep_bias == 0.0


def test_errors_and_changes_are_counted_per_kind():
    src = "I lived their two years. I am a a sojourner in an civilized life."
    ref = "I lived there two years. I am a sojourner in a civilized life."
    kinds = [("lived their two", "homophone"), ("a a sojourner", "doubled word"), ("an civilized", "a/an")]
    out = "I lived there two years. I am a a sojourner in an civilised life. the end"
    s = score_fix(src, out, ref, kinds)
    # their -> there fixed; "a a" and "an" missed; civilized -> civilised the British spelling,
    # "the end" two new tokens
    assert s.kinds == {"homophone": [1, 1, 0], "doubled word": [1, 0, 0], "a/an": [1, 0, 0],
                       "variety": [0, 0, 1], "other": [0, 0, 2]}  # fmt: skip
    assert (
        sum(c[0] for c in s.kinds.values()) == s.errors
        and sum(c[2] for c in s.kinds.values()) == s.collateral
    )


@pytest.mark.parametrize(
    "old, new, kind",
    [
        ("its", "it's", "homophone"), ("the", "The", "capital"), ("a", "an", "a/an"), ("", "the", "article"),
        ("the", "", "article"), ("of", "for", "preposition"), ("users", "user's", "apostrophe"),
        ("take", "takes", "word"), (",", ";", "punctuation"), ("big dog", "small cat", "other"),
        ("colour", "color", "variety"), ("grey", "gray", "variety"), ("teh", "the", "word"),
    ],
)  # fmt: skip
def test_a_change_is_filed_under_the_kind_its_shape_shows(old, new, kind):
    src = ["we", *old.split(), "went"]
    assert change_kind(src, 1, 1 + len(old.split()), new.split()) == kind


def test_a_doubled_word_removed_is_a_doubled_word():
    src = ["it", "is", "is", "here"]
    assert change_kind(src, 2, 3, []) == "doubled word"


def test_every_annotated_error_has_a_kind():
    """SOURCES.md names each error's kind (one of corpus.KINDS) before its note's colon."""
    for task in FIX:
        assert all(k in KINDS for _, k in task.kinds()), task.id


def test_the_natural_error_goals_count_each_kind_on_the_held_out_files():
    nat = [t for t in FIX if t.natural and t.heldout]
    assert len(nat) >= 4 and all(t.file.rsplit(".", 1)[1] in ("txt", "md", "rst", "py") for t in nat)
    # the right answer everywhere: every goal met; the files unchanged: recall 0, the key kinds missed
    right = [evaluate(t, QualityRun(task=t.id, config="m", output=t.reference(), refused=None, seconds=1.0))
             for t in nat]  # fmt: skip
    met = {goal: ok for goal, _, ok in goals(right, "m", set(), {t.id for t in nat}) if "natural" in goal}
    assert len(met) == 5 and all(met.values()), met
    same = [evaluate(t, QualityRun(task=t.id, config="m", output=t.text(), refused=None, seconds=1.0))
            for t in nat]  # fmt: skip
    rows = {goal: (measured, ok) for goal, measured, ok in goals(same, "m", set(), {t.id for t in nat})}
    assert rows["natural errors, held out: recall ≥ 75%"] == ("0%", False)
    assert rows["natural errors, held out: precision ≥ 95%"] == ("100%", True)  # nothing changed
    key = rows["natural errors, held out: a/an, homophone, agreement each ≥ 90% recall"]
    assert key[1] is False and key[0].startswith("a/an 0/")


def test_a_change_of_layout_is_a_wrong_change():
    src = "def f(n, d):\n    # the the ratio\n    return n//d\n"
    ref = "def f(n, d):\n    # the ratio\n    return n//d\n"
    out = "def f(n, d):\n    # the ratio\n    return n // d\n\n"  # respaced, and a blank line added
    s = score_fix(src, out, ref, [("the the", "doubled word")])
    assert (s.fixed, s.collateral, s.kinds["layout"], s.score) == (1, 2, [0, 0, 2], 1.0)
    rewrapped = score_fix("one two\nthree four\n", "one two three\nfour\n", "one two\nthree four\n")
    assert rewrapped.collateral == 2 and rewrapped.kinds == {"layout": [0, 0, 2]}
    assert score_fix(src, ref, ref).collateral == 0


def test_a_variant_is_the_options_it_changes():
    """The default variant gives the default options; each lever changes its own field only."""
    from pedit.app.options import EngineOptions
    from pedit.bench.levers import VARIANTS, Variant

    assert Variant().options() == EngineOptions()
    assert Variant(harper=False).options() == replace(EngineOptions(), tools=ToolOptions(harper=False))
    plain = VARIANTS["plain"].options()
    assert plain.edit.speculate == "off" and plain.tools == ToolOptions()
    assert Variant(keep_bias=0.0).options().keep_bias == 0.0


LEARNER = [t for t in FIX if t.learner and not t.multi]  # issue 57's corpus
SENTENCES = [t for t in FIX if t.multi]  # issue 70's learner sentences


def test_the_learner_corpus_has_two_parts_of_each_kind():
    """Issue 57's corpus: a training part and a held-out part, each with the kinds its goals
    name (agreement, sentence-start capitals, verb forms after a modal, "to" or "did"), the
    commas and word choice."""
    for held in (False, True):
        part = [t for t in LEARNER if t.heldout == held]
        counts = {k: sum(1 for t in part for _, kind in t.kinds() if kind == k) for k in KINDS}
        assert len(part) == 12 and sum(counts.values()) >= 100  # a clause's two commas: two errors
        assert counts["agreement"] >= 40 and counts["punctuation"] >= 20
        assert min(counts["capital"], counts["verb form"]) >= 12 and counts["word choice"] >= 5


def _learner_data(outputs, learner=None) -> dict:
    walden = TASKS["prose-walden"]
    tasks = [walden, *(LEARNER if learner is None else learner)]
    runs = [evaluate(t, QualityRun(task=t.id, config="m", output=outputs(t), refused=None, seconds=1.0,
                                   prompt_tokens=40 + 20 * t.heldout))
            for t in tasks]  # fmt: skip
    return {
        "command": "test", "started": "now", "default": "m",
        "machine": {"cpu": "cpu", "cores": 2, "python": "3.11"},
        "tasks": [{"id": t.id, "heldout": t.heldout, "learner": t.learner, "multi": t.multi} for t in tasks],
        "runs": [r.__dict__ for r in runs],
    }  # fmt: skip


def test_the_learner_goals_and_table_are_the_held_out_files_and_kept_out_of_the_rest():
    from pedit.bench.quality_report import goal_rows

    right = _learner_data(lambda t: t.reference())
    rows = {goal: (measured, ok) for goal, measured, ok in goal_rows(right) if goal.startswith("learner")}
    assert len(rows) == 4 and all(ok for _, ok in rows.values()), rows
    text = markdown(right, None)
    assert "| `m` | training | 12 | " in text and "| 100.0 | 100% | 100% | 0 | 1.0 | 40 |" in text
    # walden alone in the general tables: its one file, whatever the learner files did
    assert "| `m` | 1.00 | 100% | 100% | 1.00 | 0 of 1 |" in text
    same = _learner_data(lambda t: t.reference() if t.id == "prose-walden" else t.text())
    rows = {goal: (measured, ok) for goal, measured, ok in goal_rows(same) if goal.startswith("learner")}
    assert rows["learner errors, held out: agreement ≥ 80% recall"] == ("0% (0/41)", False)
    assert rows["learner errors, held out: precision ≥ 95%"] == ("100%", True)  # nothing changed
    line = next(x for x in markdown(same, None).splitlines() if x.startswith("| `m` | held out | 12 |"))
    before, after = line.split(" | ")[3:5]
    assert before == after and 0 < float(before) < 100  # the sources as they are, both
    assert line.endswith(" | 1.0 | 60 |")  # seconds and prompt tokens per file


def test_the_learner_sentences_have_two_parts_of_sentences_with_several_errors_each():
    """Issue 70's corpus: a sentence a line, eight a file, four files a part, three to six
    errors a sentence on average, the missing words and misspellings among them."""
    for held in (False, True):
        part = [t for t in SENTENCES if t.heldout == held]
        kinds = [kind for t in part for _, kind in t.kinds()]
        sentences = sum(len(t.text().splitlines()) for t in part)
        assert len(part) == 4 and sentences == 32 and 3 <= len(kinds) / sentences <= 6
        assert all(k in KINDS for k in kinds) and min(kinds.count("missing word"), kinds.count("spelling")) >= 8
        assert all(len(t.text().splitlines()) == len(t.reference().splitlines()) for t in part)


def test_the_learner_sentences_section_counts_each_sentence_and_its_goals_hold_on_the_corrections():
    from pedit.bench.quality_report import goal_rows

    right = _learner_data(lambda t: t.reference(), SENTENCES)
    rows = {goal: (measured, ok) for goal, measured, ok in goal_rows(right) if goal.startswith("learner sentences")}
    assert rows == {
        "learner sentences, held out: precision ≥ 90% on every kind": ("none below", True),
        "learner sentences, held out: at most 5% of the sentences further from their correction": ("0 of 32", True),
    }
    text = markdown(right, None)
    assert "| `m` | held out | 32 | " in text and "| 100.0 | 100% | 100% | 32 / 0 / 0 | 0 | 0.12 |" in text
    # the sources as they are, but a held-out file's first sentence gets a word more
    def worse(t):
        lines = t.text().splitlines()
        lines[0] = lines[0].replace(" ", " the ", 1) if t.heldout else lines[0]
        return "\n".join(lines) + "\n"

    rows = {g: (m, ok) for g, m, ok in goal_rows(_learner_data(worse, SENTENCES)) if g.startswith("learner sentences")}
    assert rows == {
        "learner sentences, held out: precision ≥ 90% on every kind": ("below: article 0%", False),
        "learner sentences, held out: at most 5% of the sentences further from their correction": ("4 of 32", False),
    }


def test_a_lever_on_a_lever_is_measured_against_the_configuration_without_it():
    from pedit.bench.quality_report import _levers

    task = TASKS["lrn-refund"]

    def run(config, output):
        return evaluate(task, QualityRun(task=task.id, config=config, output=output, refused=None, seconds=1.0))

    right, wrong = task.reference(), task.text()
    runs = [run("m", wrong), run("m+sentences", right), run("m+sentences+nomissing", right)]
    rows = _levers(runs, ["m", "m+sentences", "m+sentences+nomissing"])
    assert rows[0].startswith("| `+sentences` on `m` |") and rows[1].startswith("| `+nomissing` on `m+sentences` |")
    assert "| 0% → 100% |" in rows[0] and "| 1.00 → 1.00 | 100% → 100% |" in rows[1]  # score, recall


def test_runs_merged_keep_each_runs_command_and_start():
    from pedit.bench.quality_report import merge

    def one(task: str, started: str) -> dict:
        run = {"task": task, "config": "m", "output": "x", "refused": None, "seconds": 1.0}
        return {"command": f"run {task}", "started": started, "tasks": [{"id": task}], "runs": [run]}

    got = merge([one("a", "2026-11-27 09:19"), one("b", "2026-11-29 19:30"), one("a", "2026-11-29 19:30")])
    assert [(r["task"], r["config"]) for r in got["runs"]] == [("a", "m"), ("b", "m")]  # the first a's
    assert [t["id"] for t in got["tasks"]] == ["a", "b"]
    assert got["started"] == "2026-11-27 09:19, 2026-11-29 19:30"
    assert got["command"] == "run a`, `run b"


def test_the_sentences_lever_runs_each_sentence_alone_and_joins_them_back():
    from pedit.bench.levers import Variant, lookup

    text = TASKS["lrn-refund"].text()
    pieces = lookup("sentences").pieces(text)
    assert "".join(p + after for p, after in pieces) == text
    assert all(p and p == p.strip() and not after.strip() for p, after in pieces)
    assert [p for p, _ in pieces][1:3] == [
        "I bought a laptop from your shop two weeks ago.",
        "Unfortunately the battery do not charge.",
    ]
    assert Variant().pieces(text) == [(text, "")] and lookup("sentences").pieces("") == [("", "")]


def test_a_sentence_fixed_alone_is_joined_back_as_pedit_writes_a_file_of_it(monkeypatch):
    """`+sentences`: each sentence's answer is what pedit writes to a file of that sentence,
    with no final newline as it had none (fileio.Source.render), not the fenced answer's
    text, which ends with one: a model that changes nothing leaves the text as it was, no
    line break counted against it as a change (as the runs at 1ff0c7c and before were)."""
    from types import SimpleNamespace

    from pedit.backends import open_backend
    from pedit.bench import quality_run
    from pedit.bench.levers import Variant
    from pedit.engine.prompt import fenced_body

    monkeypatch.setattr(Variant, "rewrite", lambda self, job, text, name: text)
    # the answer a model gives that copies its piece: the fence's body, ending with a newline
    copied = lambda piece, show: SimpleNamespace(text=fenced_body(piece), check_dict=lambda: None)  # noqa: E731
    monkeypatch.setattr(quality_run, "answer", copied)
    task = TASKS["lrn-refund"]
    for name in ("m+sentences", "m"):
        run = quality_run.run_model(open_backend("reference"), quality_run.Config.parse(name), task)
        assert run.output == task.text() and run.fix["collateral"] == 0



def test_a_sentence_the_guard_refuses_is_left_alone_and_the_others_are_written(monkeypatch):
    """`+sentences`: each sentence is judged as the file of its own it stands for (the guard
    on that sentence, not on the eight joined), and one refused leaves only itself as it
    was."""
    from types import SimpleNamespace

    from pedit.backends import open_backend
    from pedit.bench import quality_run
    from pedit.bench.levers import Variant
    from pedit.engine.prompt import fenced_body

    monkeypatch.setattr(Variant, "rewrite", lambda self, job, text, name: text)
    task = TASKS["lrn-refund"]
    second = lookup_pieces(task.text())[1]

    def answer(piece, show):  # the second sentence's words all replaced: the guard refuses it
        text = " ".join("x" for _ in piece.split()) if piece == second else piece
        return SimpleNamespace(text=fenced_body(text), check_dict=lambda: None)

    monkeypatch.setattr(quality_run, "answer", answer)
    run = quality_run.run_model(open_backend("reference"), quality_run.Config.parse("m+sentences"), task)
    assert run.output == task.text() and run.pieces_refused == 1 and run.refused is None
    # (the eight joined change less than the guard's share of words: judged whole, it was written)


def lookup_pieces(text: str) -> list[str]:
    from pedit.bench.levers import lookup

    return [p for p, _ in lookup("sentences").pieces(text)]

def test_the_prompt_levers_change_a_fixs_instruction_or_system_prompt_and_nothing_else():
    """Issue 57 item 3: `agreement` adds a sentence to the instruction, `examples` six
    corrections to the system prompt; the other levers leave the template as it is, and
    `noforms`/`nocommas` turn the learner's candidates off in the tools' options."""
    from dataclasses import replace as swap

    from pedit.app.templates import BUILTIN
    from pedit.bench.levers import AGREEMENT, EXAMPLES, Variant, lookup

    fix = BUILTIN["fix"]
    with_it = lookup("agreement").template(fix)
    assert with_it == swap(fix, instruction=fix.instruction + AGREEMENT) != fix
    assert lookup("agreement").template(with_it) == with_it  # once
    assert lookup("noagreement").template(with_it) == fix and lookup("noagreement").template(fix) is fix
    assert lookup("examples").template(fix) == swap(fix, system=fix.system + EXAMPLES)
    from pedit.app.templates import FIX_LEARNER_CLAUSE

    clause = lookup("clausecomma").template(with_it)
    assert clause.instruction == fix.instruction + FIX_LEARNER_CLAUSE and lookup("clausecomma").template(fix) is fix
    assert Variant().template(fix) is fix and lookup("sentences").template(fix) is fix
    tools = lookup("noforms").options().tools
    assert not tools.forms and tools.commas and not lookup("nocommas").options().tools.commas
    assert Variant().options().tools.forms and Variant().options().tools.commas
    assert Variant().options().tools.possessives and not lookup("nopossessives").options().tools.possessives
    default, off = Variant().options().tools, lookup("nocontext").options().tools
    assert default.context_spelling and default.missing and not off.context_spelling and off.missing
    assert not lookup("nomissing").options().tools.missing and lookup("nomissing").options().tools.context_spelling


def test_the_learner_sentences_are_judged_a_sentence_a_file_where_that_ran():
    from pedit.bench.quality_sentences import judged_config

    def run(config):
        return QualityRun(task="lrs-5", config=config, output="", refused=None, seconds=1.0)

    assert judged_config([run("m"), run("m+sentences"), run("m+sentences+nomissing")], "m") == "m+sentences"
    assert judged_config([run("m"), run("m+nomissing")], "m") == "m"
