"""The end-to-end suite's runner and report (pedit/bench/e2e.py): the command each
configuration runs, a real run of the CLI in a new process on the reference backend (its
figures read back from --stats-json), and the goals computed from the medians."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pedit.app.jobs import Job
from pedit.app.options import EngineOptions
from pedit.app.templates import BUILTIN
from pedit.backends import open_backend
from pedit.bench import e2e, e2e_bounds, e2e_medians, e2e_report, e2e_small, readme
from pedit.bench.corpus import load_tasks
from pedit.tools import skeleton

TASK = next(t for t in load_tasks() if t.id == "md-essay-demo")


def run(task, config, repeat, seconds, *, read=100, cached=50, file_tokens=100, output="x", **other):
    return other | {
        "task": task, "config": config, "repeat": repeat, "seconds": seconds, "load_seconds": 1.0,
        "prefill_seconds": 2.0, "decode_seconds": 3.0, "prompt_tokens": read + cached,
        "cached_tokens": cached, "completion_tokens": 10, "file_tokens": file_tokens, "output": output,
        "exit_code": 0,
    } | other  # fmt: skip


def test_each_configuration_runs_the_users_command_in_a_new_process(tmp_path):
    path, stats = tmp_path / "essay.md", tmp_path / "s.json"
    assert e2e.command(TASK, path, "pedit", stats) == [
        sys.executable, "-m", "pedit", "fix", str(path), "--stdout", "--stats-json", str(stats),
    ]  # fmt: skip
    assert e2e.command(TASK, path, "plain", stats)[-2:] == ["--speculate", "off"]
    for config in ("lookup", "reading"):  # the peer's process, and the model reading the answer
        want = ["-m", "pedit.bench.e2e", config, "md-essay-demo"]
        assert e2e.command(TASK, path, config, stats)[1:5] == want
    # the baseline: the same command, run by another installation's Python
    other = tmp_path / "old" / "bin" / "python"
    assert (
        e2e.command(TASK, path, "baseline", stats, other)
        == [str(other)] + e2e.command(TASK, path, "pedit", stats)[1:]
    )


def test_a_real_run_reads_its_figures_back(monkeypatch, isolated_dirs):
    """The CLI on the reference backend (PEDIT_BACKEND), in a new process: its load time,
    prompt and file tokens, and its runs (one per part of the file) come back through
    --stats-json. Without the tools' suggestions, which lead the random model off the file
    (conftest.copying_tiny_models), in the user's config."""
    monkeypatch.setenv("PEDIT_BACKEND", "reference")
    user = isolated_dirs / "config" / "pedit" / "config.toml"
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text("spelling = false\n")
    got = e2e.run_once(TASK, "plain", 0)
    assert got.exit_code == 0 and got.output
    backend = open_backend("reference")
    try:
        parts = Job(backend, BUILTIN["fix"], None, EngineOptions()).pieces(TASK.text(), TASK.file, "rewrite")
    finally:
        backend.close()
    assert got.runs == len(parts) > 1
    assert got.seconds > got.load_seconds > 0 and got.prompt_tokens > got.file_tokens > 100
    assert got.seconds >= got.load_seconds + got.prefill_seconds + got.decode_seconds


def test_the_runs_have_a_cache_of_their_own_and_the_first_is_a_new_users(monkeypatch, isolated_dirs):
    """The bench's runs start from a user cache that is empty but for the models, and
    leave the user's own as it was; every warm-up is kept, the first (the essay's) first."""
    monkeypatch.setenv("PEDIT_BACKEND", "reference")
    other = next(t for t in load_tasks() if t.id == "prose-walden")
    runs = e2e.run_all([other, TASK], ["pedit"], 0)
    assert [(x.task, x.repeat, x.exit_code) for x in runs] == [(TASK.id, -1, 0), (other.id, -1, 0)]
    assert not (isolated_dirs / "cache" / "pedit" / "costs").exists()


def test_a_baseline_installation_runs_the_same_commands_warmed_up_after_pedits(monkeypatch, isolated_dirs):
    """--baseline PYTHON: another installation's pedit (here this one's own Python) runs the
    same command, warmed up after pedit's; its version is the commit its pedit comes from."""
    monkeypatch.setenv("PEDIT_BACKEND", "reference")
    # from a folder with a package of that name, which `python -m pedit` would import
    # first were the runs started here: they start from the file's folder, as a user's do
    decoy = isolated_dirs / "decoy"
    (decoy / "pedit").mkdir(parents=True)
    (decoy / "pedit" / "__init__.py").write_text("raise SystemExit(9)\n")
    monkeypatch.chdir(decoy)
    python = Path(sys.executable)
    runs = e2e.run_all([TASK], ["pedit", "baseline"], 1, baseline=python)
    got = [(x.config, x.repeat, x.exit_code) for x in runs]
    assert got == [("pedit", -1, 0), ("baseline", -1, 0), ("pedit", 0, 0), ("baseline", 0, 0)]
    assert runs[2].output == runs[3].output  # one installation: the same text
    here = Path(e2e.__file__).parent
    head = subprocess.run(
        ["git", "-C", str(here), "log", "-1", "--format=%h %s"], capture_output=True, text=True
    )
    assert e2e.version(python) == {"python": str(python), "commit": head.stdout.strip()[:80] or None}


