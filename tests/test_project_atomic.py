"""A project's rename is written together or not at all (app/together.py), with real
processes: a file made read-only or changed on disk before the write, Ctrl-C at the
question, and a pedit killed (SIGKILL) between two files' writes, whose rename the next
command finishes."""

from __future__ import annotations

import os
import pty
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_project_rename import MAIN, PKG, UTIL, git, make, one_cache, pedit, timed_once  # noqa: F401 (fixtures)

from pedit.app import fileio, together
from pedit.errors import ConflictError, UsageError

RENAME = ["refactor", "pkg/util.py", "rename parse_line to parse_record"]
NEW_MAIN, NEW_UTIL = MAIN.replace("parse_line", "parse_record"), UTIL.replace("parse_line", "parse_record")


def untouched(root: Path) -> bool:
    return (root / "pkg/main.py").read_text() == MAIN and (root / "pkg/util.py").read_text() == UTIL


def test_a_second_file_that_is_read_only_writes_nothing(tmp_path):
    root = make(tmp_path, PKG)
    (root / "pkg/main.py").chmod(0o444)
    done = pedit(root, *RENAME, "-y")
    assert done.returncode == 2
    assert (
        done.stderr.strip() == "pedit: error: pkg/main.py: read-only file; no file of the rename is written"
    )
    assert untouched(root)


def at_the_question(root: Path, act, answer: bytes) -> tuple[int, str]:
    """pedit asking on a real terminal; at "Apply to", `act(root)`, then `answer` typed."""
    env = {**os.environ, "TERM": "xterm", "COLUMNS": "100", "LINES": "30"}
    pid, fd = pty.fork()
    if pid == 0:  # the child: pedit on the terminal
        os.chdir(root)
        os.execve(sys.executable, [sys.executable, "-m", "pedit", *RENAME, "-b", "reference"], env)
    out, asked, deadline = b"", False, time.time() + 120
    while time.time() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if not ready:
            continue
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
        if not asked and b"Apply to these 2 files?" in out:
            act(root)
            os.write(fd, answer)
            asked = True
    done, status = os.waitpid(pid, os.WNOHANG)
    while not done and time.time() < deadline + 30:  # its terminal closed: it is exiting
        time.sleep(0.1)
        done, status = os.waitpid(pid, os.WNOHANG)
    if not done:  # still running past the deadline: a hang, said with what it printed
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    assert done and asked, out.decode(errors="replace")
    return os.waitstatus_to_exitcode(status), out.decode(errors="replace")


def changed(root: Path) -> None:
    (root / "pkg/main.py").write_text(MAIN + "# a line the user added\n")


def test_a_second_file_changed_on_disk_before_the_write_writes_nothing(tmp_path):
    root = make(tmp_path, PKG)
    code, out = at_the_question(root, changed, b"y\n")
    assert (
        code == 4
        and "pkg/main.py: changed on disk since pedit read it; no file of the rename is written" in out
    )
    assert (root / "pkg/util.py").read_text() == UTIL
    assert (root / "pkg/main.py").read_text() == MAIN + "# a line the user added\n"


def test_a_second_file_made_read_only_before_the_write_writes_nothing(tmp_path):
    root = make(tmp_path, PKG)
    code, out = at_the_question(root, lambda r: (r / "pkg/main.py").chmod(0o444), b"y\n")
    assert code == 2 and "pkg/main.py: read-only file; no file of the rename is written" in out
    assert untouched(root)


def test_ctrl_c_at_the_question_writes_nothing(tmp_path):
    root = make(tmp_path, PKG)
    code, out = at_the_question(root, lambda r: None, b"\x03")
    assert code == 130 and "no file was changed" in out
    assert untouched(root)


# pedit whose first replace of a .py file is its last act: SIGKILL, as a power cut would
KILLED = """
import os, signal, sys
real = os.replace
def replace(src, dst, *args, **kwargs):
    real(src, dst, *args, **kwargs)
    if str(dst).endswith(".py"):
        os.kill(os.getpid(), signal.SIGKILL)
os.replace = replace
from pedit.cli.app import main
sys.argv = ["pedit", *sys.argv[1:]]
main()
"""


