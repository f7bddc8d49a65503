"""`pedit bench --structured` end to end: every configuration on the reference backend
(constrained runs identical to plain constrained decoding, coalescence saving passes),
the peers (llama-cpp-python's GBNF grammar, Outlines) on the tiny models, and the report
rendered again from its saved runs."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from pedit.bench.corpus import CORPUS
from pedit.bench.structured import CONFIGS, PEERS, load_structured
from pedit.cli.app import app


def bench(*args):
    result = CliRunner().invoke(app, ["bench", "--structured", *map(str, args)])
    assert result.exit_code == 0, result.output + str(result.exception)
    return result


def test_the_structured_corpus_is_complete():
    tasks = load_structured()
    assert {t.kind for t in tasks} == {"edit", "extract", "regex"}
    sources = (CORPUS / "SOURCES.md").read_text()
    for t in tasks:
        assert (CORPUS / t.file).is_file() and f"`{t.file}`" in sources
        if t.kind == "edit":
            json.loads(t.text())  # a JSON file that parses: pedit constrains it
        if t.kind == "extract":
            json.loads(t.schema_text())
        assert t.request().instruction


@pytest.fixture(scope="module")
def reference_runs():
    args = ("--backends", "reference", "--tasks", "json-tsconfig,extract-pytest,regex", "--json")
    return json.loads(bench(*args).stdout)


def test_every_configuration_runs_and_the_constrained_ones_agree(reference_runs):
    (result,) = reference_runs["results"]
    runs = result["runs"]
    assert {r["config"] for r in runs} == set(CONFIGS)
    for r in runs:
        if r["config"] in ("plain", "coalesce", "pedit"):
            assert r["same"] is True  # the reference backend is exactly lossless
    by = {(r["task"], r["config"]): r for r in runs}
    for task in {r["task"] for r in runs}:
        plain, co = by[(task, "plain")], by[(task, "coalesce")]
        assert plain["coalesced"] == 0 and plain["output_tokens"] == co["output_tokens"]
        assert co["forward_passes"] + co["coalesced"] == plain["forward_passes"]
    assert by[("extract-pytest", "coalesce")]["coalesced"] > 50  # long keys and enums are forced


def test_the_report_and_its_rerender(reference_runs, tmp_path):
    saved = tmp_path / "runs.json"
    saved.write_text(json.dumps(reference_runs))
    md = tmp_path / "structured.md"
    bench("--from", saved, "--markdown", md)
    text = md.read_text()
    assert "| goal | measured | met |" in text and "## reference" in text
    assert "identical output to plain constrained decoding (greedy) | 6/6 cells | yes" in text
    assert json.loads(md.with_suffix(".json").read_text()) == reference_runs
    again = tmp_path / "again.md"
    bench("--from", md.with_suffix(".json"), "--markdown", again)
    assert again.read_text() == text


@pytest.mark.parametrize("kind", ["llama.cpp", "transformers"])
def test_the_peers_run_on_the_same_prompt(kind, tiny_hf, tiny_gguf):
    model = tiny_gguf if kind == "llama.cpp" else tiny_hf
    args = ("--tasks", "json-tsconfig", "--backends", kind, "-m", model, "--n-ctx", "2048", "--json")
    (result,) = json.loads(bench(*args).stdout)["results"]
    peer = [r for r in result["runs"] if r["config"] == PEERS[kind]]
    assert len(peer) == 1
    r = peer[0]
    assert 1 <= r["output_tokens"] <= 1400 and r["forward_passes"] >= 1
    assert r["prefill_seconds"] > 0 and r["coalesced"] == 0
