"""The interactive session: a Textual app that is a thin shell on pedit.app.session.Session.

Generation runs in a thread worker (`@work(thread=True, exclusive=True)`) that turns the
engine's events into batched Messages (at most ~20 per second, however fast tokens come);
widgets only render them. Cancelling (Esc / Ctrl+C) sets the worker's cancelled flag, which
the session checks after every event, so the app never blocks on the model.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.widgets import Footer, Header, RichLog, Static
from textual.worker import get_current_worker

from ..app import fileio
from ..app.loading import Loaded
from ..app.options import EngineOptions
from ..app.session import Session
from ..machine import calibration
from .actions import Actions
from .endings import Endings
from .loading import Loading
from .messages import ModelReady, Streamed, TurnDone, TurnStopped, batched
from .widgets import Document, Instruction, figures


class PeditApp(Actions, Loading, Endings, App[int]):
    """pedit FILE: iterate on one file, each accepted answer the draft of the next turn."""

    CSS_PATH = "app.tcss"
    TITLE = "pedit"
    BINDINGS = [
        # the verdict on an answer (Document.verdict), first in the footer while it is live: the
        # app's own keys, decided as they come, so that a key typed before the focus moved
        # never lands where it moved to
        *(
            Binding(key, f"answer('{name}')", label, priority=True, show=show)
            for key, name, label, show in (
                ("a", "accept_all", "Accept all", True),
                ("r", "reject", "Reject", True),
                ("space", "toggle", "Toggle hunk", True),
                ("enter", "apply", "Apply picked", True),
                ("down,j", "next_hunk", "Next hunk", False),
                ("up,k", "previous_hunk", "Previous hunk", False),
                ("e", "retry", "Edit & retry", True),
            )
        ),  # fmt: skip
        Binding("ctrl+q", "request_quit", "Quit", priority=True),
        Binding("escape", "cancel", "Cancel", show=False),
        Binding("ctrl+c", "interrupt", "Cancel", show=False, priority=True),
        Binding("ctrl+s", "save", "Save"),
        Binding("f2", "save_as", "Save as"),
        # the session's undo, wherever the focus is: the instruction box's own undo (Textual's
        # Input has one) would otherwise take the key after every turn
        Binding("ctrl+z", "undo", "Undo", priority=True),
        Binding("ctrl+y", "redo", "Redo", priority=True),
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
        share: Callable[[str, Loaded, Callable], object] | None = None,
    ) -> None:
        """load(model) -> Loaded (the backend and its cost model): how to load a model (the
        CLI's loading.load_with_cost, or a test's); called in a worker thread.
        share(model, loaded, turn) -> an object with close(), or None: offers the session's
        model to pedit's commands while the session runs (the CLI's: resident/server.beside),
        `turn` giving them the model between the session's turns."""
        super().__init__()
        self.source = fileio.read(path, force=force)
        fileio.check_writable(path, force=force)
        self.path, self.load, self.model, self.force, self.share = path, load, model, force, share
        self.model_lock = threading.Lock()  # the session's turn, or a command's (share)
        self.shared: object | None = None  # what share returned for the model loaded now
        self.options = options or EngineOptions()
        self.system = system
        self.session: Session | None = None
        self.running = False
        self.ttft: list[tuple[int, float, int]] = []  # (turn, seconds to first token, cached tokens)
        self.last_instruction = ""
        self.stopped_by: int | None = None  # the signal that ended the session (SIGHUP, SIGTERM, SIGINT)
        self._handlers: dict[int, object] = {}

    # --- layout --------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="main"):
            yield Document(self.path.name, id="document")
            with Vertical(id="side"):
                yield Static(id="figures")
                yield RichLog(id="history", wrap=True, markup=False)
        yield Instruction(placeholder="Instruction, then Enter (F1: help)", id="instruction", disabled=True)
        yield Footer()

    def on_mount(self) -> None:
        self._hold_signals()
        self.document.border_title = Content(self.path.name)  # a name is never markup
        self.query_one("#figures").border_title = "live"
        self.query_one("#history").border_title = "history"
        self.document.show_file(self.source.text)
        self.set_status(f"loading {self.model}...")
        self.load_model(self.model)
        self._say_recovery()

    @property
    def document(self) -> Document:
        return self.query_one(Document)

    @property
    def instruction(self) -> Instruction:
        return self.query_one("#instruction", Instruction)

    def set_status(self, text: str) -> None:
        self.sub_title = text  # the header shows it as plain text (App.format_title)

    def tell(
        self, message: str, *, title: str = "", severity: str = "information", timeout: float | None = None
    ):
        """A notice. Its text is never markup: a path, a model spec, an instruction or an
        error may hold `[/]` or `[bold]`, shown as typed."""
        self.notify(message, title=title, severity=severity, timeout=timeout, markup=False)

    def _title(self) -> None:
        unsaved = self.session is not None and self.session.unsaved
        self.title = f"pedit: {self.path.name}{' [modified]' if unsaved else ''}"

    # --- the model -----------------------------------------------------------------------

    @on(ModelReady)
    def model_ready(self, message: ModelReady) -> None:
        if message.error:
            self.set_status(f"model {message.name}: {message.error}")
            self.tell(message.error, title="model not loaded", severity="error")
            if self.session is None:
                return
        else:
            self._take_model(message.loaded, message.name)
            self.model = message.name
            self.set_status(f"model {message.name}")
        self.instruction.disabled = False
        self.screen.set_focus(self.instruction)
        self._title()
        self.refresh_figures(None, 0, 0.0)

    # --- a turn ------------------------------------------------------------------------------

    @on(Instruction.Submitted, "#instruction")
    def submit(self, event: Instruction.Submitted) -> None:
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
        self.screen.set_focus(self.document)
        self.set_status(f"writing: {text}")
        self.generate(text)

    @work(thread=True, exclusive=True, group="turn")
    def generate(self, instruction: str) -> None:
        worker = get_current_worker()
        session = self.session
        assert session is not None
        try:
            with self.model_lock:  # a command answered by this session's model (share) ends first
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
        self.screen.set_focus(self.document)
        self.set_status("a accept all · space/enter pick hunks · r reject · e retry")

    @on(TurnStopped)
    def turn_stopped(self, message: TurnStopped) -> None:
        self.running = False
        if self.session is not None:
            self.document.show_file(self.session.text)
        self.set_status(message.reason)
        if message.error:
            self.tell(message.reason, title="error", severity="error")
        self._ready_for_instruction(self.last_instruction if message.error else "")

    def refresh_figures(self, stats, tokens: int, elapsed: float) -> None:
        self.query_one("#figures", Static).update(figures(stats, tokens, elapsed, self.ttft, self.model))

    def on_unmount(self) -> None:
        self._release_signals()
        # a generation still running (cancelled, between two passes) owns the backend until
        # it returns; the process exit frees it then
        self._unshare()  # a command it is answering ends first
        if self.session is not None and not self.running:
            calibration.keep(self.session.options.edit.cost)
            self.session.backend.close()
