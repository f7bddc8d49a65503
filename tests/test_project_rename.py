"""A rename is the project's (cli/project.py, tools/projectrename.py, app/project.py): in real
git repositories, run as a user types it (a real `pedit` process, the reference model, which
copies its input, so the refactor loop writes the exact rename). Every file that uses the
name is renamed, each checked; other languages refuse what a token rename cannot tell apart."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pedit.app import project
from pedit.cli.app import app
from pedit.tools import projectrename

UTIL = '''def parse_line(line):
    """Split one line into its fields."""
    return [f.strip() for f in line.split(",")]

def read_all(lines):
    return [parse_line(x) for x in lines]
'''
MAIN = "from pkg.util import parse_line\n\ndef first(lines):\n    return parse_line(lines[0])\n"
PKG = {"pkg/__init__.py": "", "pkg/util.py": UTIL, "pkg/main.py": MAIN}


@pytest.fixture(scope="module")
def timed_once(tmp_path_factory):
    return tmp_path_factory.mktemp("cache")


@pytest.fixture(autouse=True)
def one_cache(timed_once, monkeypatch):
    """One user cache for the module's commands: the reference model is timed for its cost
    model once (what a user's first command does), not once a test."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(timed_once))


def git(*args: str, cwd: Path) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout


def make(root: Path, files: dict[str, str], *, repo: bool = True) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    if repo:
        git("init", "-q", "-b", "main", cwd=root)
        git("add", "-A", cwd=root)
        git("-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-qm", "start", cwd=root)
    return root


def pedit(root: Path, *args: str) -> subprocess.CompletedProcess:
    """`pedit ARGS -b reference` in `root`, a process of its own, as a user types it."""
    return subprocess.run(
        [sys.executable, "-m", "pedit", *args, "-b", "reference"], cwd=root, capture_output=True, text=True
    )


@dataclass
class Ran:
    returncode: int
    stdout: str
    stderr: str


def here(root: Path, *args: str) -> Ran:
    """The same command run in this process (click's runner, stdout and stderr apart): the
    tests that read what it prints, without a process's start-up each."""
    cwd = os.getcwd()
    os.chdir(root)
    try:
        done = CliRunner().invoke(app, [*args, "-b", "reference"])
    finally:
        os.chdir(cwd)
    return Ran(done.exit_code, done.stdout, done.stderr)


def imports(root: Path, module: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", f"import {module}"], cwd=root, capture_output=True, text=True
    )


def test_the_reproduction_renames_both_files_and_the_package_imports(tmp_path):
    root = make(tmp_path, PKG)
    done = pedit(root, "refactor", "pkg/util.py", "rename parse_line to parse_record", "-y")
    assert done.returncode == 0, done.stderr
    assert "renamed in 2 files, written: pkg/main.py, pkg/util.py" in done.stderr
    assert (root / "pkg/main.py").read_text() == MAIN.replace("parse_line", "parse_record")
    assert (root / "pkg/util.py").read_text() == UTIL.replace("parse_line", "parse_record")
    assert imports(root, "pkg.main").returncode == 0
    assert git("status", "--short", cwd=root).split() == ["M", "pkg/main.py", "M", "pkg/util.py"]


def test_the_users_default_path_the_resident_model_and_the_answer_cache_renames_every_file(
    tmp_path, monkeypatch
):
    """The suite runs each command with its own model and no answer cache (conftest.py); a
    user's commands go through the resident and the cache: the defining file's answer comes
    from the resident (a refactor's answer, with its verdict, is never the cache's:
    answercache.put), and every other file is still renamed, each time."""
    root = make(tmp_path / "repo", PKG)
    run = Path(tempfile.mkdtemp(prefix="pr", dir="/tmp"))  # a socket's path has at most 107 bytes
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(run))
    monkeypatch.setenv("PEDIT_KEEP_ALIVE", "120")
    monkeypatch.setenv("PEDIT_ANSWER_CACHE", "on")
    try:
        for _ in range(2):
            done = pedit(root, "refactor", "pkg/util.py", "rename parse_line to parse_record", "-y")
            assert done.returncode == 0, done.stderr
            assert "answered before" not in done.stderr
            assert "renamed in 2 files, written: pkg/main.py, pkg/util.py" in done.stderr
            assert (root / "pkg/main.py").read_text() == MAIN.replace("parse_line", "parse_record")
            assert imports(root, "pkg.main").returncode == 0
            git("checkout", "-q", "--", ".", cwd=root)
        status = subprocess.run(
            [sys.executable, "-m", "pedit", "daemon", "status", "--json"], capture_output=True, text=True
        )
        assert [(s["backend"], s["served"]) for s in json.loads(status.stdout)] == [("reference", 2)]
    finally:
        subprocess.run([sys.executable, "-m", "pedit", "daemon", "stop"], capture_output=True, timeout=60)
        shutil.rmtree(run, ignore_errors=True)


