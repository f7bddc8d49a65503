"""`pedit tui FILE` (and `pedit FILE`): the interactive session (pedit/tui/)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from .cli import _options, model_options
from .errors import UsageError

session_options = _options(
    click.option("--system", help="Replace the system prompt for this session."),
    click.option("--temperature", type=click.FloatRange(min=0.0), default=0.0, show_default=True),
    click.option("--top-k", type=click.IntRange(min=0), default=0, show_default=True),
    click.option(
        "--top-p", type=click.FloatRange(min=0.0, max=1.0, min_open=True), default=1.0, show_default=True
    ),
    click.option("--seed", type=int, default=0, show_default=True),
    click.option(
        "--speculate",
        type=click.Choice(["auto", "fixed", "off"]),
        help="As for `pedit edit`. [default: auto]",
    ),
    click.option("--draft-max", type=click.IntRange(min=1, max=256), help="[default: 64]"),
    click.option("--keep-bias", type=float, help="As for `pedit edit`. [default: 0]"),  # free-form turns
    click.option(
        "--force", is_flag=True, help="Allow saving a hard-linked file, and what the guard refuses."
    ),
)


@click.command("tui")
@click.argument("file", type=click.Path(path_type=Path))
@model_options
@session_options
def tui_command(file: Path, **options):
    """Edit FILE interactively: type an instruction, watch the rewrite stream in, accept
    it whole or hunk by hunk, and go on; each answer is the draft of the next, and the
    model keeps the conversation in its cache, so later turns start faster.

    `pedit FILE` (a file and no command) does the same. Keys: F1 in the app.
    """
    from . import config
    from .jobs import EngineOptions
    from .sampling import Sampling
    from .session import model_loader
    from .tui.app import PeditApp

    try:
        sampling = Sampling(options["temperature"], options["top_k"], options["top_p"], options["seed"])
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    keys = ("model", "backend", "n_ctx", "threads", "speculate", "draft_max", "keep_bias")
    settings = config.resolve({k: options[k] for k in keys})
    speculate = settings.get("speculate")

    load = model_loader(settings.get("backend"), settings.get("n_ctx"), settings.get("threads"), speculate)
    engine = EngineOptions(
        None, sampling, speculate, draft_max=settings.get("draft_max"), keep_bias=settings.get("keep_bias")
    )
    app = PeditApp(
        file,
        load=load,
        model=settings.get("model"),
        options=engine,
        system=options["system"],
        force=options["force"],
    )  # reads FILE: a missing, binary or read-only file is refused here
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise UsageError("the interactive session needs a terminal; use pedit edit FILE INSTRUCTION instead")
    sys.exit(app.run() or 0)
