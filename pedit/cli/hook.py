"""`pedit hook run | install | uninstall`: the git pre-commit hook (pedit/hook/, docs/hook.md)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import click
import typer

from . import options as o

app = typer.Typer(
    help="""Run pedit as a git pre-commit hook on the staged files (docs/hook.md).

- `pedit hook install`: write .git/hooks/pre-commit (chains to an existing hook)
- `pedit hook uninstall`: remove it, restore the previous hook
- `pedit hook run`: what the hook runs; with FILES, what pre-commit runs
""",
    no_args_is_help=True,
)

Choice = click.Choice


Files = Annotated[
    list[str] | None, typer.Argument(help="These files, as pre-commit passes them.", show_default=False)
]
Mode = Annotated[
    str | None,
    typer.Option(
        click_type=Choice(["fix", "check"]), help="fix: rewrite; check: never write, fail with a diff."
    ),
]
Restage = Annotated[
    bool | None,
    typer.Option(
        "--restage/--no-restage", help="fix: stage the fixes and let the commit go on.", show_default=False
    ),
]
Command = Annotated[
    str | None, typer.Option(click_type=Choice(["fix", "refactor", "edit"]), help="One rule for every file.")
]
Instruction = Annotated[str | None, typer.Option(help="The instruction for --command refactor/edit.")]
Budget = Annotated[float | None, typer.Option(min=0, help="Seconds for the whole commit. [default: 300]")]
OnBudget = Annotated[
    str | None,
    typer.Option(click_type=Choice(["pass", "fail"]), help="Past the budget: commit anyway or stop."),
]
Model = Annotated[str | None, typer.Option("-m", "--model", help="[default: the `pedit config` model]")]
Backend = Annotated[
    str | None,
    typer.Option("-b", "--backend", click_type=Choice(["auto", "llama.cpp", "transformers", "reference"])),
]
Temperature = Annotated[float | None, typer.Option(click_type=o.Finite(min=0.0), help="[default: 0, greedy]")]
Seed = Annotated[int | None, typer.Option(min=0, max=2**63 - 1)]


@app.command("run")
def run_command(
    files: Files = None,
    mode: Mode = None,
    restage: Restage = None,
    command: Command = None,
    instruction: Instruction = None,
    budget: Budget = None,
    on_budget: OnBudget = None,
    model: Model = None,
    backend: Backend = None,
    temperature: Temperature = None,
    seed: Seed = None,
):
    """Rewrite the staged files the rules select (FILES: these files, as pre-commit passes them).

    Never prompts. One line per file; exit 0 when the commit may go on (a model's answer
    refused as incomplete or unsafe leaves its file as staged), 1 when it should stop
    (changes to review, check failed, a fix it could not write safely, a file staged again
    while it ran, over budget with on_budget = "fail"), 2 bad configuration, 3 model
    missing. SKIP=pedit skips it.
    """
    from ..app import config
    from ..hook import git, rules
    from ..hook.run import run_hook

    if "pedit" in {s.strip() for s in os.environ.get("SKIP", "").split(",")}:
        typer.echo("pedit: skipped (SKIP=pedit)")
        return
    repo = git.root(Path.cwd())
    hook_config = rules.with_overrides(
        rules.load(repo), mode=mode, restage=restage, command=command, instruction=instruction,
        budget=budget, on_budget=on_budget, temperature=temperature, seed=seed,
    )  # fmt: skip
    settings = config.resolve({"model": model, "backend": backend})
    outcome = run_hook(
        repo, hook_config, settings, list(files) if files else None, notify=lambda s: typer.echo(s, err=True),
        echo=typer.echo,
    )  # fmt: skip
    if outcome.code:
        sys.exit(int(outcome.code))


@app.command("install")
def install_command(
    hooks_dir: Annotated[
        Path | None, typer.Option(file_okay=False, help="Install here (core.hooksPath).")
    ] = None,
):
    """Write the repository's pre-commit hook (an existing one is kept and runs first)."""
    from ..hook import git, install

    repo = git.root(Path.cwd())
    typer.echo(install.install(repo, install.hooks_dir(repo, hooks_dir)))


@app.command("uninstall")
def uninstall_command(
    hooks_dir: Annotated[Path | None, typer.Option(file_okay=False, help="Where it was installed.")] = None,
):
    """Remove pedit's pre-commit hook and restore the one it replaced."""
    from ..hook import git, install

    repo = git.root(Path.cwd())
    typer.echo(install.uninstall(repo, install.hooks_dir(repo, hooks_dir)))
