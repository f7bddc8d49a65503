"""`pedit config` and `pedit templates`: what pedit will use, and where it came from."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console
from rich.text import Text

from ..app import config
from ..machine import build
from ..machine.cpus import CPUS
from .options import Backend, Model


def config_command():
    """Show the effective settings and where each came from."""
    settings = config.resolve({})
    console = Console(soft_wrap=True, markup=False)  # the values and paths may hold `[/]`
    unset = {"threads": f"(all {CPUS} CPUs)", "base_url": "(none)"}  # the rest: the command's
    w = max(len(k) for k in config.KEYS)  # the names' column
    for key, setting in settings.items():
        value = unset.get(key, "(the command's)") if setting.value is None else str(setting.value)
        console.print(f"{key:<{w}} {value:<20} from {setting.source}", highlight=False)
    for name, (_, source) in settings.templates.items():
        console.print(f"{'template':<{w}} {name:<20} from {source}", highlight=False)
    console.print(f"{'devices':<{w}} {devices_line()}", highlight=False)
    console.print(f"{'llama.cpp':<{w}} CPU: {build.line()}", highlight=False)
    console.print(f"user config file: {config.user_config_path()}", highlight=False)
    project = config.project_config_path()
    console.print(
        f"project config: {project} [tool.pedit]" if project else "project config: none", highlight=False
    )


def devices_line() -> str:
    """Where each backend would run here (docs/install.md: a GPU build of each)."""
    from ..backends import device

    return " · ".join(f"{kind}: {device(kind)}" for kind in ("llama.cpp", "transformers"))


def templates_command(
    name: Annotated[str | None, typer.Argument(help="One template.", show_default=False)] = None,
    model: Model = None,
    backend: Backend = None,
):
    """Show the prompt templates behind fix, refactor, summarize and edit (or NAME's), as
    they are asked of the model (a model may add to a built-in instruction).

    Override one in a config file with a [templates.NAME] table (system, instruction),
    or for one run with --system.
    """
    given = {k: v for k, v in {"model": model, "backend": backend}.items() if v is not None}
    all_ = config.resolve(given).prompt_templates()
    if name and name not in all_:
        raise typer.BadParameter(f"no template {name!r}; choose {', '.join(all_)}", param_hint="NAME")
    console = Console(soft_wrap=True, markup=False)  # a template's text is the user's
    for t in [all_[name]] if name else all_.values():
        console.print(Text.assemble((t.name, "bold"), f" ({t.kind}; {t.source})"), highlight=False)
        console.print(f"  system:      {t.system}", highlight=False, markup=False)
        console.print(f"  instruction: {t.instruction}", highlight=False, markup=False)
        if t.keep_bias:
            note = f"  keep-bias:   {t.keep_bias:g} (--keep-bias or keep_bias replaces it)"
            console.print(note, highlight=False)
        if t.spelling:
            note = (
                "  suggestions: spelling (pyspellchecker), grammar (Harper) and the confused words the model"
                " scores likelier (their/there, to/too) in the draft, which the model"
                " keeps or rejects (--no-spelling or spelling = false turns them off)"
            )
            console.print(note, highlight=False)
        if t.intents:
            console.print(
                "  intent:      the instruction read as a rename, type hints, f-strings, print to logging,"
                " extract function or other; a rename drafts with the exact rename (rope, tree-sitter),"
                " f-strings with flynt's conversion, logging with every print() as a logger call, type"
                " hints decode under a grammar with a slot per parameter and return, and the answer is"
                " written only if its check passes (else a retry or the tool's own edit, then exit 5;"
                " --force writes it)",
                highlight=False,
            )
        if t.judged:
            console.print(
                "  pieces:      a run's answer that the write guard refuses is dropped; that piece"
                " stays as it was",
                highlight=False,
            )
        if t.chunk_tokens:
            console.print(f"  runs:        about {t.chunk_tokens} tokens of the file each", highlight=False)