def test_sigkill_between_two_files_leaves_each_old_or_new_and_the_next_command_finishes(tmp_path):
    root = make(tmp_path, PKG)
    killed = subprocess.run(
        [sys.executable, "-c", KILLED, *RENAME, "-y", "-b", "reference"],
        cwd=root,
        capture_output=True,
        text=True,
    )
    assert killed.returncode == -signal.SIGKILL
    main, util = (root / "pkg/main.py").read_text(), (root / "pkg/util.py").read_text()
    assert (main, util) in ((NEW_MAIN, UTIL), (MAIN, NEW_UTIL))  # one written whole, the other old
    assert not list(root.rglob("*.pedit"))  # no temporary file left in the project... or named so
    journals = list(together.folder().iterdir())
    assert len(journals) == 1
    after = subprocess.run(
        [sys.executable, "-m", "pedit", "config"], cwd=root, capture_output=True, text=True
    )
    assert after.returncode == 0, after.stderr
    assert "a rename stopped partway" in after.stderr and "is finished: wrote " in after.stderr
    assert (root / "pkg/main.py").read_text() == NEW_MAIN and (root / "pkg/util.py").read_text() == NEW_UTIL
    assert list(together.folder().iterdir()) == []
    again = subprocess.run(
        [sys.executable, "-m", "pedit", "config"], cwd=root, capture_output=True, text=True
    )
    assert "stopped partway" not in again.stderr  # said once


def test_a_journal_finishes_a_file_still_old_and_leaves_one_the_user_changed_since(tmp_path):
    root = make(tmp_path, {**PKG, "pkg/other.py": "from pkg.util import parse_line\n"})
    sources = [fileio.read(root / p) for p in ("pkg/main.py", "pkg/other.py", "pkg/util.py")]
    changes = [together.Change(s, s.text.replace("parse_line", "parse_record")) for s in sources]
    real = together.write_bytes
    calls = []

    def dies_after_the_first(path, data, expect=None):
        calls.append(path)
        if len(calls) == 2:
            raise SystemExit("killed")  # a stand-in for the process ending here (the journal stays)
        return real(path, data, expect)

    with pytest.MonkeyPatch.context() as patched, pytest.raises(SystemExit):
        patched.setattr(together, "write_bytes", dies_after_the_first)
        patched.setattr(together, "_undo", lambda done: None)  # a killed process undoes nothing
        patched.setattr(together.shutil, "rmtree", lambda *a, **k: None)  # ...nor removes its journal
        together.write(changes)
    (root / "pkg/util.py").write_text(UTIL + "# the user's edit since\n")
    said = []
    together.recover(said.append)
    assert len(said) == 1 and "wrote " in said[0] and "pkg/other.py" in said[0]
    assert "changed since, so left as they are: " in said[0] and said[0].endswith("pkg/util.py")
    assert (root / "pkg/main.py").read_text() == NEW_MAIN
    assert (root / "pkg/other.py").read_text() == "from pkg.util import parse_record\n"
    assert (root / "pkg/util.py").read_text() == UTIL + "# the user's edit since\n"
    assert list(together.folder().iterdir()) == []


def test_a_file_refused_at_its_replace_puts_back_the_ones_written_before_it(tmp_path, monkeypatch):
    root = make(tmp_path, PKG)
    sources = [fileio.read(root / p) for p in ("pkg/main.py", "pkg/util.py")]
    changes = [together.Change(s, s.text.replace("parse_line", "parse_record")) for s in sources]
    real = together.write_bytes

    def changed_in_the_last_instant(path, data, expect=None):
        if path.name == "util.py" and expect is sources[1].stamp:
            raise ConflictError(f"{path}: changed on disk since pedit read it; nothing written")
        return real(path, data, expect)

    monkeypatch.setattr(together, "write_bytes", changed_in_the_last_instant)
    with pytest.raises(ConflictError):
        together.write(changes)
    assert untouched(root)
    assert list(together.folder().iterdir()) == []
    assert git("status", "--short", cwd=root) == ""


def test_a_journal_folder_others_may_write_is_neither_used_nor_read(tmp_path):
    root = make(tmp_path, PKG)
    together.folder().mkdir(parents=True)
    together.folder().chmod(0o777)
    sources = [fileio.read(root / p) for p in ("pkg/main.py", "pkg/util.py")]
    with pytest.raises(UsageError, match="not a folder of this user's alone"):
        together.write([together.Change(s, s.text.replace("parse_line", "parse_record")) for s in sources])
    assert untouched(root)
    (together.folder() / "1.planted").mkdir()
    (together.folder() / "1.planted" / "lock").write_text("")
    (together.folder() / "1.planted" / "journal.json").write_text('{"pid": 1, "entries": []}')
    said = []
    together.recover(said.append)
    assert said == [] and (together.folder() / "1.planted").exists()  # another's folder: not trusted
