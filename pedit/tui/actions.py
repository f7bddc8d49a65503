"""What PeditApp's keys do (its BINDINGS): cancel, save, undo and redo, the theme, the help,
another model, quit. A mixin of PeditApp: Textual finds an action by its method's name."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Input, RichLog

from ..app import fileio
from ..app.session import Session, TurnResult
from ..checks import guard
from ..errors import PeditError
from .screens import HelpScreen, ModelScreen, QuitScreen, SaveAsScreen
from .widgets import history_line


class Actions:
    """PeditApp's actions."""

    path: Path
    source: fileio.Source
    session: Session | None
    running: bool
    force: bool
    model: str

    def action_cancel(self) -> None:
        if self.running:
            self.workers.cancel_group(self, "turn")
            self.set_status("cancelling...")

    def action_interrupt(self) -> None:
        if self.running:
            self.action_cancel()
        elif isinstance(self.focused, Input):
            self.focused.action_copy()
        else:
            self.tell("Ctrl+Q quits", timeout=2)

    def action_save(self) -> None:
        """Save the working text to the file, with the command line's checks at this moment
        (fileio.write: read-only file or folder, hard links, changed on disk; the lock:
        another pedit; the guard). A refused save says so and how to keep the text (F2)."""
        if self.session is None or self.running:
            return
        refusal = guard.judge(self.path.name, self.source.text, self.session.text, judged=False)
        if refusal and refusal.stands(self.force):  # no flag saves an empty file
            self._refused(f"{refusal.reason} (start pedit with --force to save it anyway)")
            return
        try:
            with fileio.locked(self.path):  # and written only if still what was read
                self.source = fileio.write(self.source, self.session.text, force=self.force)
        except PeditError as exc:
            self._refused(exc.message)
            return
        self.session.mark_saved()
        self._title()
        self.set_status(f"saved {self.path}")

    def _refused(self, reason: str) -> None:
        self.tell(f"{reason}. F2 saves the text to another file.", title="not saved", severity="error")
        self.set_status(f"not saved: {reason}")

    def action_save_as(self) -> None:
        """The working text to a new file (offered: FILE.pedit-rejected beside the file),
        never over an existing one; the session stays on its file."""
        if self.session is None or self.running:
            return

        def chosen(name: str | None) -> None:
            if not name or self.session is None:
                return
            where = Path(name).expanduser()
            try:
                fileio.write_new(self.source, self.session.text, where)
            except PeditError as exc:
                self.tell(exc.message, title="not saved", severity="error")
                return
            self.set_status(f"the text is in {where}; {self.path.name} is unchanged")

        self.push_screen(SaveAsScreen(f"{self.path}.pedit-rejected"), chosen)

    def action_undo(self) -> None:
        if self.session is not None and not self.running and self.session.undo():
            self.document.show_file(self.session.text)
            self._title()
            self.set_status("undone")

    def action_redo(self) -> None:
        if self.session is not None and not self.running and self.session.redo():
            self.document.show_file(self.session.text)
            self._title()
            self.set_status("redone")

    def action_toggle_theme(self) -> None:
        self.theme = "textual-light" if self.current_theme.dark else "textual-dark"
        if self.session is not None and self.document.mode == "file":
            self.document.show_file(self.session.text)

    def action_help(self) -> None:
        self.push_screen(HelpScreen())

    def action_switch_model(self) -> None:
        if self.running:
            return

        def chosen(spec: str | None) -> None:
            if spec and spec != self.model:
                self.instruction.disabled = True
                self.set_status(f"loading {spec}...")
                self.load_model(spec)

        self.push_screen(ModelScreen(self.model), chosen)

    def action_request_quit(self) -> None:
        if self.session is None or not self.session.unsaved:
            self._quit()
            return

        def chosen(answer: str | None) -> None:
            if answer == "save":
                self.action_save()
                if self.session is not None and not self.session.unsaved:
                    self._quit()
            elif answer == "quit":
                self._quit()

        self.push_screen(QuitScreen(), chosen)

    def _quit(self) -> None:
        self.workers.cancel_group(self, "turn")
        self.exit(0)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The verdict keys are live while the answer's diff has the focus; else the key
        goes on to what has it (a letter to the instruction box)."""
        if action == "answer":
            return self.focused is self.document and self.document.mode == "diff"
        return True

    def action_answer(self, name: str) -> None:
        """A verdict key, decided now: the text kept (or not), and the focus moved to the
        instruction before the next key is looked at."""
        session = self.session
        got = self.document.verdict(name)
        if got is None or session is None or session.pending is None:
            return
        text, retry = got
        result = session.pending
        if text is None:
            session.reject()
            verdict = "rejected"
        else:
            session.accept(text)
            verdict = "accepted" if text == result.answer else "partly accepted"
        self._log(result, verdict)
        self.document.show_file(session.text)
        self._title()
        self.set_status(f"{verdict}: {result.instruction}")
        self._ready_for_instruction(self.last_instruction if retry else "")

    def _log(self, result: TurnResult, verdict: str) -> None:
        session = self.session
        n = len(session.turns) if session else 0
        self.query_one("#history", RichLog).write(history_line(n, result, verdict))

    def _ready_for_instruction(self, value: str) -> None:
        self.instruction.disabled = False
        self.instruction.value = value
        self.screen.set_focus(self.instruction)  # now, not after the keys already queued