def test_the_baseline_goal_and_table_are_its_medians_against_pedits():
    runs = []
    rows = {"passes_by_size": {"8": 5}, "rejected": 5, "backend_seconds": 2.0, "rejections": 1,
            "rejected_seconds": 0.1}  # fmt: skip
    for r, (p, b) in enumerate([(10, 12), (11, 13), (12, 11)]):
        runs += [
            run("a", "pedit", r, p, rows_read=50, accepted=30, forced=9, **rows),
            run("a", "baseline", r, b, rows_read=60, accepted=40, forced=0, **rows),
        ]
    runs += [run("b", "pedit", 0, 10, output="y"), run("b", "baseline", 0, 9.5)]
    data = {"runs": runs, "tasks": [{"id": "a"}, {"id": "b"}], "baseline": {"python": "/o/python",
            "commit": "abc x"}, "machine": {"cpu": "c", "cores": 2, "python": "3.11"}, "started": "s",
            "command": "c", "model": "m", "repeats": 3}  # fmt: skip
    goals = {g: (v, ok) for g, v, ok in e2e_report.goals(data)}
    # a: 12 / 11 = 1.09x; b: 9.5 / 10 = 0.95x
    assert goals["every task end to end >= 1.0x the baseline (an earlier pedit, interleaved)"] == (
        "worst 0.95x (b)", False)  # fmt: skip
    text = e2e_report.markdown(data)
    assert "/o/python, at `abc x`" in text
    assert "| a | 11.0 | 12.0 | 1.09x | 3.0 / 3.0 | 50 / 60 | 9 / 0 | 3 of 3 |" in text
    assert "| b | 10.0 | 9.5 | 0.95x | 3.0 / 3.0 | 0 / 0 | 0 / 0 | 0 of 1 |" in text


def test_the_skeleton_goal_is_the_share_that_took_no_draw_against_the_skeletons():
    """A fix's answer of 100 tokens with 30 forced drew 70 of the file's 100 tokens: 30%
    took no draw, against a skeleton of 25 tokens (25%): met; a task with a 40-token
    skeleton misses it. Tasks that are not fixes, and runs without the count, are left out."""
    runs = []
    for task, forced, inside in (("a", 30, 25), ("b", 30, 40), ("c", 0, 90)):
        runs += [run(task, "pedit", 0, 10, completion_tokens=100, forced=forced),
                 run(task, "reading", 0, 5, skeleton_tokens=inside)]  # fmt: skip
    runs += [run("d", "pedit", 0, 10), run("d", "reading", 0, 5)]
    tasks = [{"id": "a", "command": "fix"}, {"id": "b", "command": "fix"}, {"id": "c", "command": "refactor"},
             {"id": "d", "command": "fix"}]  # fmt: skip
    data = {"runs": runs, "tasks": tasks, "machine": {"cpu": "c", "cores": 2, "python": "3.11"},
            "started": "s", "command": "c", "model": "m", "repeats": 1}  # fmt: skip
    goals = {g: (v, ok) for g, v, ok in e2e_report.goals(data)}
    key = (
        "a fix's tokens that took no draw >= the share of its file's tokens in the skeleton (every fix task)"
    )
    assert goals[key] == ("worst 30% against 40% (b)", False)
    text = e2e_report.markdown(data)
    assert "| a | 100 | 25 = 25% | 100 / 30 / 70 | 30% |" in text
    assert "| c |" not in text.split("## The skeleton")[1] and "| d |" not in text.split("## The skeleton")[1]


