"""The interactive session: a Textual app that is a thin shell on pedit.app.session.Session.

Generation runs in a thread worker (`@work(thread=True, exclusive=True)`) that turns the
engine's events into batched Messages (at most ~20 per second, however fast tokens come);
widgets only render them. Cancelling (Esc / Ctrl+C) sets the worker's cancelled flag, which
the session checks after every event, so the app never blocks on the model.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Footer, Header, Input, RichLog, Static
from textual.worker import get_current_worker

from ..app import fileio
from ..app.loading import Loaded
from ..app.options import EngineOptions
from ..app.session import Session, TurnResult
from ..machine import calibration
from .actions import Actions
from .loading import Loading
from .messages import ModelReady, Streamed, TurnDone, TurnStopped, batched
from .widgets import Document, figures, history_line


class PeditApp(Actions, Loading, App[int]):
    """pedit FILE: iterate on one file, each accepted answer the draft of the next turn."""

    CSS_PATH = "app.tcss"
    TITLE = "pedit"
    BINDINGS = [
        Binding("ctrl+q", "request_quit", "Quit", priority=True),
        Binding("escape", "cancel", "Cancel", show=False),
        Binding("ctrl+c", "interrupt", "Cancel", show=False, priority=True),
        Binding("ctrl+s", "save", "Save"),
        Binding("ctrl+z", "undo", "Undo"),
        Binding("ctrl+y", "redo", "Redo"),
        Binding("ctrl+o", "switch_model", "Model"),
        Binding("ctrl+t", "toggle_theme", "Theme"),
        Binding("f1", "help", "Help"),
    ]

    def __init__(
        self,
        path: Path,
        *,
        load: Callable[[str], Loaded],
        model: str,
        options: EngineOptions | None = None,
        system: str | None = None,
        force: bool = False,
    ) -> None:
        """load(model) -> Loaded (the backend and its cost model): how to load a model (the
        CLI's loading.load_with_cost, or a test's); called in a worker thread."""
        super().__init__()
        self.source = fileio.read(path, force=force)
        fileio.check_writable(path)
        self.path, self.load, self.model, self.force = path, load, model, force
        self.options = options or EngineOptions()
        self.system = system
        self.session: Session | None = None
        self.running = False
        self.ttft: list[tuple[int, float, int]] = []  # (turn, seconds to first token, cached tokens)
        self.last_instruction = ""

    # --- layout --------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="main"):
            yield Document(self.path.name, id="document")
            with Vertical(id="side"):
                yield Static(id="figures")
                yield RichLog(id="history", wrap=True, markup=False)
        yield Input(placeholder="Instruction, then Enter (F1: help)", id="instruction", disabled=True)
        yield Footer()

    def on_mount(self) -> None:
        self.document.border_title = self.path.name
        self.query_one("#figures").border_title = "live"
        self.query_one("#history").border_title = "history"
        self.document.show_file(self.source.text)
        self.set_status(f"loading {self.model}...")
        self.load_model(self.model)

    @property
    def document(self) -> Document:
        return self.query_one(Document)

    @property
    def instruction(self) -> Input:
        return self.query_one("#instruction", Input)

    def set_status(self, text: str) -> None:
        self.sub_title = text

    def _title(self) -> None:
        unsaved = self.session is not None and self.session.unsaved
        self.title = f"pedit: {self.path.name}{' [modified]' if unsaved else ''}"

    # --- the model -----------------------------------------------------------------------

    @on(ModelReady)
    def model_ready(self, message: ModelReady) -> None:
        if message.error:
            self.set_status(f"model {message.name}: {message.error}")
            self.notify(message.error, title="model not loaded", severity="error")
            if self.session is None:
                return
        else:
            self._take_model(message.loaded)
            self.model = message.name
            self.set_status(f"model {message.name}")
        self.instruction.disabled = False
        self.instruction.focus()
        self._title()
        self.refresh_figures(None, 0, 0.0)

    # --- a turn ------------------------------------------------------------------------------

    @on(Input.Submitted, "#instruction")
    def submit(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        if not text or self.session is None or self.running:
            return
        if self.session.pending is not None:  # a new instruction instead of a verdict: rejected
            self._log(self.session.pending, "rejected")
            self.session.reject()
        self.last_instruction = text
        self.instruction.value = ""
        self.running = True
        self.instruction.disabled = True
        self.document.start_stream()
        self.document.focus()
        self.set_status(f"writing: {text}")
        self.generate(text)

    @work(thread=True, exclusive=True, group="turn")
    def generate(self, instruction: str) -> None:
        worker = get_current_worker()
        session = self.session
        assert session is not None
        try:
            for message in batched(session.run(instruction, cancelled=lambda: worker.is_cancelled)):
                self.post_message(message)
        except Exception as exc:
            self.post_message(TurnStopped(self._problem(exc), error=True))
            return
        if worker.is_cancelled or session.pending is None:
            self.post_message(TurnStopped("cancelled: the text is unchanged"))
        else:
            self.post_message(TurnDone(session.pending))

    @on(Streamed)
    def streamed(self, message: Streamed) -> None:
        if message.pieces:
            self.document.add_pieces(message.pieces)
        self.refresh_figures(message.stats, message.tokens, message.elapsed)

    @on(TurnDone)
    def turn_done(self, message: TurnDone) -> None:
        self.running = False
        result = message.result
        self.ttft.append((len(self.ttft) + 1, result.first_token_seconds, result.reused_tokens))
        s = result.stats
        self.refresh_figures(s, s.completion_tokens, s.prefill_seconds + s.decode_seconds)
        self.document.show_diff(result.before, result.answer)
        self.document.focus()
        self.set_status("a accept all · space/enter pick hunks · r reject · e retry")

    @on(TurnStopped)
    def turn_stopped(self, message: TurnStopped) -> None:
        self.running = False
        if self.session is not None:
            self.document.show_file(self.session.text)
        self.set_status(message.reason)
        if message.error:
            self.notify(message.reason, title="error", severity="error")
        self._ready_for_instruction(self.last_instruction if message.error else "")

    @on(Document.Decided)
    def decided(self, message: Document.Decided) -> None:
        session = self.session
        if session is None or session.pending is None:
            return
        result = session.pending
        if message.text is None:
            session.reject()
            verdict = "rejected"
        else:
            session.accept(message.text)
            verdict = "accepted" if message.text == result.answer else "partly accepted"
        self._log(result, verdict)
        self.document.show_file(session.text)
        self._title()
        self.set_status(f"{verdict}: {result.instruction}")
        self._ready_for_instruction(self.last_instruction if message.retry else "")

    def _log(self, result: TurnResult, verdict: str) -> None:
        session = self.session
        n = len(session.turns) if session else 0
        self.query_one("#history", RichLog).write(history_line(n, result, verdict))

    def _ready_for_instruction(self, value: str) -> None:
        self.instruction.disabled = False
        self.instruction.value = value
        self.instruction.focus()

    def refresh_figures(self, stats, tokens: int, elapsed: float) -> None:
        self.query_one("#figures", Static).update(figures(stats, tokens, elapsed, self.ttft, self.model))

    def on_unmount(self) -> None:
        # a generation still running (cancelled, between two passes) owns the backend until
        # it returns; the process exit frees it then
        if self.session is not None and not self.running:
            calibration.keep(self.session.options.edit.cost)
            self.session.backend.close()
