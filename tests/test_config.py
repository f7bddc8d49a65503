"""Settings from every layer go through one table of keys, types and ranges: a bad value
in the user config, [tool.pedit], the environment, the hook's table or .pedit.toml is
exit 2 naming the key and where it came from (never an internal error), and the flags'
click ranges are the table's."""

from __future__ import annotations

import subprocess

import click
import pytest
from typer.testing import CliRunner

from pedit.app import config
from pedit.cli.app import app, cli
from pedit.errors import UsageError
from pedit.hook import rules
from pedit.machine.cpus import CPUS

FIX = ("fix", "x.md", "-b", "reference", "--diff")

# (key the message must name, TOML inside the settings table); each is exit 2 in any layer
BAD_SETTINGS = [
    ("n_ctx", "n_ctx = 100"),
    ("n_ctx", "n_ctx = -5"),
    ("n_ctx", 'n_ctx = "big"'),
    ("n_ctx", "n_ctx = 8192.0"),
    ("draft_max", "draft_max = 0"),
    ("draft_max", "draft_max = 257"),
    ("threads", "threads = 0"),
    ("speculate", "speculate = true"),
    ("backend", "backend = 5"),
    ("model", "model = 5"),
    ("templates", "templates = 5"),
    ("templates.fix", "templates.fix = 5"),
    ("system", "templates.fix.system = 5"),
    ("templates.nope", 'templates.nope.system = "x"'),
    ("hook", "hook = 5"),
    ("colour", 'colour = "red"'),
    ("keep_bias", "keep_bias = nan"),
    ("keep_bias", "keep_bias = inf"),
    ("timeout", "timeout = inf"),
    ("threads", "threads = 100000"),  # llama.cpp aborted in its allocator (issue 37)
    ("threads", f"threads = {CPUS + 1}"),  # more than this machine lets pedit use
    ("base_url", 'base_url = "ftp://x"'),  # was accepted, then named --base-url, a flag never given
    ("base_url", 'base_url = "localhost:8000"'),
]


def invoke(*args):
    return CliRunner().invoke(app, list(map(str, args)))


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A folder with x.md to fix; the test writes its pyproject.toml."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "x.md").write_text("Some text.\n")
    return tmp_path


def assert_usage_error(result, *words):
    assert result.exit_code == 2, (result.exit_code, result.stderr)
    assert "internal error" not in result.stderr
    for word in words:
        assert word in result.stderr, (word, result.stderr)


@pytest.mark.parametrize("key, line", BAD_SETTINGS)
def test_a_bad_project_setting_is_a_usage_error(project, key, line):
    path = project / "pyproject.toml"
    path.write_text(f"[tool.pedit]\n{line}\n")
    assert_usage_error(invoke(*FIX), key, str(path))


@pytest.mark.parametrize("key, line", BAD_SETTINGS)
def test_a_bad_user_setting_is_a_usage_error(project, isolated_dirs, key, line):
    path = isolated_dirs / "config" / "pedit" / "config.toml"
    path.parent.mkdir(parents=True)
    path.write_text(f"{line}\n")
    assert_usage_error(invoke(*FIX), key, str(path))


def test_tool_pedit_that_is_not_a_table(project):
    (project / "pyproject.toml").write_text("[tool]\npedit = 5\n")
    assert_usage_error(invoke(*FIX), "[tool.pedit]", str(project / "pyproject.toml"))
    (project / "pyproject.toml").write_text("tool = 5\n")  # no [tool.pedit]: not pedit's to judge
    assert invoke(*FIX).exit_code == 0


LATIN1 = '[project]\nname = "caf\xe9"\n'.encode("latin-1")  # not UTF-8, so not TOML


