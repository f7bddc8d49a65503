"""Structured output through the command line (docs/structured.md), on the reference
backend with CliRunner: a .json file stays JSON, --schema / --regex / --grammar constrain
the answer, `pedit extract` prints JSON valid against its schema, and every bad schema,
regex or grammar is one line and exit 2."""

from __future__ import annotations

import json
import re

import jsonschema
import pytest
from typer.testing import CliRunner

from pedit.cli.app import app

REF = ("-b", "reference")
PACKAGE = '{\n  "name": "demo",\n  "version": "1.0.0",\n  "private": true\n}\n'
MEMO = "Memo to all staff, 3 March 2025: the office is closed on Friday. Urgent.\n"
SCHEMA = {
    "type": "object",
    "properties": {
        "kind": {"enum": ["memo", "letter", "invoice"]},
        "urgent": {"type": "boolean"},
        "closed_days": {"type": "integer", "minimum": 0, "maximum": 9},
    },
    "required": ["kind", "urgent", "closed_days"],
    "additionalProperties": False,
}


def invoke(*args):
    return CliRunner().invoke(app, list(map(str, args)))


@pytest.fixture
def files(tmp_path):
    (tmp_path / "package.json").write_text(PACKAGE)
    (tmp_path / "memo.md").write_text(MEMO)
    (tmp_path / "schema.json").write_text(json.dumps(SCHEMA))
    return tmp_path


def test_a_json_file_is_rewritten_as_json(files):
    pkg = files / "package.json"
    args = ("edit", pkg, "add a test script", *REF, "--json", "--temperature", "3", "--max-tokens", "400")
    texts = []
    for seed in range(4):  # sampled rewrites of the random model: changed, and JSON every time
        result = invoke(*args, "--seed", seed)
        record = json.loads(result.stdout)[0]
        if record["stats"]["stop_reason"] == "fence":
            json.loads(record["text"])
            texts.append(record["text"])
    assert len(texts) >= 2 and any(t != PACKAGE for t in texts)
    assert pkg.read_text() == PACKAGE  # --json writes nothing


def test_without_the_json_grammar_the_same_run_is_plain(files):
    pkg = files / "package.json"
    args = ("edit", pkg, "x", *REF, "--json", "--speculate", "off")
    on, off = (json.loads(invoke(*args, *flag).stdout)[0] for flag in ((), ("--no-json-grammar",)))
    assert on["text"] == off["text"] == PACKAGE  # greedy copies the file either way
    assert off["stats"]["coalesced_tokens"] == 0
    # the closing fence is forced (no pass) and the grammar ends the answer (no EOS to draw)
    assert on["stats"]["coalesced_tokens"] > 0
    assert on["stats"]["forward_passes"] < off["stats"]["forward_passes"]


def test_extract_prints_json_valid_against_the_schema(files):
    stats = files / "stats.json"
    schema = files / "schema.json"
    result = invoke("extract", files / "memo.md", "--schema", schema, *REF, "--stats-json", stats)
    assert result.exit_code == 0, result.output
    jsonschema.validate(json.loads(result.stdout), SCHEMA)
    figures = json.loads(stats.read_text())
    assert figures["coalesced_tokens"] >= len('{"kind": "') // 2  # the keys are forced


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_coalescence_saves_one_pass_per_forced_token_and_changes_nothing(files, seed):
    args = ("extract", files / "memo.md", "--schema", files / "schema.json", *REF, "--speculate", "off")
    # the prompt cache off: the first run would read the prompt's start in a pass of its own
    args += ("--temperature", "1", "--seed", seed, "--json", "--no-prompt-cache")
    on, off = (json.loads(invoke(*args, *flag).stdout)[0] for flag in ((), ("--no-coalesce",)))
    assert on["data"] == off["data"]
    jsonschema.validate(on["data"], SCHEMA)
    assert on["stats"]["forward_passes"] + on["stats"]["coalesced_tokens"] == off["stats"]["forward_passes"]
    assert on["stats"]["coalesced_tokens"] > 0 and off["stats"]["coalesced_tokens"] == 0


def test_summarize_under_a_regex_and_a_grammar(files):
    memo = files / "memo.md"
    out = invoke("summarize", memo, *REF, "--regex", "[A-Z][a-z]{2,8}( [a-z]{2,8}){0,3}\\.")
    assert out.exit_code == 0, out.output
    assert re.fullmatch("[A-Z][a-z]{2,8}( [a-z]{2,8}){0,3}\\.", out.stdout.strip())
    (files / "yes.lark").write_text('start: ANSWER "."\nANSWER: "yes" | "no"\n')
    out = invoke("summarize", memo, *REF, "--grammar", files / "yes.lark")
    assert out.exit_code == 0 and out.stdout.strip() in ("yes.", "no.")