def test_the_skeletons_tokens_are_those_wholly_inside_it():
    """Counted on the reference backend's tokenizer: a line of code is all skeleton, a
    sentence with no line break is all prose, a link's target is skeleton and its text is not."""
    backend = open_backend("reference")
    try:
        code = "x = compute(1, 2)"
        assert e2e.skeleton_tokens(backend, code, "a.py") == (len(backend.tokenize(code)),) * 2
        prose = "Hello world, this is prose."
        assert e2e.skeleton_tokens(backend, prose, "a.txt") == (len(backend.tokenize(prose)), 0)
        # a link: each token counted when every byte of it is a skeleton byte (a set, recounted)
        link = "See [the guide](https://example.org/a/long/path/to/the/guide.html) now"
        sk = skeleton.of(link, "a.md")
        inside_bytes = {
            b for sp in sk.spans for b in range(len(link[: sp.start].encode()), len(link[: sp.end].encode()))
        }
        at, want = 0, 0
        for t in backend.tokenize(link):
            end = at + len(backend.token_bytes(t))
            want += all(b in inside_bytes for b in range(at, end))
            at = end
        assert e2e.skeleton_tokens(backend, link, "a.md") == (len(backend.tokenize(link)), want)
        assert 0 < want < len(backend.tokenize(link))
    finally:
        backend.close()


def test_a_reading_run_times_the_answers_tokens_read_as_a_prompt():
    """The default model (real llama.cpp) reads the essay's pieces as pedit's prompts, then
    their drafts (the file and each closing fence) as a prompt is read: the rate pedit's
    verification is held to."""
    got = e2e.run_once(TASK, "reading", 0)
    assert got.exit_code == 0 and got.load_seconds > 0 and got.decode_seconds > 0
    assert got.completion_tokens > len(TASK.text()) // 8  # every piece's file tokens, and more


def test_goals_are_the_medians_ratios():
    runs = [run("a", "pedit", -1, 99.0)]  # the untimed warm-up run counts for nothing
    for r, (p, o, q) in enumerate([(10, 20, 15), (12, 18, 14), (11, 30, 16)]):
        runs += [run("a", "pedit", r, p), run("a", "plain", r, o), run("a", "lookup", r, q)]
    runs += [run("b", "pedit", 0, 10, read=130), run("b", "plain", 0, 14, output="y")]
    data = {"runs": runs, "tasks": [{"id": "a"}, {"id": "b"}]}
    goals = {g.split(" >=")[0].split(" <=")[0]: (v, ok) for g, v, ok in e2e_report.goals(data)}
    # a: plain 20 / pedit 11 = 1.82x; b: 1.4x; median 1.61x
    assert goals["default commands end to end"] == ("1.61x (from 1.40x to 1.82x)", True)
    assert goals["end to end"] == ("1.36x (from 1.36x to 1.36x)", False)  # lookup 15 / 11
    assert goals["every task end to end"] == ("worst 1.40x (b)", True)
    assert goals["prompt tokens read per command"] == ("worst 1.30x (b), median 1.15x", False)
    # b's pedit wrote another output than plain's "y": the same on 1 task of 2
    assert goals["pedit's output the same as plain decoding's, every round, on"] == ("1 of 2 = 50%", False)
    # the first warm-up is a new user's first command: against the task's later runs' median
    first = "a new user's first command (a, empty cache) within 1.5x of a later one"
    assert goals[first] == ("99.0 / 11.0 s = 9.00x", False)
    data |= {"machine": {"cpu": "c", "cores": 2, "python": "3.11"}, "started": "s", "command": "c",
             "model": "m", "repeats": 3}  # fmt: skip
    text = e2e_report.markdown(data)
    # runs from before the tools' reads were kept apart: "–" for them (they are in the prompt's time)
    row = "| a | 11.0 | 20.0 | 15.0 | 1.82x | 1.36x | 5.0 / 1.0 / 2.0 / – / 3.0 | 100 / 100 = 1.00x | – | – |"
    assert row in text
    assert "same output as plain decoding in every round on 1 of 2 tasks; on b, 1 of 1 rounds differ" in text
    # runs that say how many runs each made: the prompt tokens read, as file + runs × frame
    frames = "file tokens + runs × frame = tokens read, b 100 + 2 × 15 = 130 (1.30x)."
    assert frames not in text
    data["runs"] = [dict(x, runs=2) if x["task"] == "b" else x for x in data["runs"]]
    assert frames in e2e_report.markdown(data)