@pytest.mark.parametrize("where", ["user", "project", "dotfile"])
def test_a_config_file_that_is_not_utf8_is_a_usage_error_naming_it(project, isolated_dirs, where):
    """Was an internal error (UnicodeDecodeError, exit 70) that named no file (issue 37)."""
    path = {
        "user": isolated_dirs / "config" / "pedit" / "config.toml",
        "project": project / "pyproject.toml",
        "dotfile": project / ".pedit.toml",
    }[where]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(LATIN1 + b"[tool.pedit]\n" if where == "project" else b"# pedit\n" + LATIN1)
    args = FIX
    if where == "dotfile":
        subprocess.run(["git", "init", "-q"], cwd=project, check=True)
        args = ("hook", "run", "x.md", "-b", "reference")
    result = invoke(*args)
    assert_usage_error(result, str(path), "not UTF-8 (byte 0xe9")


def test_a_pyproject_that_does_not_mention_pedit_never_stops_it(project):
    """Another tool's pyproject.toml, unreadable as TOML (latin-1, or broken), cannot hold a
    [tool.pedit] table: pedit and its hook go on as if it were not there."""
    for content in (LATIN1, b"[project\nname = 'x'\n"):
        (project / "pyproject.toml").write_bytes(content)
        result = invoke(*FIX)
        assert result.exit_code == 0, result.stderr
        subprocess.run(["git", "init", "-q"], cwd=project, check=True)
        result = invoke("hook", "run", "x.md", "-b", "reference")
        assert result.exit_code == 0 and "ok x.md" in result.output, (result.output, result.stderr)
    (project / "pyproject.toml").write_bytes(b"[tool.pedit\nmodel = 'x'\n")  # broken, and pedit's
    assert_usage_error(invoke(*FIX), str(project / "pyproject.toml"), "cannot read config file")


def test_threads_beyond_this_machines_cpus_is_a_usage_error_naming_the_flag(project):
    """--threads 512 ran for minutes on a one-line file; a config's 100000 aborted (exit 134)."""
    for value in (CPUS + 1, 512):
        result = invoke("fix", "x.md", "-b", "reference", "--diff", "--threads", value)
        assert_usage_error(result, "--threads", f"1<=x<={CPUS}")
    assert invoke("fix", "x.md", "-b", "reference", "--diff", "--threads", CPUS).exit_code == 0


def test_base_url_is_checked_as_a_setting_wherever_it_is_given(project, isolated_dirs, monkeypatch):
    """`pedit config` refuses a config file's bad base_url, naming the key and the file (it
    passed, and a run then blamed --base-url, a flag never given); the flag names itself."""
    path = isolated_dirs / "config" / "pedit" / "config.toml"
    path.parent.mkdir(parents=True)
    path.write_text('base_url = "ftp://x"\n')
    assert_usage_error(invoke("config"), "base_url", str(path), "http(s) URL")
    path.unlink()
    monkeypatch.setenv("PEDIT_BASE_URL", "ftp://x")
    assert_usage_error(invoke("config"), "base_url", "env PEDIT_BASE_URL")
    monkeypatch.delenv("PEDIT_BASE_URL")
    assert_usage_error(invoke("fix", "x.md", "-b", "openai", "--base-url", "ftp://x", "--diff"), "--base-url")
    assert invoke("config").exit_code == 0


def test_bad_environment_values(project, monkeypatch):
    monkeypatch.setenv("PEDIT_BACKEND", "nonsense")
    assert_usage_error(invoke("fix", "x.md", "--diff"), "backend", "env PEDIT_BACKEND")


def test_good_values_at_the_edges_of_the_ranges(project):
    table = '[tool.pedit]\n{}draft_max = 256\nthreads = 1\n[tool.pedit.templates.fix]\nsystem = "Be brief."\n'
    (project / "pyproject.toml").write_text(table.format(""))
    assert invoke(*FIX).exit_code == 0
    (project / "pyproject.toml").write_text(table.format("n_ctx = 256\n"))  # too small for x.md's prompt
    s = config.resolve({"draft_max": 1})
    assert (s.n_ctx, s.draft_max, s.sources["draft_max"]) == (256, 1, "command line")
    assert s.templates["fix"][0] == {"system": "Be brief."}


