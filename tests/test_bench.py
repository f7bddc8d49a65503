"""`pedit bench` works end to end: the quick subset on the reference backend (every
configuration, lossless, fewer passes where drafts are right), the peers on the tiny
llama.cpp and transformers models, and the Markdown report (with its chart and raw runs)
regenerated from saved runs without running anything."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from pedit.backends.reference import ReferenceBackend
from pedit.bench.corpus import CATEGORIES, CORPUS, load_tasks, select
from pedit.bench.run import PEDIT_CONFIGS, run_backend
from pedit.cli.app import app


def bench(*args):
    result = CliRunner().invoke(app, ["bench", *map(str, args)])
    assert result.exit_code == 0, result.output + str(result.exception)
    return result


def test_corpus_is_complete():
    tasks = load_tasks()
    assert len(tasks) >= 20
    assert {t.category for t in tasks} == set(CATEGORIES)
    assert len({t.id for t in tasks}) == len(tasks)
    for t in tasks:
        assert (CORPUS / t.file).is_file() and t.source and t.license
        assert t.request().instruction  # every template renders (refactor/edit have instructions)
    assert {t.category for t in select(tasks, quick=True)} == set(CATEGORIES)
    assert "walden.txt" in (CORPUS / "SOURCES.md").read_text()


@pytest.fixture(scope="module")
def quick_reference():
    return json.loads(bench("--quick", "--backends", "reference", "--repeats", "2", "--json").stdout)


def test_quick_on_reference_runs_every_configuration_losslessly(quick_reference):
    (result,) = quick_reference["results"]
    quick = {t.id for t in select(load_tasks(), quick=True)}
    assert {t["id"] for t in quick_reference["tasks"]} == quick
    runs = result["runs"]
    kinds = {t.id: t.kind for t in load_tasks()}
    per_task = {t: len(PEDIT_CONFIGS) - (kinds[t] == "summary") for t in quick}  # no file draft
    assert len(runs) == sum(per_task.values()) * 2
    assert all(r["same"] for r in runs)  # the reference backend is exactly lossless
    assert result["device"] == "cpu"  # a run says where the model ran
    # every pedit configuration records its own estimate of plain decoding's time (the live
    # speedup's baseline), for the report to hold against the plain run; plain has none
    assert all((r["estimated_plain_seconds"] > 0) == (r["config"] != "plain") for r in runs)
    for task in quick:
        by = {(r["config"], r["repeat"]): r for r in runs if r["task"] == task}
        plain = by[("plain", 0)]
        # plain decoding: one pass per token, the prefill included, the last token never evaluated
        assert plain["forward_passes"] in (plain["output_tokens"], plain["output_tokens"] + 1)
        for config in PEDIT_CONFIGS:
            if (config, 0) not in by:
                assert config == "predicted" and kinds[task] == "summary"
                continue
            r = by[(config, 0)]
            assert r["output_tokens"] == plain["output_tokens"]
            assert r["forward_passes"] <= plain["forward_passes"] + r["rejected"]
            # every output token comes from a pass of its own or an accepted draft token
            assert r["forward_passes"] - 1 + r["accepted"] >= r["output_tokens"] - 1
            assert by[(config, 1)]["forward_passes"] == r["forward_passes"]  # deterministic counts


@pytest.mark.parametrize("kind", ["llama.cpp", "transformers"])
def test_peers_run_on_the_same_prompt(kind, tiny_hf, tiny_gguf):
    model = tiny_gguf if kind == "llama.cpp" else tiny_hf
    args = ("--tasks", "open-iso-date", "--backends", kind, "-m", model, "--repeats", "1", "--n-ctx", "1024")
    data = json.loads(bench(*args, "--json").stdout)
    runs = {r["config"]: r for r in data["results"][0]["runs"]}
    peers = [c for c in runs if c not in PEDIT_CONFIGS]
    assert len(peers) == 2
    plain = runs["plain"]
    for name in peers:
        r = runs[name]
        assert 1 <= r["output_tokens"] <= plain["output_tokens"]
        assert 1 <= r["forward_passes"] <= r["output_tokens"] + 1
        assert r["accepted"] + r["forward_passes"] >= r["output_tokens"]
        assert r["prefill_seconds"] > 0 and r["decode_seconds"] > 0  # both timed (a clock never read fails)


def test_markdown_report_and_rerender(quick_reference, tmp_path):
    saved = tmp_path / "runs.json"
    saved.write_text(json.dumps(quick_reference))
    md = tmp_path / "benchmarks.md"
    out = bench("--from", saved, "--markdown", md).output
    assert "reference: decode speedup" in out
    text = md.read_text()
    assert "![decode speedup" in text and "| goal | measured | met |" in text
    cells = len({(r["task"], r["config"]) for r in quick_reference["results"][0]["runs"]})
    n = cells - len({r["task"] for r in quick_reference["results"][0]["runs"]})  # plain is the baseline
    assert f"identical output to plain decoding (greedy) | {n}/{n} task x configuration cells" in text
    assert md.with_suffix(".png").read_bytes()[:4] == b"\x89PNG"
    assert json.loads(md.with_suffix(".json").read_text()) == quick_reference
    md2 = tmp_path / "again.md"
    bench("--from", md.with_suffix(".json"), "--markdown", md2)
    assert md2.read_text() == text.replace("benchmarks.png", "again.png")
    merged = tmp_path / "merged.md"  # a later run of the same backend replaces its tasks' runs
    bench("--from", saved, "--from", saved, "--markdown", merged)
    assert merged.read_text().count("## reference") == 1 and "Re-run in a later process" in merged.read_text()


def test_sampling_check_with_seeds_and_merged_into_the_report(quick_reference, tmp_path):
    data = json.loads(
        bench("--quick", "--backends", "reference", "--repeats", "0", "--seeds", "3", "--json").stdout
    )
    (result,) = data["results"]
    assert result["runs"] == []
    quick = {t.id for t in select(load_tasks(), quick=True)}
    assert {(s["task"], s["seed"]) for s in result["sampled"]} == {(t, i) for t in quick for i in range(3)}
    assert all(s["same"] for s in result["sampled"])  # the reference backend is exactly lossless
    saved, sampled = tmp_path / "greedy.json", tmp_path / "sampled.json"
    saved.write_text(json.dumps(quick_reference))
    sampled.write_text(json.dumps(data))
    md = tmp_path / "b.md"
    bench("--from", saved, "--from", sampled, "--markdown", md)
    text = md.read_text()
    assert text.count("## reference") == 1 and "### Sampling" in text
    n = 3 * len(quick)
    assert f"(sampling: T=0.7, top-p 0.95, 3 seeds) | {n}/{n} runs" in text
    alone = tmp_path / "alone.md"  # a sampling-only report: no chart, still the table
    bench("--from", sampled, "--markdown", alone)
    assert "### Sampling" in alone.read_text() and not alone.with_suffix(".png").exists()


def test_sampling_check_compares_answers_that_differ_by_seed():
    # a weaker copy term: sampling leaves the file often, so each seed draws another answer
    backend = ReferenceBackend(copy=3.0)
    task = next(t for t in load_tasks() if t.id == "prose-walden")
    result = run_backend(backend, "reference", [task], 0, seeds=3, with_peers=False)
    assert len({s.output_tokens for s in result.sampled}) == 3
    assert all(s.same for s in result.sampled) and not result.runs


def test_repeats_zero_needs_seeds():
    result = CliRunner().invoke(app, ["bench", "--quick", "--backends", "reference", "--repeats", "0"])
    assert result.exit_code == 2 and "--seeds" in result.output


def test_unknown_task_is_a_usage_error():
    result = CliRunner().invoke(app, ["bench", "--tasks", "no-such-task", "--backends", "reference"])
    assert result.exit_code == 2 and "no task matches" in result.output


def _run(task: str, config: str, repeat: int, *, passes: int, accepted: int, rejected: int, decode: float):
    """One run of 100 output tokens on backend "x", 0.1 s of prefill, the same output as plain's."""
    from pedit.bench.run import Run

    return Run(
        task=task, backend="x", config=config, repeat=repeat, output_tokens=100, forward_passes=passes,
        accepted=accepted, rejected=rejected, prefill_seconds=0.1, decode_seconds=decode, same=True,
    )  # fmt: skip