def test_the_copy_heavy_answer_is_held_to_the_reading_rate_and_the_live_line_to_the_measure():
    copy = e2e.COPY
    runs = [
        # pedit answers 120 tokens in 3 s (40 tok/s); the model reads them in 2.4 s (50 tok/s): 80%
        run(copy, "pedit", 0, 10, completion_tokens=120, reported=1.5),
        run(copy, "reading", 0, 4, completion_tokens=120, decode_seconds=2.4),
        run(copy, "plain", 0, 14, decode_seconds=6.0),  # prompt + answer: 8 s against 5 s = 1.6x
        run("b", "pedit", 0, 10, reported=1.0),
        run("b", "plain", 0, 10),  # 5 s against 5 s: the live line said 1.0x, right
    ]
    data = {"runs": runs, "tasks": [{"id": copy}, {"id": "b"}]}
    goals = {g.split(" >=")[0].split(" within")[0]: (v, ok) for g, v, ok in e2e_report.goals(data)}
    assert goals[f"the answer of a copy-heavy edit ({copy})"] == ("40 / 50 tok/s = 80%", True)
    assert goals["the live line's speedup with the prompt"] == (f"worst -6% ({copy})", True)  # 1.5 / 1.6
    # perfect drafts: pedit's 10 s with its 3 s answer read in 2.4 s instead, against plain's 14 s
    assert e2e_bounds.bound(data, copy) == pytest.approx(14 / 9.4) and e2e_bounds.bound(data, "b") is None


def test_where_the_answer_goes_is_the_median_answers_own_figures():
    """Issue 38: per task, pedit's run with the median answer time, its figures as
    --stats-json kept them: in the model and in pedit, the reading-rate ideal, the rows
    read by kind, the passes by size, the tools' reads (out of the start-up's time)."""
    figures = {"tool_seconds": 0.5, "reading_seconds": 1.2, "rows_read": 120, "accepted": 80, "rejected": 20,
               "forced": 5, "passes_by_size": {"1": 4, "32": 2, "64": 1}, "rejections": 4,
               "rejected_seconds": 0.8}  # fmt: skip
    runs = [
        run("a", "pedit", 0, 10, decode_seconds=2.0, backend_seconds=1.5, **figures),
        run("a", "pedit", 1, 11, decode_seconds=3.0, backend_seconds=2.5, **figures),  # the median answer
        run("a", "pedit", 2, 12, decode_seconds=4.0, backend_seconds=3.5, **figures),
        run("a", "plain", 0, 20, tool_seconds=0.5),
    ]
    data = {"runs": runs, "tasks": [{"id": "a"}], "machine": {"cpu": "c", "cores": 2, "python": "3.11"},
            "started": "s", "command": "c", "model": "m", "repeats": 3}  # fmt: skip
    text = e2e_report.markdown(data)
    rejections = "4: 5.0 rows each, 0.8 s (200 ms each)"  # 20 rows in 4 rejections
    assert (
        f"| a | 3.0 | 2.5 / 0.5 | 1.2 | 120: 80 / 20 / 5 / 15 | {rejections} | 7: 1×4, 32×2, 64×1 | 0.5 |"
        in text
    )
    assert "| 4.5 / 1.0 / 2.0 / 0.5 / 3.0 |" in text  # 11 s less load, prompt, tools and answer
    old = {"runs": [run("a", "pedit", 0, 10)], "tasks": [{"id": "a"}]} | {
        k: data[k] for k in data if k != "runs"
    }
    assert "Where pedit's answer goes" not in e2e_report.markdown(old)


def test_merged_runs_replace_a_tasks_earlier_runs(tmp_path):
    first = {
        "machine": {"cpu": "c"},
        "command": "one",
        "started": "s1",
        "tasks": [{"id": "a"}, {"id": "b"}],
        "runs": [run("a", "pedit", 0, 10), run("a", "plain", 0, 20), run("b", "pedit", 0, 5)],
    }
    again = {"machine": {"cpu": "c"}, "command": "two", "started": "s2", "tasks": [{"id": "a"}],
             "runs": [run("a", "pedit", 0, 8)]}  # fmt: skip
    merged = e2e_report.merge([first, again])
    got = sorted((r["task"], r["config"], r["seconds"]) for r in merged["runs"])
    assert got == [("a", "pedit", 8), ("a", "plain", 20), ("b", "pedit", 5)]
    assert [t["id"] for t in merged["tasks"]] == ["a", "b"] and merged["command"] == "one and two"
    with pytest.raises(ValueError, match="different machines"):
        e2e_report.merge([first, {**again, "machine": {"cpu": "other"}}])
    # the commit each run measured, in the order of their commands: the header names both
    both = e2e_report.merge([{**first, "pedit": {"commit": "a1b2c3d one change"}},
                             {**again, "pedit": {"commit": "e4f5a6b another"}}])  # fmt: skip
    assert e2e_report._commits(both) == "pedit at a1b2c3d, e4f5a6b, "
    assert e2e_report._commits({"pedit": {"commit": "a1b2c3d one change"}}) == "pedit at a1b2c3d, "
    assert e2e_report._commits({}) == ""


