"""`pedit tui FILE` (and `pedit FILE`): the interactive session (pedit/tui/)."""

from __future__ import annotations

import contextlib
import signal
import sys
from pathlib import Path
from typing import Annotated

import typer

from ..errors import HungUp, InternalError, RecoveredError, Terminated, UsageError
from ..models.progress import quietly
from . import options as o

File = Annotated[Path, typer.Argument(help="The file to edit.", show_default=False)]
System = Annotated[
    str | None, typer.Option(help="Replace the system prompt for this session.", rich_help_panel=o.DECODING)
]
KeepBias = Annotated[  # free-form turns: no template's bias
    float | None,
    typer.Option(click_type=o.Finite(), help="As for `pedit edit`. [default: 0]", rich_help_panel=o.DECODING),
]
Force = Annotated[
    bool,
    typer.Option(
        help="Allow saving a hard-linked file, and what the guard refuses.",
        rich_help_panel=o.OUTPUT,
        show_default=False,
    ),
]


def tui_command(
    file: File,
    model: o.Model = None,
    backend: o.Backend = None,
    n_ctx: o.NCtx = None,
    threads: o.Threads = None,
    base_url: o.BaseUrl = None,
    api_key: o.ApiKey = None,
    api_key_file: o.ApiKeyFile = None,
    system: System = None,
    temperature: o.Temperature = 0.0,
    top_k: o.TopK = 0,
    top_p: o.TopP = 1.0,
    seed: o.Seed = 0,
    keep_bias: KeepBias = None,
    speculate: o.Speculate = None,
    draft_max: o.DraftMax = None,
    force: Force = False,
):
    """Edit FILE interactively (also `pedit FILE`).

    Type an instruction, watch the rewrite stream in, accept it whole or hunk by hunk,
    and go on; each answer is the draft of the next, and the model keeps the
    conversation in its cache, so later turns start faster.

    `pedit FILE` (a file and no command) does the same. Keys: F1 in the app. While it
    runs, pedit's commands with the same model and settings use its model.
    """
    from ..app import config
    from ..app.loading import load_with_cost
    from ..app.options import EngineOptions
    from ..engine.options import EditOptions
    from ..tui.app import PeditApp

    chosen = o.sampling(temperature, top_k, top_p, seed)
    given = {"model": model, "backend": backend, "n_ctx": n_ctx, "threads": threads, "base_url": base_url,
             "speculate": speculate, "draft_max": draft_max, "keep_bias": keep_bias}  # fmt: skip
    settings = config.resolve(given)
    key = o.api_key(api_key, api_key_file)

    def load(spec: str):  # in the app's worker thread: its own status line says it
        return quietly(load_with_cost(settings, api_key=key, model=spec))

    app = PeditApp(
        file, load=load, model=settings.model,
        options=settings.engine_options(EngineOptions(edit=EditOptions(sampling=chosen))), system=system,
        force=force, share=share(settings),
    )  # fmt: skip  # reads FILE: a missing, binary or read-only file is refused here
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise UsageError("the interactive session needs a terminal; use pedit edit FILE INSTRUCTION instead")
    sys.exit(run(app))


def share(settings):
    """How the session offers its model to pedit's commands (PeditApp's `share`): as the
    resident model of the settings the session loaded it with (resident/server.beside), so
    that `pedit fix` in another terminal loads no second copy. None with keep_alive 0 or a
    server's model."""
    from ..resident.client import resident_for

    if resident_for(settings) is None:
        return None

    def start(spec: str, loaded, turn):
        from dataclasses import replace

        from ..resident.server import beside

        load = resident_for(replace(settings, model=spec))
        return beside(loaded, load, turn, "pedit (interactive session)") if load else None

    return start


def run(app) -> int:
    """Run the session; its exit code. An ending the user did not choose keeps the accepted,
    unsaved text in a recovery file (PeditApp.keep_unsaved) and says where: a signal
    (SIGHUP, SIGTERM, SIGINT; the app ends on it through its event loop, PeditApp.
    _hold_signals) goes on to its usual exit (129, 143, 130); a bug in pedit, whose
    traceback Textual has printed, exits 75 with the text kept, 70 without."""
    try:
        code = app.run()
    except KeyboardInterrupt:  # a signal before the app held them, or after
        _say_kept(app.keep_unsaved())
        raise
    return ended(app, code)


STOPS = {"SIGHUP": HungUp, "SIGTERM": Terminated, "SIGINT": KeyboardInterrupt}


def ended(app, code: int | None) -> int:
    """After the app has stopped: its exit code; or, when a signal ended it, the signal's
    exception (cli/app.py says it and exits with its code), the accepted, unsaved text kept
    first; or, when a bug ended it (Textual's return code 1), InternalError or
    RecoveredError (the text kept)."""
    if app.stopped_by is not None:
        _say_kept(app.keep_unsaved())
        raise STOPS[signal.Signals(app.stopped_by).name]()
    if not app.return_code:
        return code or 0
    kept = app.keep_unsaved()
    if kept is None:
        raise InternalError("internal error: the session ended on a bug (its traceback is above); "
                            "no accepted text was unsaved")  # fmt: skip
    raise RecoveredError(f"internal error: the session ended on a bug (its traceback is above); "
                         f"the accepted, unsaved text is kept in {kept}")  # fmt: skip


def _say_kept(kept) -> None:
    if kept is not None:
        with contextlib.suppress(OSError):  # no terminal left (SIGHUP)
            print(f"pedit: the accepted, unsaved text is kept in {kept}", file=sys.stderr)