def test_an_answer_cut_by_max_tokens_is_refused_not_printed(files):
    schema = files / "schema.json"
    result = invoke("extract", files / "memo.md", "--schema", schema, *REF, "--max-tokens", "3")
    assert result.exit_code == 5
    assert result.stdout == ""
    assert "not valid against the schema (cut off: max_tokens)" in result.stderr


def test_a_constrained_summary_cut_by_max_tokens_is_refused_not_printed(files):
    """A summary under --regex that --max-tokens stops before the regex is matched: exit 5,
    nothing printed (a summary without a constraint may stop there: it is a summary)."""
    result = invoke("summarize", files / "memo.md", *REF, "--regex", "a{500}", "--max-tokens", "5")
    assert result.exit_code == 5, result.output
    assert result.stdout == ""
    assert "cut off (max_tokens) before it matched --regex" in result.stderr


@pytest.mark.parametrize(
    "args, words",
    [
        (("--schema", "bad.json"), "--schema"),
        (("--schema", "notaschema.json"), "not a JSON Schema"),
        (("--regex", "(("), "--regex"),
        (("--grammar", "bad.lark"), "--grammar"),
        (("--regex", "a", "--schema", "schema.json"), "choose one of"),
    ],
)
def test_a_bad_schema_regex_or_grammar_is_one_line_and_exit_2(files, args, words):
    (files / "bad.json").write_text("{not json")
    (files / "notaschema.json").write_text('{"type": 12}')
    (files / "bad.lark").write_text("start: missing_rule\n")
    args = [str(files / a) if a.endswith((".json", ".lark")) else a for a in args]
    result = invoke("edit", files / "memo.md", "x", *REF, "--diff", *args)
    assert result.exit_code == 2, result.output
    assert "loading" not in result.stderr  # said before a model loads
    line = result.stderr.strip()
    assert words in line and "\n" not in line and line.startswith("pedit: error:")
    assert (files / "memo.md").read_text() == MEMO


def test_extract_needs_a_schema(files):
    result = invoke("extract", files / "memo.md", *REF)
    assert result.exit_code == 2 and "--schema" in result.stderr


def test_an_unsatisfiable_schema_is_one_line_and_exit_2(files):
    (files / "never.json").write_text(json.dumps({"type": "string", "minLength": 5, "maxLength": 2}))
    result = invoke("extract", files / "memo.md", "--schema", files / "never.json", *REF)
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    line = result.stderr.strip().splitlines()[-1]
    assert line.startswith("pedit: error:") and "schema" in line


@pytest.mark.parametrize(
    ("regex", "says"),
    [
        ("[^\\s\\S]", "no text matches it"),
        ("[a&&b]", "no text matches it"),
        ("x{0}", "only the empty text matches it"),
    ],
)
@pytest.mark.parametrize("command", [("summarize",), ("edit", "x", "-y", "--force")])
def test_a_regex_no_text_matches_is_a_usage_error_before_the_model(files, regex, says, command):
    """Issue 28 #10: a --regex no text can match gave `summarize` an empty answer (exit 0)
    and `edit -y --force` an empty file. llguidance tells it before a model loads (no byte
    may start an answer): exit 2, the file byte for byte as it was."""
    memo = files / "memo.md"
    result = invoke(command[0], memo, *command[1:], *REF, "--regex", regex)
    assert result.exit_code == 2, result.output
    assert result.stderr.strip() == f"pedit: error: --regex: {says}"
    assert result.stdout == ""
    assert memo.read_bytes() == MEMO.encode()


def test_a_json_file_too_long_for_one_run_names_a_flag_that_exists(files):
    """Issue 28 #11: the error suggested --no-json, which does not exist; the flag it names
    turns the grammar off, and the same file then goes in parts."""
    big = files / "big.json"
    big.write_text(json.dumps({f"key{i}": f"value number {i}" for i in range(300)}, indent=2) + "\n")
    before = big.read_bytes()
    result = invoke("edit", big, "x", *REF, "--n-ctx", "1024", "--diff")
    assert result.exit_code == 2, result.output
    assert result.stderr.strip().splitlines()[-1] == (
        "pedit: error: big.json: too long for one run, and a grammar constrains the whole file "
        "(raise --n-ctx, or --no-json-grammar for a .json file)"
    )
    plain = invoke("edit", big, "x", *REF, "--n-ctx", "1024", "--diff", "--no-json-grammar")
    assert plain.exit_code == 0, plain.output
    assert "part 1 of" in plain.stderr
    assert big.read_bytes() == before


def test_no_coalescence_with_drafts_gives_the_same_data(files):
    """--no-coalesce with the default speculation: drafts verified, each forced token read
    in a pass of its own (it was an internal error, exit 70, before the loops were one)."""
    args = ("extract", files / "memo.md", "--schema", files / "schema.json", *REF, "--json")
    results = [invoke(*args, *flag) for flag in ((), ("--no-coalesce",))]
    assert [r.exit_code for r in results] == [0, 0]
    drafted, apart = (json.loads(r.stdout)[0] for r in results)
    assert apart["data"] == drafted["data"]