def test_llama_server_is_the_peer_the_cli_and_pedit_serve_are_held_to():
    """The best llama-server configuration's median over the CLI's (the whole command) and
    over pedit serve's (the request), per task; the goals are their medians."""
    runs = []
    for r, (cli, serve, plain, simple, mod) in enumerate(
        [(10, 8, 20, 15, 16), (12, 9, 21, 18, 14), (11, 8, 22, 15, 16)]
    ):
        runs += [run("a", "pedit", r, cli), run("a", "pedit serve", r, serve),
                 run("a", "llama-server", r, plain), run("a", "llama-server ngram-simple", r, simple),
                 run("a", "llama-server ngram-mod", r, mod)]  # fmt: skip
    runs += [run("b", "pedit", 0, 10), run("b", "llama-server ngram-mod", 0, 12)]  # b: no pedit serve
    data = {"runs": runs, "tasks": [{"id": "a"}, {"id": "b"}]}
    assert e2e_medians.best_peer(data, "a") == (15, "llama-server ngram-simple")  # medians 21, 15, 16
    goals = {g.split(" >=")[0] + (" every" if "every task" in g else ""): (v, ok)
             for g, v, ok in e2e_report.goals(data)}  # fmt: skip
    assert goals["the CLI end to end (a new process, load included)"] == (
        "1.28x (from 1.20x to 1.36x)",
        False,
    )
    assert goals["pedit serve + prediction"] == ("1.88x (from 1.88x to 1.88x)", True)
    assert goals["pedit serve + prediction every"] == ("worst 1.88x (a)", True)  # b: no pedit serve
    data |= {"machine": {"cpu": "c", "cores": 2, "python": "3.11"}, "started": "s", "command": "c",
             "model": "m", "repeats": 3}  # fmt: skip
    text = e2e_report.markdown(data)
    # each server's cell: the request, and (the prompt + the answer) as the server says them
    a = "| a | 11.0 | 8.0 (2.0 + 3.0) | 21.0 (2.0 + 3.0) | 15.0 (2.0 + 3.0) | 16.0 (2.0 + 3.0) |"
    assert a + " llama-server ngram-simple | 1.36x | 1.88x |" in text
    assert "| b | 10.0 | – | – | – | 12.0 (2.0 + 3.0) | llama-server ngram-mod | 1.20x | – |" in text


def test_what_bounds_the_goals_against_llama_server_is_a_perfect_draft_with_the_rest_as_it_was():
    """A perfect draft: the answer at the reading runs' rate (10 tokens in 1 s here), the
    rest of each run as it was. The CLI: 11 - 3 + 1 = 9 s against the best server's 15 s;
    pedit serve: 8 - 3 + 1 = 6 s. What the server never pays, the CLI's start-up, load and
    tools: 11 - 2 - 3 = 6 s (no tools), 40% of 15 s."""
    runs = [run("a", "pedit", 0, 11), run("a", "pedit serve", 0, 8), run("a", "llama-server", 0, 15),
            run("a", "reading", 0, 9, decode_seconds=1.0)]  # fmt: skip
    data = {"runs": runs, "tasks": [{"id": "a"}]}
    assert e2e_bounds.peer_bound(data, "a", "pedit") == pytest.approx(15 / 9)
    assert e2e_bounds.peer_bound(data, "a", "pedit serve") == pytest.approx(15 / 6)
    text = e2e_bounds.paragraphs(data)
    assert "the CLI would be at most 1.67x (median; a 1.67x)" in text
    assert "a 6.0 s = 40%" in text and "would be at most 2.50x (median; a 2.50x)" in text
    # a server that said nothing of its prompt (all its seconds the answer's): no bound for it
    runs[1] |= {"prefill_seconds": 0.0, "decode_seconds": 8.0}
    assert e2e_bounds.peer_bound(data, "a", "pedit serve") is None