def test_settings_have_a_typed_field_per_key_and_its_source():
    """Settings is the KEYS table as typed fields (no string lookups): the same names, each
    with where it came from; frozen."""
    import dataclasses

    names = [f.name for f in dataclasses.fields(config.Settings)]
    assert names == [*config.KEYS, "sources", "templates"]
    s = config.resolve({"draft_max": 7, "keep_bias": 0.5}, env={"PEDIT_BACKEND": "reference"}, project=None)
    assert (s.draft_max, s.keep_bias, s.backend, s.n_ctx) == (7, 0.5, "reference", 8192)
    assert (s.sources["draft_max"], s.sources["backend"], s.sources["n_ctx"]) == (
        "command line", "env PEDIT_BACKEND", "default",
    )  # fmt: skip
    assert s["backend"] == config.Setting("reference", "env PEDIT_BACKEND")
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.model = "other"


def test_engine_options_take_the_settings_and_the_shells_own():
    from pedit.app.options import EngineOptions
    from pedit.engine.options import EditOptions
    from pedit.engine.sampling import Sampling

    s = config.resolve(
        {"speculate": "fixed", "draft_max": 9, "keep_bias": 1.5, "spelling": False}, project=None
    )
    sampling = Sampling(temperature=0.5, seed=2)
    given = EngineOptions(
        edit=EditOptions(sampling=sampling, max_tokens=40, drafters=("lookup",), coalesce=False)
    )
    o = s.engine_options(given)
    assert (o.edit.speculate, o.edit.draft_max, o.keep_bias, o.tools.spelling) == ("fixed", 9, 1.5, False)
    e = o.edit
    assert (e.sampling, e.max_tokens, e.drafters) == (sampling, 40, ("lookup",))
    assert (e.coalesce, e.cost) == (False, None)
    assert s.engine_options().edit.drafters == ("predicted", "lookup", "ngram")


def test_the_command_line_layer_is_checked_too():
    with pytest.raises(UsageError, match="command line: n_ctx must be an integer >= 256"):
        config.resolve({"n_ctx": 100}, env={}, project=None)


@pytest.mark.parametrize(
    "key, value, ok",
    [("n_ctx", True, False), ("n_ctx", 256, True), ("threads", 1.0, False), ("draft_max", 256, True)],
)
def test_key_check(key, value, ok):
    if ok:
        assert config.KEYS[key].check(key, value, "here") == value
    else:
        with pytest.raises(UsageError, match=f"here: {key} must be"):
            config.KEYS[key].check(key, value, "here")


def test_an_int_is_a_float_and_a_bool_is_not():
    assert rules.parse({"budget": 10, "temperature": 0}, "here").budget == 10.0
    with pytest.raises(UsageError, match="budget must be a number"):
        rules.parse({"budget": True}, "here")


# --- the hook's table ---------------------------------------------------------------------

BAD_HOOK = [
    ("rules", "rules = 5"),
    ("rules", "rules = [5]"),
    ("temperature", 'temperature = "hot"'),
    ("temperature", "temperature = -1"),
    ("budget", "budget = -1"),
    ("budget", 'budget = "300"'),
    ("max_bytes", "max_bytes = 1.5"),
    ("seed", "seed = 1.5"),
    ("restage", "restage = 1"),
    ("mode", 'mode = "rewrite"'),
    ("files", "rules = [{files = 5}]"),
    ("files", "rules = [{files = [1]}]"),
    ("instruction", 'rules = [{command = "edit", instruction = 5}]'),
    ("system", "rules = [{system = 5}]"),
    ("mdoe", 'mdoe = "fix"'),
]


@pytest.fixture
def repo(project):
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    return project


@pytest.mark.parametrize("key, line", BAD_HOOK)
def test_a_bad_hook_setting_is_a_usage_error(repo, key, line):
    path = repo / "pyproject.toml"
    path.write_text(f'[tool.pedit]\nbackend = "reference"\n[tool.pedit.hook]\n{line}\n')
    assert_usage_error(invoke("hook", "run", "x.md"), key, str(path), "[tool.pedit.hook]")


@pytest.mark.parametrize("key, line", BAD_HOOK)
def test_a_bad_dotfile_setting_is_a_usage_error(repo, key, line):
    path = repo / ".pedit.toml"
    path.write_text(f"[hook]\n{line}\n")
    assert_usage_error(invoke("hook", "run", "x.md", "-b", "reference"), key, str(path))


