"""`pedit tui FILE` (and `pedit FILE`): the interactive session (pedit/tui/)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from ..errors import UsageError
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

    `pedit FILE` (a file and no command) does the same. Keys: F1 in the app.
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
        force=force,
    )  # fmt: skip  # reads FILE: a missing, binary or read-only file is refused here
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise UsageError("the interactive session needs a terminal; use pedit edit FILE INSTRUCTION instead")
    sys.exit(app.run() or 0)
