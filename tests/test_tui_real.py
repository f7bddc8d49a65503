"""The interactive session with the real default model: a three-turn session through
Textual's Pilot (each turn's prompt prefix reused from the cache, each answer the draft of
the next), and the app under a real terminal (tmux) starting and quitting cleanly."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pedit.app import config
from pedit.app.loading import load_with_cost
from pedit.app.options import EngineOptions
from pedit.engine.options import EditOptions
from pedit.models import DEFAULT_MODEL
from pedit.models.progress import quietly
from pedit.tui.app import PeditApp

pytestmark = pytest.mark.slow

NOTES = "# Notes\n\nThis are my notes about the meeting. We has decided to ship on friday.\n"


async def until(pilot, condition, timeout: float) -> None:
    end = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < end, "timed out waiting for the app"
        await pilot.pause(0.1)


async def test_three_turns_with_the_small_model(default_model_env, tmp_path):
    path = tmp_path / "notes.md"
    path.write_text(NOTES)
    settings = config.resolve({"backend": "llama.cpp", "n_ctx": 4096}, project=None)
    load = lambda spec: quietly(load_with_cost(settings, model=spec))  # noqa: E731
    app = PeditApp(
        path, load=load, model="qwen2.5-coder-0.5b", options=EngineOptions(edit=EditOptions(max_tokens=300))
    )
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: app.session is not None and not app.instruction.disabled, 600)
        results = []
        for instruction in (
            "Fix the grammar.",
            "Make the date a weekday name with a capital letter.",
            "Add a title line 'Meeting' under the heading.",
        ):
            app.instruction.focus()
            app.instruction.value = instruction
            await pilot.press("enter")
            await until(pilot, lambda: app.document.mode == "diff", 300)
            results.append(app.session.pending)
            await pilot.press("a")
        t1, t2, t3 = results
        for before, after in ((t1, t2), (t2, t3)):
            # the next turn's prompt begins with the whole previous prompt: only the new
            # instruction (and what differs in the answer) is evaluated before its first token
            assert after.reused_tokens >= before.prompt_tokens
            assert after.prompt_tokens - after.reused_tokens < after.prompt_tokens // 2
            assert after.before == before.answer
        assert t1.stats.accepted_by_drafter.get("predicted", 0) > 0
        assert t2.stats.accepted_by_drafter.get("predicted", 0) > 0  # drafted from turn 1's answer
        shown = str(app.query_one("#figures").render())
        assert "turn 2: first token" in shown and "turn 3: first token" in shown
        await pilot.press("ctrl+s")
    assert path.read_text() == app.source.render(t3.answer)


def test_starts_and_quits_cleanly_in_tmux(default_model_env, tmp_path):
    tmux = shutil.which("tmux")
    if tmux is None:
        pytest.skip("tmux is not installed")
    (tmp_path / "notes.md").write_text(NOTES)
    done = tmp_path / "exit-code"
    exe = Path(sys.executable).with_name("pedit")
    env = f"XDG_CACHE_HOME={default_model_env} XDG_CONFIG_HOME={tmp_path / 'config'} HF_HUB_OFFLINE=1"
    command = f"cd {tmp_path} && env {env} TERM=xterm-256color {exe} notes.md; echo $? > {done}"
    server = ["tmux", "-L", f"pedit-test-{os.getpid()}"]
    subprocess.run([*server, "new-session", "-d", "-x", "100", "-y", "30", command], check=True)

    def screen() -> str:
        return subprocess.run([*server, "capture-pane", "-p"], capture_output=True, text=True).stdout

    try:
        end = time.monotonic() + 600
        wanted = (f"model {DEFAULT_MODEL}", "This are my notes", "Instruction", "^q Quit")
        while not all(w in screen() for w in wanted):  # loaded, focus back on the instruction
            assert time.monotonic() < end and not done.exists(), screen()
            time.sleep(0.5)
        shown = screen()
        assert "This are my notes" in shown and "Instruction" in shown and "^q Quit" in shown
        subprocess.run([*server, "send-keys", "C-q"], check=True)
        end = time.monotonic() + 30
        while not done.exists():
            assert time.monotonic() < end, screen()
            time.sleep(0.2)
        assert done.read_text().strip() == "0"
        assert (tmp_path / "notes.md").read_text() == NOTES
    finally:
        subprocess.run([*server, "kill-server"], capture_output=True)