def test_the_oracles_bound_is_the_answer_shortened_by_the_replays_share():
    """A replay (scripts/replay_passes.py's JSON) merged in: the oracle took half the
    planner's priced time on the CLI's answer to task a, so pedit's 3 s answer takes 1.5 s
    and its 11 s run 9.5 s: 20 / 9.5 against plain, 15 / 9.5 against the best server; and
    three quarters on pedit serve's, whose 8 s request then takes 8 - 3 / 4 s. Runs from
    another machine are refused, as any."""
    timed = [run("a", "pedit", 0, 11), run("a", "plain", 0, 20), run("a", "llama-server", 0, 15),
             run("a", "pedit serve", 0, 8)]  # fmt: skip
    runs = {"machine": {"cpu": "c"}, "command": "e2e", "started": "s", "tasks": [{"id": "a"}], "runs": timed}
    half = {"planner": {"seconds": 4.0}, "oracle": {"seconds": 2.0}}
    most = {"planner": {"seconds": 4.0}, "oracle": {"seconds": 3.0}}
    groups = [{"name": "e2e", "tasks": [{"id": "a", **half}, {"id": "z", **half}]},
              {"name": "serve", "serve": True, "tasks": [{"id": "a", **most}]}]  # fmt: skip
    replay = {"kind": "replay", "machine": {"cpu": "c"}, "command": "replay", "started": "", "groups": groups}
    data = e2e_report.merge([runs, replay])
    assert data["oracle"] == {"a": 0.5} and data["oracle_serve"] == {"a": 0.75}
    assert data["command"] == "e2e and replay"
    text = e2e_bounds.paragraphs(data)
    assert "the answers take a 0.50 of the planner's time" in text
    assert f"against --speculate off {20 / 9.5:.2f}x (median; a {20 / 9.5:.2f}x)" in text
    assert f"the best llama-server configuration {15 / 9.5:.2f}x (median; a {15 / 9.5:.2f}x)" in text
    assert f"pedit serve (a 0.75 of its answers' time, replayed as well) {15 / 7.25:.2f}x" in text
    assert "oracle" not in e2e_report.merge([runs])
    with pytest.raises(ValueError, match="different machines"):
        e2e_report.merge([runs, {**replay, "machine": {"cpu": "other"}}])


def test_without_llama_server_its_configurations_are_left_out(tmp_path):
    assert "llama-server" not in e2e.configs(True, tmp_path / "absent")
    built = tmp_path / "llama-server"
    built.write_text("")
    assert e2e.configs(True, built) == [c for c in e2e.CONFIGS if c != "baseline"]
    assert e2e.configs(False, built) == ["pedit", "resident", "plain", "reading"]
    assert e2e.configs(False, built, baseline=True) == ["pedit", "resident", "baseline", "plain", "reading"]


def test_a_served_run_times_one_request_on_a_real_pedit_serve(monkeypatch):
    """pedit serve in its own process, the real `openai` client, the task's chat request
    with the file as `prediction`: the request's seconds and the answer come back."""
    monkeypatch.setenv("PEDIT_BACKEND", "reference")
    got = e2e.run_once(TASK, "pedit serve", 0)
    assert got.exit_code == 0 and got.seconds > 0 and got.completion_tokens > 0 and got.output
    # its own split of the request, from the response's `pedit` figures; the rest is HTTP
    assert got.load_seconds == 0 and got.prefill_seconds > 0 and got.decode_seconds > 0
    assert got.prefill_seconds + got.decode_seconds < got.seconds
    assert got.prompt_tokens > got.completion_tokens


def test_llama_servers_own_timings_split_its_request():
    """llama-server's `timings` (its non-standard field, ms) as the openai client keeps it."""
    from openai.types.chat import ChatCompletion

    from pedit.bench import servers

    reply = ChatCompletion.model_validate({
        "id": "x", "object": "chat.completion", "created": 0, "model": "m",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "y"}}],
        "usage": {"prompt_tokens": 300, "completion_tokens": 20, "total_tokens": 320},
        "timings": {"prompt_n": 180, "cache_n": 120, "prompt_ms": 2500.0, "predicted_ms": 1250.0},
    })  # fmt: skip
    assert servers.split(reply) == {"prompt_seconds": 2.5, "answer_seconds": 1.25, "prompt_tokens": 300,
                                    "cached_tokens": 120}  # fmt: skip
    reply.timings = None  # a server that says nothing
    assert servers.split(reply)["answer_seconds"] is None


def test_the_live_lines_decode_speedup_is_recovered_from_its_speedup_with_the_prompt():
    """overall = (b + s d) / (b + d): a run with prompt + tools b = 2.5 s, answer d = 3 s and
    a live line of 1.5 with the prompt showed s = (1.5 * 5.5 - 2.5) / 3 = 1.9167; plain's
    answer took 6 s, so the measured decode speedup is 2 and the live line is 4.2% low."""
    runs = [run("a", "pedit", r, 9.0, reported=1.5, tool_seconds=0.5) for r in range(3)]
    runs += [run("a", "plain", r, 12.0, decode_seconds=6.0, tool_seconds=0.5) for r in range(3)]
    data = {"runs": runs, "tasks": [{"id": "a"}]}
    assert e2e_report._decode_error(data, "a") == pytest.approx((1.5 * 5.5 - 2.5) / 3 / 2 - 1)
    goal = next(g for g in e2e_report.goals(data) if "decode speedup" in g[0])
    assert goal[1:] == ("worst -4% (a)", True)


