"""The session's model: loaded in a worker thread and taken over by the app (a mixin of
PeditApp, whose ModelReady handler calls _take_model), and what a worker's failure says."""

from __future__ import annotations

import threading
import traceback
from collections.abc import Callable
from pathlib import Path

from textual import work
from textual.widgets import RichLog

from ..app import fileio
from ..app.loading import Loaded
from ..app.options import EngineOptions
from ..app.session import Session, SessionError
from ..backends import BackendError
from ..errors import PeditError
from ..machine import calibration
from .messages import ModelReady


class Loading:
    """PeditApp's model: its load in a worker, and a worker's failure in one line."""

    path: Path
    source: fileio.Source
    load: Callable[[str], Loaded]
    options: EngineOptions
    system: str | None
    session: Session | None
    share: Callable[[str, Loaded, Callable], object] | None
    shared: object | None
    model_lock: threading.Lock

    @work(thread=True, exclusive=True, group="model")
    def load_model(self, spec: str) -> None:
        """Load in a worker thread; the app takes the model over in model_ready."""
        try:
            loaded = self.load(spec)
        except Exception as exc:  # shown, and the app stays usable
            self.post_message(ModelReady(spec, error=self._problem(exc)))
            return
        self.post_message(ModelReady(spec, loaded=loaded))

    def _problem(self, exc: Exception) -> str:
        """What a worker's failure says in one line. A user's error (a PeditError, a
        SessionError, a backend's) is its message; anything else is a bug in pedit: its
        traceback goes to the history log, where it can be read and reported."""
        if isinstance(exc, PeditError | SessionError | BackendError):
            return str(getattr(exc, "message", exc))
        trace = "".join(traceback.format_exception(exc))
        self.call_from_thread(self._log_bug, trace)  # widgets are the app thread's
        return f"internal error: {type(exc).__name__}: {exc} (the traceback is in the log)"

    def _log_bug(self, trace: str) -> None:
        self.query_one("#history", RichLog).write(f"internal error (a bug in pedit):\n{trace}")

    def _take_model(self, loaded: Loaded, spec: str) -> None:
        """The session's model is `loaded` now (the old one closed); pedit's commands are
        offered it (share) in place of the old."""
        self._unshare()  # before the old model closes: a command it is answering ends first
        backend, cost = loaded.backend, loaded.cost
        if self.session is None:
            options = self.options if cost is None else self.options.costed(cost)
            self.session = Session(
                backend, self.source.text, self.path.name, options=options, system=self.system
            )
        else:
            old = self.session.backend
            calibration.keep(self.session.options.edit.cost)  # the old model's passes, for its next run
            self.session.switch_backend(backend, cost)
            old.close()
        if self.share is not None:
            self._share(spec, loaded)

    @work(thread=True, exclusive=True, group="share")
    def _share(self, spec: str, loaded: Loaded) -> None:
        """Offer the model to pedit's commands (a resident process of the same settings is
        asked to stop first: it may take a moment, so not on the app's thread)."""
        self.shared = self.share(spec, loaded, lambda: self.model_lock)

    def _unshare(self) -> None:
        shared, self.shared = self.shared, None
        if shared is not None:
            shared.close()
