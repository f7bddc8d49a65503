"""How the interactive session ends when the user did not choose it (a mixin of PeditApp):
the signals it takes through its event loop, and the accepted, unsaved text it keeps in a
recovery file (app/recovery.py); cli/tui.py says what each ending means."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

from ..app import fileio, recovery
from ..app.session import Session


class Endings:
    """PeditApp's signals and recovery file."""

    path: Path
    source: fileio.Source
    session: Session | None
    stopped_by: int | None
    _handlers: dict[int, object]

    def _hold_signals(self) -> None:
        """SIGHUP (the terminal closed), SIGTERM and SIGINT end the session through the event
        loop (asyncio's add_signal_handler), not by an exception raised wherever Python was
        (in the middle of a render, it left a traceback, tasks never awaited and the
        terminal in the app's modes): the turn is cancelled, the app exits as on Ctrl+Q,
        the terminal is given back, and cli/tui.run says what the signal means. A save in
        progress finishes first: it runs on the loop, which takes the signal after it."""
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGHUP, signal.SIGTERM, signal.SIGINT) if hasattr(signal, "SIGHUP") else ():
            before = signal.getsignal(sig)
            if before == signal.SIG_IGN:  # nohup: ignored it stays
                continue
            try:
                loop.add_signal_handler(sig, self._signalled, sig)
            except (NotImplementedError, RuntimeError, ValueError):  # not here (Windows, a thread)
                continue
            self._handlers[sig] = before

    def _signalled(self, sig: int) -> None:
        if self.stopped_by is None:
            self.stopped_by = sig
            self.workers.cancel_group(self, "turn")
            self.exit(128 + sig)

    def _release_signals(self) -> None:
        """The handlers as they were before the session (the CLI's: cli/app.py)."""
        loop = asyncio.get_running_loop()
        for sig, before in self._handlers.items():
            loop.remove_signal_handler(sig)
            signal.signal(sig, before)
        self._handlers = {}

    def keep_unsaved(self) -> Path | None:
        """The accepted, unsaved text to its recovery file (app/recovery.py), when the
        session ends otherwise than by the user's choice; None when nothing is unsaved."""
        if self.session is None or not self.session.unsaved:
            return None
        return recovery.keep(self.source, self.session.text)

    def _say_recovery(self) -> None:
        """At start: a notice when an earlier session left this file's text in its recovery
        file."""
        if kept := recovery.found(self.path):
            self.tell(
                f"An earlier session on {self.path.name} ended before its accepted text was saved; "
                f"that text is in {kept}",
                title="recovery file",
                severity="warning",
                timeout=30,
            )