def test_a_disturbed_baseline_is_flagged_and_left_out_of_the_goals():
    from pedit.bench.cells import disturbed_tasks
    from pedit.bench.goals import goals
    from pedit.bench.run import BackendResult
    from pedit.engine.costmodel import CostModel

    cost = CostModel((1, 2, 4), (0.02, 0.03, 0.04))  # limit 4 * 0.02 / 0.04 = 2x
    runs = []
    for i in range(5):
        slow = i == 4  # the machine was busy while the last task's baseline ran
        plain_s, fast_s = (10.0 if slow else 4.0), 2.5
        runs += [_run(f"t{i}", "plain", 0, passes=101, accepted=0, rejected=0, decode=plain_s),
                 _run(f"t{i}", "pedit", 0, passes=30, accepted=80, rejected=5, decode=fast_s)]  # fmt: skip
    result = BackendResult("x", "m", {}, cost, runs)
    assert set(disturbed_tasks(result)) == {"t4"}
    (share, *_rest) = goals(result, {f"t{i}": "prose" for i in range(5)})
    assert share[1] == "median 1.60x of 2.00x = 80% (4 tasks; 1 with a disturbed baseline left out)"


def test_the_header_names_the_runs_and_the_step_that_rendered_them(quick_reference):
    from pedit.bench import report

    data = {**quick_reference, "command": "pedit bench --quick --json"}
    alone = report.markdown(data, None)
    assert "Generated by `pedit bench --quick --json` on" in alone and "rendered by" not in alone
    step = "pedit bench --from runs.json --markdown docs/benchmarks.md"
    text = report.markdown({**data, "rendered": step}, None)
    assert f"(each run's `--json` saved to a file), then rendered by `{step}`;" in text