@pytest.mark.parametrize("content", ["hook = 5\n", "[hook]\nrules = 5\n"])
def test_a_dotfile_hook_that_is_not_a_table(repo, content):
    (repo / ".pedit.toml").write_text(content)
    assert_usage_error(invoke("hook", "run", "x.md", "-b", "reference"), "hook", str(repo / ".pedit.toml"))


def test_a_good_hook_table_still_runs(repo):
    (repo / "pyproject.toml").write_text(
        '[tool.pedit]\nbackend = "reference"\n[tool.pedit.hook]\nbudget = 60\ntemperature = 0\n'
        '[[tool.pedit.hook.rules]]\nfiles = "*.md"\n'
    )
    result = invoke("hook", "run", "x.md")
    assert result.exit_code == 0 and "ok x.md" in result.output, (result.output, result.stderr)


# --- the flags use the table's ranges -------------------------------------------------------


def _commands(group: click.Group, prefix=()):
    for name, command in group.commands.items():
        yield (*prefix, name), command
        if isinstance(command, click.Group):
            yield from _commands(command, (*prefix, name))


def _range(param: click.Parameter):
    t = param.type
    return (t.min, t.max) if isinstance(t, click.IntRange | click.FloatRange) else (None, None)


@pytest.mark.parametrize("path", [path for path, _ in _commands(cli)], ids=" ".join)
def test_flags_use_the_ranges_of_the_settings_table(path):
    command = dict(_commands(cli))[path]
    table = rules.KEYS if path == ("hook", "run") else config.KEYS
    for param in command.params:
        key = table.get(param.name)
        if key is None or not isinstance(param, click.Option):
            continue
        assert _range(param) == (key.lo, key.hi), (path, param.name)
        if key.choices:  # a command may offer fewer (`models pull` has no reference backend)
            assert set(param.type.choices) <= set(key.choices), (path, param.name)
        else:
            assert not isinstance(param.type, click.Choice), (path, param.name)


def test_a_models_own_instruction_is_added_to_a_built_in_one_only(project, isolated_dirs):
    """The default model's fix asks for the learner's corrections too (templates.FIX_LEARNER,
    measured on it); another model's, a server's (whose model pedit cannot know) and an
    instruction the config overrides do not, and the other commands are as built in."""
    from pedit.app.templates import BUILTIN, FIX_LEARNER

    fix = BUILTIN["fix"]
    mine = config.resolve({}, env={}).prompt_templates()
    assert mine["fix"].instruction == fix.instruction + FIX_LEARNER
    assert mine["fix"].source == "built-in, for qwen2.5-coder-1.5b"
    assert all(mine[n] == t for n, t in BUILTIN.items() if n != "fix")
    assert config.resolve({"model": "qwen2.5-coder-0.5b"}, env={}).prompt_templates()["fix"] == fix
    assert config.resolve({"backend": "openai"}, env={}).prompt_templates()["fix"] == fix
    (project / "pyproject.toml").write_text('[tool.pedit.templates.fix]\nsystem = "Be brief."\n')
    brief = config.resolve({}, env={}).prompt_templates()["fix"]
    assert (brief.system, brief.instruction) == ("Be brief.", fix.instruction + FIX_LEARNER)
    (project / "pyproject.toml").write_text('[tool.pedit.templates.fix]\ninstruction = "Fix it."\n')
    assert config.resolve({}, env={}).prompt_templates()["fix"].instruction == "Fix it."
    shown = invoke("templates", "fix").stdout
    assert "for qwen2.5-coder-1.5b" not in shown and "Fix it." in shown
    (project / "pyproject.toml").write_text("")
    shown = invoke("templates", "fix").stdout
    assert "built-in, for qwen2.5-coder-1.5b" in shown and FIX_LEARNER.strip() in shown
    shown = invoke("templates", "fix", "-m", "qwen2.5-coder-0.5b").stdout
    assert "fix (rewrite; built-in)" in shown and FIX_LEARNER.strip() not in shown