def test_the_resident_configuration_is_held_to_its_own_cost_to_serve_and_to_llama_server():
    """Issue 56's rows: the resident command's own cost (start-up + connection: all but the
    prompt, the tools and the answer), its seconds against pedit serve's request and the best
    llama-server's, and a new user's first command with the resident starting against one
    without (each configuration's first warm-up); README's table is the same run's."""
    first, copy = e2e.FIRST, e2e.COPY
    resident = {"load_seconds": 0.05}
    runs = [run(first, "pedit", -1, 12.0), run(copy, "pedit", -1, 20.0),
            run(first, "resident", -1, 11.5, **resident),
            run(copy, "resident", -1, 9.0, **resident)]  # fmt: skip
    for r in range(3):
        runs += [run(first, "pedit", r, 9.0), run(first, "resident", r, 5.2, **resident),
                 run(first, "plain", r, 10.0), run(first, "pedit serve", r, 5.0),
                 run(first, "llama-server", r, 4.8),
                 run(copy, "pedit", r, 16.0), run(copy, "resident", r, 5.4, **resident),
                 run(copy, "plain", r, 30.0, output="y"), run(copy, "pedit serve", r, 5.0),
                 run(copy, "llama-server", r, 8.0)]  # fmt: skip
    data = {"runs": runs, "tasks": [{"id": first}, {"id": copy}], "machine": {"cpu": "c", "cores": 2,
            "python": "3.11"}, "started": "s", "command": "c", "model": "m", "repeats": 3}  # fmt: skip
    goals = {g: (v, ok) for g, v, ok in e2e_report.goals(data)}
    # own: 5.2 - (2 + 3) = 0.2 s on the essay, 5.4 - 5 = 0.4 s on the rename
    own = "a command's own cost with the model resident (start-up + connection) <= 0.3 s on every task"
    assert goals[own] == (f"worst 0.40 s ({copy})", False)
    assert goals["the resident CLI within 10% of pedit serve's request on every task"] == (
        f"worst 1.08x ({copy})", True)  # fmt: skip
    # the essay's best llama-server (4.8 s) is ahead of pedit serve (5.0 s): only the rename is held
    assert goals["the resident CLI >= 1.0x the best llama-server on every task where pedit serve is"] == (
        f"worst 1.48x ({copy}), on 1 of 2 tasks", True)  # fmt: skip
    assert goals[f"the CLI's rename ({copy}) with the model resident >= 1.4x the best llama-server "
                 "configuration"] == ("1.48x", True)  # fmt: skip
    new = f"a new user's first command ({first}) no slower with the resident starting than without"
    assert goals[new] == ("11.5 / 12.0 s = 0.96x", True)
    text = e2e_report.markdown(data)
    assert text.startswith("# End to end: the default commands, a new process per run, and with the model")
    split = "2.0 / 0.0 / 3.0"  # prompt / tools / answer
    assert (
        f"| {first} | 9.0 | 5.2 | 1.73x | 0.20 (0.15 + 0.05) | {split} | 5.0 = 1.04x | 0.92x | 3 of 3 |"
        in text
    )
    assert (
        f"| {copy} | 16.0 | 5.4 | 2.96x | 0.40 (0.35 + 0.05) | {split} | 5.0 = 1.08x | 1.48x | 0 of 3 |"
        in text
    )
    table = e2e_report.readme(data)
    assert f"| {first} | 9.0 s | 5.2 s | 10.0 s | 4.8 s |" in table
    assert f"| {copy} | 16.0 s | 5.4 s | 30.0 s | 8.0 s |" in table


def test_readmes_table_goes_between_its_markers_and_nowhere_else():
    text = "# pedit\n\nintro\n<!-- e2e table -->\nold\nrows\n<!-- /e2e table -->\nmore\n"
    assert (
        readme.replace_block(text, "new")
        == "# pedit\n\nintro\n<!-- e2e table -->\nnew\n<!-- /e2e table -->\nmore\n"
    )
    for broken in (
        "no markers\n",
        "<!-- /e2e table -->\n<!-- e2e table -->\n",
        text + "<!-- e2e table -->\n",
    ):
        with pytest.raises(ValueError):
            readme.replace_block(broken, "new")


def test_the_resident_configuration_starts_one_resident_and_stops_it(monkeypatch, isolated_dirs):
    """The resident configuration's warm-up starts the resident model (in a runtime
    directory of its own, not the user's), its timed runs are answered by it with the same
    text as a new process's, and none is left when the runs end."""
    monkeypatch.setenv("PEDIT_BACKEND", "reference")
    before = _residents()
    runs = e2e.run_all([TASK], ["pedit", "resident"], 1)
    got = [(x.config, x.repeat, x.exit_code) for x in runs]
    assert got == [("pedit", -1, 0), ("resident", -1, 0), ("pedit", 0, 0), ("resident", 0, 0)]
    assert runs[2].output == runs[3].output
    assert runs[1].load_seconds > 0.1 > runs[3].load_seconds  # the start, then a connection
    # the command's own: all but the connection and the time its answer took, asked to outcome
    x = runs[3]
    assert x.answering_seconds > 0 and x.load_seconds + x.answering_seconds < x.seconds
    assert _residents() == before and not (isolated_dirs / "run" / "pedit").exists()


