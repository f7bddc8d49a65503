"""The end-to-end suite's runner and report (pedit/bench/e2e.py): the command each
configuration runs, a real run of the CLI in a new process on the reference backend (its
figures read back from --stats-json), and the goals computed from the medians."""

from __future__ import annotations

import sys

from pedit.bench import e2e
from pedit.bench.corpus import load_tasks

TASK = next(t for t in load_tasks() if t.id == "md-essay-demo")


def run(task, config, repeat, seconds, *, read=100, cached=50, file_tokens=100, output="x"):
    return {
        "task": task, "config": config, "repeat": repeat, "seconds": seconds, "load_seconds": 1.0,
        "prefill_seconds": 2.0, "decode_seconds": 3.0, "prompt_tokens": read + cached,
        "cached_tokens": cached, "completion_tokens": 10, "file_tokens": file_tokens, "output": output,
        "exit_code": 0,
    }  # fmt: skip


def test_each_configuration_runs_the_users_command_in_a_new_process(tmp_path):
    path, stats = tmp_path / "essay.md", tmp_path / "s.json"
    assert e2e.command(TASK, path, "pedit", stats) == [
        sys.executable, "-m", "pedit", "fix", str(path), "--stdout", "--stats-json", str(stats),
    ]  # fmt: skip
    assert e2e.command(TASK, path, "plain", stats)[-2:] == ["--speculate", "off"]
    assert e2e.command(TASK, path, "lookup", stats)[1:4] == ["-m", "pedit.bench.e2e", "md-essay-demo"]


def test_a_real_run_reads_its_figures_back(monkeypatch):
    """The CLI on the reference backend (PEDIT_BACKEND), in a new process: its load time,
    prompt and file tokens come back through --stats-json."""
    monkeypatch.setenv("PEDIT_BACKEND", "reference")
    got = e2e.run_once(TASK, "plain", 0)
    assert got.exit_code == 0 and got.output
    assert got.seconds > got.load_seconds > 0 and got.prompt_tokens > got.file_tokens > 100
    assert got.seconds >= got.load_seconds + got.prefill_seconds + got.decode_seconds


def test_goals_are_the_medians_ratios():
    runs = [run("a", "pedit", -1, 99.0)]  # the untimed warm-up run counts for nothing
    for r, (p, o, q) in enumerate([(10, 20, 15), (12, 18, 14), (11, 30, 16)]):
        runs += [run("a", "pedit", r, p), run("a", "plain", r, o), run("a", "lookup", r, q)]
    runs += [run("b", "pedit", 0, 10, read=130), run("b", "plain", 0, 14, output="y")]
    data = {"runs": runs, "tasks": [{"id": "a"}, {"id": "b"}]}
    goals = {g.split(" >=")[0].split(" <=")[0]: (v, ok) for g, v, ok in e2e.goals(data)}
    # a: plain 20 / pedit 11 = 1.82x; b: 1.4x; median 1.61x
    assert goals["default commands end to end"] == ("1.61x (from 1.40x to 1.82x)", True)
    assert goals["end to end"] == ("1.36x (from 1.36x to 1.36x)", False)  # lookup 15 / 11
    assert goals["prompt tokens read per command"] == ("worst 1.30x (b), median 1.15x", False)
    data |= {"machine": {"cpu": "c", "cores": 2, "python": "3.11"}, "started": "s", "command": "c",
             "model": "m", "repeats": 3}  # fmt: skip
    text = e2e.markdown(data)
    assert "| a | 11.0 | 20.0 | 15.0 | 1.82x | 1.36x | 5.0 / 1.0 / 2.0 / 3.0 | 100 / 100 = 1.00x |" in text
    assert "same output as plain decoding on 1 of 2 tasks" in text
