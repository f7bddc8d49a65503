"""The interactive session driven through Textual's Pilot on the reference backend: a full
session (instruction -> streamed answer -> diff -> accept -> second turn drafted from the
first answer, its prompt prefix from the cache -> save), hunk picking, cancel, undo/redo,
quit with unsaved work, help, theme, 80x24 and large terminals; and snapshots."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from textual.widgets import Input

from pedit.app.loading import Loaded
from pedit.app.options import EngineOptions
from pedit.app.session import Session, TurnResult
from pedit.backends.reference import ReferenceBackend
from pedit.engine.decode import common_prefix
from pedit.engine.options import EditOptions
from pedit.engine.prompt import build_prompt
from pedit.engine.sampling import Sampling
from pedit.events import Stats
from pedit.tui.app import PeditApp
from pedit.tui.messages import TurnDone
from pedit.tui.screens import HelpScreen, ModelScreen, QuitScreen

TEXT = (
    "The quick brown fox jumps over the lazy dog.\n"
    "It was the best of times, it was the worst of times.\n"
    "And so it goes, and so it went.\n"
    "One more line here.\n"
)
# The reference model copies its context under greedy decoding; sampling (seed 3) makes it
# change a line, so the answer differs from the file, and still close its fence (an answer
# that does not is refused, as in the CLI).
EDITING = EngineOptions(
    edit=EditOptions(max_tokens=200, sampling=Sampling(temperature=1.0, seed=3), speculate="fixed")
)


def make_app(tmp_path: Path, options: EngineOptions = EDITING, text: str = TEXT, **kw) -> PeditApp:
    path = tmp_path / "notes.txt"
    path.write_text(text)
    return PeditApp(
        path, load=lambda spec: Loaded(backend=ReferenceBackend(**kw)), model="reference", options=options
    )


async def until(pilot, condition, timeout: float = 30.0) -> None:
    for _ in range(int(timeout / 0.02)):
        if condition():
            return
        await pilot.pause(0.02)
    raise AssertionError("timed out waiting for the app")


async def ready(pilot, app: PeditApp) -> None:
    await until(pilot, lambda: app.session is not None and not app.instruction.disabled)


async def ask(pilot, app: PeditApp, instruction: str) -> TurnResult:
    app.instruction.focus()
    app.instruction.value = instruction
    await pilot.press("enter")
    await until(pilot, lambda: app.document.mode == "diff")
    return app.session.pending


def figures_text(app: PeditApp) -> str:
    return str(app.query_one("#figures").render())


async def test_three_turns_accept_draft_from_the_previous_answer_and_save(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot, app)
        t1 = await ask(pilot, app, "Fix the grammar.")
        assert t1.answer != TEXT and t1.before == TEXT
        assert app.document.hunks  # the diff shows the changes
        await pilot.press("a")
        assert app.session.text == t1.answer and "[modified]" in app.title
        t2 = await ask(pilot, app, "Make it shorter.")
        # the second turn: its draft was the accepted answer, its prompt prefix came from the cache
        assert t2.before == t1.answer
        assert t2.stats.accepted_by_drafter.get("predicted", 0) > 0
        assert t2.reused_tokens >= t1.prompt_tokens
        assert t2.prompt_tokens - t2.reused_tokens < t1.prompt_tokens
        await pilot.press("a")
        t3 = await ask(pilot, app, "Once more.")
        assert t3.reused_tokens >= t2.prompt_tokens
        await pilot.press("a")
        shown = figures_text(app)
        assert "turn 1: first token" in shown and "turn 2: first token" in shown and "turn 3" in shown
        await pilot.press("ctrl+s")
        # written with the file's conventions (here: it ends with a newline)
        assert app.session.text == t3.answer
        assert (tmp_path / "notes.txt").read_text() == app.source.render(t3.answer)
        assert "[modified]" not in app.title
        history = "\n".join(str(line.text) for line in app.query_one("#history").lines)
        assert "Fix the grammar." in history and "Once more." in history


async def test_pick_hunks_then_undo_redo(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot, app)
        doc = app.document
        await ask(pilot, app, "Fix it.")
        old, new = (
            TEXT,
            "The quick brown fox jumps over the lazy cat.\n" + TEXT.split("\n", 1)[1] + "Added.\n",
        )
        app.session.pending = type(app.session.pending)(**{**vars(app.session.pending), "answer": new})
        doc.show_diff(old, new)  # two hunks: line 1 changed, a line added
        assert len(doc.hunks) == 2 and doc.chosen == {0, 1}
        await pilot.press("space")  # un-pick the first hunk
        await pilot.press("enter")  # apply the picked ones
        assert app.session.text == TEXT + "Added.\n"
        await pilot.press("ctrl+z")
        assert app.session.text == TEXT
        await pilot.press("ctrl+y")
        assert app.session.text == TEXT + "Added.\n"


async def test_reject_and_retry_keeps_the_text(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot, app)
        await ask(pilot, app, "Fix it.")
        await pilot.press("e")  # reject, and the instruction comes back to edit
        assert app.session.text == TEXT and app.session.pending is None
        assert app.instruction.value == "Fix it." and app.focused is app.instruction
        await ask(pilot, app, "Fix it again.")
        # the retry read only from its instruction on: the file came before it (session.FILE_FIRST)
        s = app.session
        first, again = (build_prompt(s.backend, s.request(i)).tokens for i in ("Fix it.", "Fix it again."))
        assert s.pending.reused_tokens == common_prefix(first, again)
        assert TEXT in s.backend.detokenize(first[: s.pending.reused_tokens])
        await pilot.press("r")
        assert app.session.text == TEXT and app.document.mode == "file"


class SlowReference(ReferenceBackend):
    """The reference model at the pace of a real one on a slow machine (50 ms a forward pass),
    so that a generation is still running when the test presses Esc."""

    def eval(self, tokens, *, n_logits=1):
        time.sleep(0.05)
        return super().eval(tokens, n_logits=n_logits)


# Distinct lines: the reference model copies them whole (repeated lines would make it close
# its block after the first repeat: an answer that stops early, which is refused).
LONG = TEXT + (
    "A stitch in time saves nine, they said.\nNo man is an island, entire of itself.\n"
    "Call me Ishmael; some years ago I went to sea.\nAll happy families are alike.\n"
)


async def test_cancel_a_running_generation_without_leaving(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text(LONG)  # a long answer: the greedy reference model copies the file
    app = PeditApp(
        path,
        load=lambda spec: Loaded(backend=SlowReference()),
        model="slow",
        options=EngineOptions(edit=EditOptions(speculate="off")),
    )
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot, app)
        app.instruction.value = "Copy it."
        app.instruction.focus()
        await pilot.press("enter")
        await until(pilot, lambda: len(app.document._stream) > 5)
        assert app.running  # the answer is ~240 tokens: seconds at this pace
        await pilot.press("escape")
        await until(pilot, lambda: not app.running)
        assert app.session.pending is None and app.session.text == LONG
        assert app.is_running and "cancelled" in app.sub_title
        t = await ask(pilot, app, "Copy it.")  # the app and the backend still work, exactly
        fresh = Session(
            ReferenceBackend(), LONG, "notes.txt", options=EngineOptions(edit=EditOptions(speculate="off"))
        )
        list(fresh.run("Copy it."))
        assert t.answer == fresh.pending.answer and t.reused_tokens > 0


async def test_switch_model_keeps_the_text_and_starts_a_fresh_cache(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text(TEXT)
    loaded = []

    def load(spec):
        if spec == "broken":
            raise ValueError("no such model: broken")
        loaded.append(spec)
        return Loaded(backend=ReferenceBackend(seed=len(loaded)))

    app = PeditApp(path, load=load, model="first", options=EDITING)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot, app)
        t1 = await ask(pilot, app, "Fix it.")
        await pilot.press("a")
        first_backend = app.session.backend
        await pilot.press("ctrl+o")
        assert isinstance(app.screen, ModelScreen)
        app.screen.query_one(Input).value = "broken"
        await pilot.press("enter")
        await until(pilot, lambda: "broken" in app.sub_title)
        assert app.session.backend is first_backend and app.model == "first"  # still usable
        await pilot.press("ctrl+o")
        app.screen.query_one(Input).value = "second"
        await pilot.press("enter")
        await until(pilot, lambda: app.model == "second" and not app.instruction.disabled)
        assert app.session.backend is not first_backend and app.session.text == t1.answer
        t2 = await ask(pilot, app, "Again.")
        assert t2.reused_tokens == 0 and t2.before == t1.answer  # another model: nothing cached
    assert loaded == ["first", "second"]


async def test_quit_asks_only_with_unsaved_accepted_work(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot, app)
        await ask(pilot, app, "Fix it.")
        await pilot.press("a")
        await pilot.press("ctrl+q")
        assert isinstance(app.screen, QuitScreen)
        await pilot.press("escape")  # stay
        assert app.is_running and not isinstance(app.screen, QuitScreen)
        await pilot.press("ctrl+q")
        await pilot.click("#save")
        await pilot.pause()
    assert (tmp_path / "notes.txt").read_text() == app.source.render(app.session.text) != TEXT
    assert app.return_code == 0

    clean = make_app(tmp_path / ".." / tmp_path.name)
    async with clean.run_test(size=(80, 24)) as pilot:
        await ready(pilot, clean)
        await pilot.press("ctrl+q")  # nothing unsaved: quits at once
        await pilot.pause()
    assert clean.return_code == 0


async def test_an_empty_text_is_never_saved_not_even_with_force(tmp_path):
    """The guard's rule for every command: an empty answer for a file with text is never
    written, --force or not (here the session started with --force; hunks picked so that
    nothing of the file is left)."""
    app = make_app(tmp_path)
    app.force = True
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot, app)
        await ask(pilot, app, "Fix it.")
        app.session.accept("")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert app.session.unsaved
    assert (tmp_path / "notes.txt").read_text() == TEXT


@pytest.mark.parametrize("size", [(80, 24), (200, 60)])
async def test_help_theme_and_sizes(tmp_path, size):
    app = make_app(tmp_path)
    async with app.run_test(size=size) as pilot:
        await ready(pilot, app)
        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        dark = app.current_theme.dark
        await pilot.press("ctrl+t")
        assert app.current_theme.dark != dark
        await ask(pilot, app, "Fix it.")
        assert app.document.region.width > 30 and app.query_one("#figures").region.height > 3


async def test_a_file_that_cannot_be_opened_is_refused_before_the_app_starts(tmp_path):
    from pedit.errors import UsageError

    with pytest.raises(UsageError, match="no such file"):
        PeditApp(
            tmp_path / "missing.md", load=lambda spec: Loaded(backend=ReferenceBackend()), model="reference"
        )


# --- snapshots (pytest-textual-snapshot) --------------------------------------------------

FIXED = Stats(
    prompt_tokens=412,
    completion_tokens=96,
    forward_passes=14,
    prefill_seconds=0.31,
    decode_seconds=1.18,
    stop_reason="fence",
    accepted_prediction_tokens=84,
    rejected_prediction_tokens=6,
    accepted_by_drafter={"predicted": 80, "lookup": 4},
    plain_step_seconds=0.041,
    speedup=3.34,
)


def test_snapshot_main_screen(snap_compare, tmp_path):
    app = make_app(tmp_path)

    async def loaded(pilot):
        await ready(pilot, app)

    assert snap_compare(app, terminal_size=(80, 24), run_before=loaded)


def test_snapshot_finished_turn(snap_compare, tmp_path):
    app = make_app(tmp_path)
    answer = TEXT.replace("lazy dog", "sleepy dog").replace("One more line here.\n", "")

    async def finished(pilot):
        await ready(pilot, app)
        # a finished turn with fixed figures (timings vary from run to run)
        result = TurnResult(
            instruction="Fix the grammar.", before=TEXT, answer=answer, stats=FIXED, first_token_seconds=0.35
        )
        app.session.pending = result
        app.post_message(TurnDone(result))
        await until(pilot, lambda: app.document.mode == "diff")
        await asyncio.sleep(0)

    assert snap_compare(app, terminal_size=(80, 24), run_before=finished)


def test_pedit_file_opens_the_session_which_needs_a_terminal(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from pedit.cli.app import app

    (tmp_path / "notes.md").write_text(TEXT)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["notes.md"])  # a file and no command: the session
    assert result.exit_code == 2 and "needs a terminal" in result.output
    result = CliRunner().invoke(app, ["tui", "missing.md"])
    assert result.exit_code == 2 and "missing.md: no such file" in result.output
    result = CliRunner().invoke(app, ["no-such-command"])
    assert result.exit_code == 2 and "No such command" in result.output


class Buggy(ReferenceBackend):
    """The reference model with a bug in its third pass (not a user's error)."""

    def __init__(self):
        super().__init__()
        self.passes = 0

    def eval(self, tokens, *, n_logits: int = 1):
        self.passes += 1
        if self.passes == 3:
            raise ZeroDivisionError("a bug")
        return super().eval(tokens, n_logits=n_logits)


async def test_a_bug_shows_its_traceback_in_the_log_and_the_app_goes_on(tmp_path):
    """An unexpected exception is not a one-line status: its traceback is in the history
    log (to read and report), the status says it is a bug, and the session stays usable."""
    path = tmp_path / "notes.txt"
    path.write_text(TEXT)
    app = PeditApp(path, load=lambda spec: Loaded(backend=Buggy()), model="reference", options=EDITING)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot, app)
        app.instruction.value = "Fix it."
        await pilot.press("enter")
        await until(pilot, lambda: not app.running and not app.instruction.disabled)
        log = "\n".join(str(line.text) for line in app.query_one("#history").lines)
        assert (
            "internal error (a bug in pedit)" in log
            and "Traceback" in log
            and "ZeroDivisionError: a bug" in log
        )
        assert "internal error: ZeroDivisionError: a bug" in str(app.sub_title)
    assert path.read_text() == TEXT