def test_rename_and_type_hint_tasks_are_held_to_the_rejected_draft_goal():
    from pedit.bench.goals import goals, repeated_edit_tasks
    from pedit.bench.run import BackendResult
    from pedit.engine.costmodel import CostModel

    tasks = [
        {"id": "code-x-rename", "category": "code"},
        {"id": "code-y-types", "category": "code"},
        {"id": "prose-z", "category": "prose"},
    ]
    assert repeated_edit_tasks(tasks) == {"code-x-rename", "code-y-types"}
    cost = CostModel((1, 2, 4), (0.02, 0.03, 0.04))
    runs = []
    for task, (acc, rej) in {
        "code-x-rename": (200, 10),
        "code-y-types": (100, 12),
        "prose-z": (100, 90),
    }.items():
        for repeat in range(2):  # summed over the repeats: 20/400, 24/200
            runs += [
                _run(task, "plain", repeat, passes=101, accepted=0, rejected=0, decode=4.0),
                _run(task, "pedit", repeat, passes=30, accepted=acc, rejected=rej, decode=2.0),
            ]
    result = BackendResult("x", "m", {}, cost, runs)
    categories = {t["id"]: t["category"] for t in tasks}
    rows = {g: (m, ok) for g, m, ok in goals(result, categories, repeated_edit_tasks(tasks))}
    goal = "rename and type-hint edits: rejected draft tokens <= 10% of accepted"
    assert rows[goal] == ("worst 12% (code-x-rename 5%, code-y-types 12%)", False)
    assert goal not in {g for g, _, _ in goals(result, categories)}  # no such tasks named: no row


def test_a_suite_run_in_parts_is_merged_as_parts_not_as_reruns():
    from pedit.bench.merge import merge

    def part(tasks, started):
        runs = [{"task": t, "config": c} for t in tasks for c in ("plain", "pedit")]
        result = {"backend": "b", "model": "m", "runs": runs, "sampled": [], "cost": {}, "versions": {}}
        return {"results": [result], "command": "c", "started": started, "tasks": [], "repeats": 1}

    merged = merge([part(["a", "b"], "1"), part(["c"], "2"), part(["b"], "3")])
    (home,) = merged["results"]
    assert home["later"] == [{"tasks": ["c"], "started": "2"}]
    assert home["rerun"] == [{"tasks": ["b"], "started": "3"}]
    assert sorted(r["task"] for r in home["runs"]) == ["a", "a", "b", "b", "c", "c"]


def test_the_corpus_names_its_rename_and_type_hint_tasks_so():
    from dataclasses import asdict

    from pedit.bench.corpus import load_tasks
    from pedit.bench.goals import repeated_edit_tasks

    tasks = [asdict(t) for t in load_tasks()]
    checked = {t["id"] for t in tasks if {"rename", "hints"} & set(t["check"])}
    assert checked <= repeated_edit_tasks(tasks)  # every checked rename or type-hint task counts
    assert "md-platformdirs-rename" in repeated_edit_tasks(tasks)  # a rename without a code check