def test_no_project_renames_in_the_file_alone(tmp_path):
    root = make(tmp_path, PKG)
    done = here(root, "refactor", "pkg/util.py", "rename parse_line to parse_record", "-y", "--no-project")
    assert done.returncode == 0, done.stderr
    assert (root / "pkg/main.py").read_text() == MAIN
    assert "parse_record" in (root / "pkg/util.py").read_text()
    assert "renamed in" not in done.stderr


def test_diff_shows_every_file_in_path_order_and_check_says_it_would_change(tmp_path):
    root = make(tmp_path, PKG)
    diff = here(root, "refactor", "pkg/util.py", "rename parse_line to parse_record", "--diff")
    assert diff.returncode == 0, diff.stderr
    heads = [line for line in diff.stdout.splitlines() if line.startswith("--- ")]
    assert heads == ["--- a/pkg/main.py", "--- a/pkg/util.py"]
    applied = subprocess.run(
        ["git", "apply", "--check"], input=diff.stdout, cwd=root, capture_output=True, text=True
    )
    assert applied.returncode == 0, applied.stderr  # one diff git applies from the root
    check = here(root, "refactor", "pkg/util.py", "rename parse_line to parse_record", "--check")
    assert check.returncode == 1 and "would change pkg/main.py, pkg/util.py" in check.stderr
    assert (root / "pkg/main.py").read_text() == MAIN and (root / "pkg/util.py").read_text() == UTIL


def test_json_gives_every_files_record(tmp_path):
    root = make(tmp_path, PKG)
    done = here(root, "refactor", "pkg/util.py", "rename parse_line to parse_record", "--json")
    records = {r["file"]: r for r in json.loads(done.stdout)}
    assert set(records) == {"pkg/main.py", "pkg/util.py"}
    assert records["pkg/main.py"]["text"] == MAIN.replace("parse_line", "parse_record")
    assert records["pkg/util.py"]["check"]["check"] == "rename"


@pytest.mark.parametrize(
    "args, says",
    [
        (["pkg/util.py", "--stdout"], "--stdout prints one"),
        (["pkg/util.py", "pkg/main.py", "-y"], "starts from one file"),
    ],
)
def test_what_cannot_show_a_project_rename_is_a_usage_error(tmp_path, args, says):
    root = make(tmp_path, PKG)
    done = here(root, "refactor", *args, "rename parse_line to parse_record")
    assert done.returncode == 2 and says in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert (root / "pkg/main.py").read_text() == MAIN


def test_a_module_is_renamed_with_its_imports(tmp_path):
    files = {**PKG, "pkg/main.py": "from pkg import util\nimport pkg.util\n\nx = util.read_all(['a'])\n"}
    root = make(tmp_path, files)
    done = here(root, "refactor", "pkg/util.py", "rename module util to helpers", "-y")
    assert done.returncode == 0, done.stderr
    assert not (root / "pkg/util.py").exists() and (root / "pkg/helpers.py").read_text() == UTIL
    assert (
        root / "pkg/main.py"
    ).read_text() == "from pkg import helpers\nimport pkg.helpers\n\nx = helpers.read_all(['a'])\n"
    assert imports(root, "pkg.main").returncode == 0


