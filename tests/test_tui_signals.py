"""The interactive session in a real terminal (a pseudo-terminal: `pedit FILE` as a user
starts it, on the reference backend) ended by a signal mid-generation: the terminal is
given back (the alternate screen left, mouse tracking off, the cursor shown), the exit
code is the signal's (129 SIGHUP, 143 SIGTERM), one line says nothing was changed, and
accepted, unsaved work is kept in its recovery file. Issue 54."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import signal
import struct
import sys
import termios
import time
from pathlib import Path

import pytest

from pedit.app import recovery

CSI = re.compile(rb"\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|\x1b[=>]")
LINE = "It was the best of times, it was the worst of times, it was the age of wisdom.\n"


class Terminal:
    """pedit in a pseudo-terminal of 100x30: what it drew, keys typed, signals sent."""

    def __init__(self, cwd: Path, *args: str):
        exe = str(Path(sys.executable).with_name("pedit"))
        env = os.environ | {
            "PEDIT_BACKEND": "reference",
            "TERM": "xterm-256color",
            "COLUMNS": "100",
            "LINES": "30",
        }
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: pedit, as a user runs it
            os.chdir(cwd)
            os.execve(exe, [exe, *args], env)
        fcntl.ioctl(self.fd, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
        self.out = b""
        self.code: int | None = None

    def read(self, seconds: float = 0.1) -> None:
        while select.select([self.fd], [], [], seconds)[0]:
            try:
                chunk = os.read(self.fd, 65536)
            except OSError:  # the child is gone and its side closed
                return
            if not chunk:
                return
            self.out += chunk
            seconds = 0.0

    def text(self, start: int = 0) -> str:
        return CSI.sub(b"", self.out[start:]).decode("utf-8", "replace")

    def wait_for(self, words: str, start: int = 0, timeout: float = 120.0) -> None:
        end = time.monotonic() + timeout
        while words not in self.text(start):
            assert time.monotonic() < end and self.code is None, (
                f"no {words!r} on screen: {self.text(start)[-2000:]}"
            )
            self.read()
            self._reap()

    def type(self, keys: str) -> None:
        os.write(self.fd, keys.encode())

    def ended(self, timeout: float = 60.0) -> int:
        end = time.monotonic() + timeout
        while self.code is None:
            assert time.monotonic() < end, self.text()[-2000:]
            self.read()
            self._reap()
        self.read()
        return self.code

    def _reap(self) -> None:
        pid, status = os.waitpid(self.pid, os.WNOHANG)
        if pid:
            self.code = os.waitstatus_to_exitcode(status)

    def close(self) -> None:
        if self.code is None:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        os.close(self.fd)


SIGNALS = [(signal.SIGHUP, 129, "hung up"), (signal.SIGTERM, 143, "terminated")]


@pytest.mark.parametrize(("sig", "code", "how"), SIGNALS)
def test_a_signal_mid_turn_gives_the_terminal_back(tmp_path, sig, code, how):
    """Mid-generation (the reference model sampling at T=1 writes on past the file, some
    fifteen seconds a token at a time): the exit is the signal's, the terminal is as it
    was, one line says nothing changed."""
    path = tmp_path / "notes.md"
    text = LINE * 12
    path.write_text(text)
    term = Terminal(tmp_path, "notes.md", "--speculate", "off", "--temperature", "1", "--seed", "3")
    try:
        term.wait_for("model ")
        mark = len(term.out)
        term.type("Copy it.\r")
        term.wait_for("writing: Copy it.", start=mark)
        time.sleep(1.0)  # streaming
        os.kill(term.pid, sig)
        assert term.ended() == code
        after = term.out[mark:]
        assert b"a accept all" not in CSI.sub(b"", after)  # it was stopped mid-turn
        # the terminal as it was: the alternate screen left, mouse tracking off, the cursor shown
        assert b"\x1b[?1049l" in after and b"\x1b[?1000l" in after and b"\x1b[?25h" in after
        assert term.text(mark).rstrip().endswith(f"pedit: error: {how}; no file was changed")
        assert path.read_text() == text and sorted(p.name for p in tmp_path.iterdir()) == ["notes.md"]
        assert recovery.found(path) is None  # nothing was accepted
    finally:
        term.close()


@pytest.mark.parametrize(("sig", "code", "how"), SIGNALS)
def test_a_signal_keeps_accepted_unsaved_work(tmp_path, sig, code, how):
    """A turn accepted and not saved (sampling makes the reference model change a line),
    then the signal: the text goes to its recovery file, said before the last line."""
    from test_tui import TEXT

    path = tmp_path / "notes.txt"
    path.write_text(TEXT)
    term = Terminal(tmp_path, "notes.txt", "--speculate", "fixed", "--temperature", "1", "--seed", "3")
    try:
        term.wait_for("model ")
        term.type("Fix it.\r")
        term.wait_for("a accept all")
        mark = len(term.out)
        term.type("a")
        term.wait_for("accepted: Fix it.", start=mark)
        os.kill(term.pid, sig)
        assert term.ended() == code
        kept = recovery.path_for(path)
        said = term.text(mark).rstrip()
        last = f"pedit: error: {how}; no file was changed"
        assert said.endswith(f"pedit: the accepted, unsaved text is kept in {kept}\r\n{last}")
        assert kept.read_text() not in ("", TEXT) and path.read_text() == TEXT
        assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]
    finally:
        term.close()