def _residents() -> set[int]:
    """The resident processes this test started (their environment names its folders; a
    user's own resident on the machine is not one)."""
    from conftest import _cmdline, processes_of

    home = str(Path(os.environ["XDG_CACHE_HOME"]).parent)
    return {p for p in processes_of(home) if "pedit.resident.server" in _cmdline(p)}


def test_the_configurations_share_one_users_cache_but_the_resident(monkeypatch):
    """Every configuration but the resident runs in one user cache (what pedit's runs learn,
    pedit serve and the baseline read); the resident's has its own, and its own runtime
    directory, so that its first warm-up is a new user's first command."""
    seen = []
    from types import SimpleNamespace

    def run_once(task, config, repeat, env, baseline):
        seen.append((config, env))
        return SimpleNamespace(config=config)

    monkeypatch.setattr(e2e, "run_once", run_once)
    monkeypatch.setattr(e2e, "_stop_resident", lambda env: None)
    e2e.run_all([TASK], ["pedit", "resident", "plain", "pedit serve"], 1)
    caches = {config: env["XDG_CACHE_HOME"] for config, env in seen}
    assert caches["pedit"] == caches["plain"] == caches["pedit serve"] != caches["resident"]
    runtime = {config: env.get("XDG_RUNTIME_DIR") for config, env in seen}
    assert runtime["resident"] != runtime["pedit"]
    assert {config: env["PEDIT_KEEP_ALIVE"] for config, env in seen} == {
        "pedit": "0", "resident": "-1", "plain": "0", "pedit serve": "0"}  # fmt: skip


def test_the_commands_read_pedits_compiled_bytecode():
    """A pip install compiles pedit's modules; an editable checkout under
    PYTHONDONTWRITEBYTECODE would compile them again in every timed command: the runs
    compile them first (a module's bytecode, removed, is written again)."""
    from pedit.bench import e2e_resident

    pyc = Path(importlib.util.cache_from_source(e2e_resident.__file__))
    pyc.unlink(missing_ok=True)
    e2e.compiled(sys.executable)
    assert pyc.is_file()
    assert not any(Path(e2e.__file__).parent.glob("corpus/**/__pycache__"))  # data, not modules


def test_the_small_cases_run_with_the_model_resident_and_the_edit_runs_its_own_piece(monkeypatch, isolated_dirs):
    """Issue 71's small cases (e2e_small.py), on the reference backend: a one-line file (the
    model runs), its --diff then -y (the -y reads no prompt: the answer cache), and the
    30-paragraph file fixed, then again after a one-word edit: one run, its own piece's."""
    monkeypatch.setenv("PEDIT_BACKEND", "reference")
    before = _residents()
    runs = e2e.run_all([], ["resident"], 1, small=True)
    assert _residents() == before  # the resident the cases started is stopped with the run
    assert [(x.task, x.config, x.repeat, x.exit_code) for x in runs] == [
        (c, "small", 0, 0) for c in ("one line", "diff then -y", "edit: first", "edit: again")]  # fmt: skip
    read = {x.task: x.prompt_tokens - x.cached_tokens for x in runs}
    assert read["one line"] > 0 and read["diff then -y"] == 0
    first, again = runs[2], runs[3]
    assert first.runs > 10 and again.runs == 1 and read["edit: again"] < read["edit: first"] / 4


def test_the_small_cases_goals_are_their_medians():
    runs = [run("one line", "small", 0, 0.9), run("one line", "small", 1, 1.3), run("one line", "small", 2, 0.8),
            run("diff then -y", "small", 0, 0.31), run("edit: first", "small", 0, 40.0),
            run("edit: again", "small", 0, 11.0)]  # fmt: skip
    data = {"runs": runs, "tasks": []}
    got = {g: (v, ok) for g, v, ok in e2e_small.goals(data)}
    assert got["a one-line file with the model resident <= 1.0 s"] == ("0.90 s", True)
    assert got["`--diff` then `-y`: the `-y` <= 0.3 s"] == ("0.31 s", False)
    assert got["a one-word edit of the 30-paragraph file <= 1/4 of its first fix"] == ("11.0 / 40.0 s = 0.28", False)
    assert any(line.startswith("| edit: again | 11.00 |") for line in e2e_small.section(data))