def test_what_rope_cannot_resolve_is_reported_by_file_and_line(tmp_path):
    main = (
        "from pkg.util import parse_line\n\n"
        "def first(lines, m, obj):\n"
        "    f = getattr(m, 'parse_line')\n"
        "    obj.parse_line(lines)\n"
        "    return parse_line(lines[0])\n"
    )
    root = make(
        tmp_path,
        {
            **PKG,
            "pkg/main.py": main,
            "pkg/__init__.py": "from .util import parse_line\n__all__ = ['parse_line']\n",
        },
    )
    done = here(root, "refactor", "pkg/util.py", "rename parse_line to parse_record", "-y")
    assert done.returncode == 0, done.stderr
    assert "pedit: pkg/main.py: line 4: parse_line in the string 'parse_line': not renamed" in done.stderr
    assert "pedit: pkg/main.py: line 5: parse_line (rope cannot resolve it): not renamed" in done.stderr
    renamed = (root / "pkg/main.py").read_text()
    assert "from pkg.util import parse_record" in renamed and "return parse_record(lines[0])" in renamed
    assert "getattr(m, 'parse_line')" in renamed and "obj.parse_line(lines)" in renamed  # never guessed
    # __all__ names the package's own binding, which rope renamed: its entry goes with it
    assert (
        root / "pkg/__init__.py"
    ).read_text() == "from .util import parse_record\n__all__ = ['parse_record']\n"
    assert imports(root, "pkg").returncode == 0


def test_an_attribute_of_another_packages_module_is_another_name_and_not_reported(tmp_path):
    """`trio.parse_line` (a package not installed, so rope cannot read it) and
    `os.path.parse_line` are attributes of modules no rename here changes; an object rope
    cannot type, and a project module rope cannot find, are still reported."""
    main = (
        "import os\nimport trio\nimport pkg.missing\nfrom pkg.util import parse_line\n\n"
        "def first(lines, obj):\n"
        "    trio.parse_line(lines)\n"
        "    os.path.parse_line(lines)\n"
        "    obj.parse_line(lines)\n"
        "    pkg.missing.parse_line(lines)\n"
        "    return parse_line(lines[0])\n"
    )
    root = make(tmp_path, {**PKG, "pkg/main.py": main})
    done = here(root, "refactor", "pkg/util.py", "rename parse_line to parse_record", "-y")
    assert done.returncode == 0, done.stderr
    unresolved = r"pedit: pkg/main.py: line (\d+): parse_line \(rope cannot resolve it\)"
    reported = re.findall(unresolved, done.stderr)
    assert reported == ["9", "10"]
    assert (root / "pkg/main.py").read_text() == main.replace(
        "import parse_line", "import parse_record"
    ).replace("return parse_line", "return parse_record")


def test_a_renamed_use_that_a_local_of_the_new_name_would_take_renames_nothing(tmp_path):
    """rich's segment.py had `cell_length = segment.cell_length` beside `cell_len(before)`:
    renamed, the call would take the local (a TypeError when it runs, though every module
    imports). So nothing is renamed, and the line says where."""
    main = (
        "from pkg.util import parse_line\n\n"
        "def first(lines):\n"
        "    parse_record = len(lines)\n"
        "    return parse_line(lines[0]), parse_record\n"
    )
    root = make(tmp_path, {**PKG, "pkg/main.py": main})
    done = here(root, "refactor", "pkg/util.py", "rename parse_line to parse_record", "-y")
    assert done.returncode == 2
    assert "pkg/main.py: the scope at line 3 has a parse_record of its own" in done.stderr
    assert git("status", "--short", cwd=root) == ""


def test_docs_renames_the_comments_and_strings_that_name_it_whole(tmp_path):
    main = (
        "from pkg.util import parse_line\n\n# parse_line splits; parse_lines does not\nx = parse_line('a')\n"
    )
    root = make(tmp_path, {**PKG, "pkg/main.py": main})
    done = pedit(
        root,
        "refactor",
        "pkg/util.py",
        "rename parse_line to parse_record, in docstrings and comments too",
        "-y",
    )
    assert done.returncode == 0, done.stderr
    assert "# parse_record splits; parse_lines does not" in (root / "pkg/main.py").read_text()


def test_a_same_named_function_of_another_module_is_another_name(tmp_path):
    other = "def parse_line(s):\n    return s\n\ny = parse_line('b')\n"
    root = make(tmp_path, {**PKG, "pkg/other.py": other})
    done = here(root, "refactor", "pkg/util.py", "rename parse_line to parse_record", "-y")
    assert done.returncode == 0, done.stderr
    assert (root / "pkg/other.py").read_text() == other
    assert "other.py" not in done.stderr


def test_the_project_is_gits_files_less_ignored_vendored_and_environments(tmp_path):
    uses = "from pkg.util import parse_line\n"
    files = {
        **PKG, ".gitignore": "ignored.py\n", "ignored.py": uses, "untracked_later.py": uses,
        "vendor/copy.py": uses, "env/lib/python3.11/site-packages/x.py": uses, "env/pyvenv.cfg": "",
        "src/other/site-packages/y.py": uses,
    }  # fmt: skip
    root = make(tmp_path, files)
    (root / "new.py").write_text(uses)  # untracked, not ignored: the project's
    found = project.find(root / "pkg/util.py")
    assert found.how == "git" and found.root == root.resolve()
    assert {str(f) for f in found.of_kind((".py",))} == {
        "pkg/__init__.py", "pkg/main.py", "pkg/util.py", "untracked_later.py", "new.py",
    }  # fmt: skip
    done = here(root, "refactor", "pkg/util.py", "rename parse_line to parse_record", "-y")
    assert done.returncode == 0, done.stderr
    assert (root / "new.py").read_text() == uses.replace("parse_line", "parse_record")
    assert (root / "vendor/copy.py").read_text() == uses and (root / "ignored.py").read_text() == uses


def test_a_root_with_a_pyproject_and_no_git_is_a_project_and_a_loose_file_is_not(tmp_path):
    root = make(tmp_path / "proj", {**PKG, "pyproject.toml": "[project]\nname = 'pkg'\n"}, repo=False)
    found = project.find(root / "pkg/util.py")
    assert found.how == "pyproject.toml" and found.root == root.resolve()
    assert project.find(make(tmp_path / "loose", {"a.py": "x = 1\n"}, repo=False) / "a.py") is None
    done = here(root, "refactor", "pkg/util.py", "rename parse_line to parse_record", "-y")
    assert done.returncode == 0 and "parse_record" in (root / "pkg/main.py").read_text()


def test_a_method_is_renamed_through_its_class_and_a_module_attribute_through_its_module():
    texts = {
        "pkg/__init__.py": "",
        "pkg/util.py": "class Reader:\n    def take(self, s):\n        return s\n\n    def both(self):\n        return self.take(1)\n",
        "pkg/main.py": "from pkg import util\nfrom pkg.util import Reader\n\nr = Reader()\nr.take(2)\nutil.Reader().take(3)\n",
    }
    edit = projectrename.rename(texts, "pkg/util.py", {"take": "read"})
    assert edit.texts["pkg/util.py"].count("read") == 2 and "take" not in edit.texts["pkg/util.py"]
    assert edit.texts["pkg/main.py"] == texts["pkg/main.py"].replace("take", "read")
    assert edit.leftovers == ()


def test_a_rename_in_another_language_is_refused_where_other_files_name_it(tmp_path):
    files = {"a.js": "function area(w) { return w * w; }\n", "b.js": "const area = 3;\nconsole.log(area);\n"}
    root = make(tmp_path, files)
    done = here(root, "refactor", "a.js", "rename area to size", "-y")
    assert done.returncode == 2 and "area is also a name in b.js" in done.stderr
    assert (root / "a.js").read_text() == files["a.js"]
    alone = here(root, "refactor", "a.js", "rename area to size", "-y", "--no-project")
    assert alone.returncode == 0, alone.stderr
    assert "size" in (root / "a.js").read_text() and (root / "b.js").read_text() == files["b.js"]


def test_stdout_prints_the_files_own_rename_and_writes_nothing_when_no_other_file_changes(tmp_path):
    util = UTIL + "\nimport sys\nf = getattr(sys.modules[__name__], 'parse_line')\n"
    root = make(tmp_path, {"pkg/__init__.py": "", "pkg/util.py": util})
    done = here(root, "refactor", "pkg/util.py", "rename parse_line to parse_record", "--stdout")
    assert done.returncode == 0, done.stderr
    assert done.stdout == util.replace("def parse_line", "def parse_record").replace("[parse_line(", "[parse_record(")
    assert (root / "pkg/util.py").read_text() == util
