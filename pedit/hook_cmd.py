"""`pedit hook run | install | uninstall`: the git pre-commit hook (pedit/hook/, docs/hook.md)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click


@click.group("hook")
def hook_group():
    """Run pedit as a git pre-commit hook on the staged files (docs/hook.md).

    \b
    pedit hook install      write .git/hooks/pre-commit (chains to an existing hook)
    pedit hook uninstall    remove it, restore the previous hook
    pedit hook run          what the hook runs; with FILES, what pre-commit runs
    """


@hook_group.command("run")
@click.argument("files", nargs=-1)
@click.option(
    "--mode", type=click.Choice(["fix", "check"]), help="fix: rewrite; check: never write, fail with a diff."
)
@click.option("--restage/--no-restage", default=None, help="fix: stage the fixes and let the commit go on.")
@click.option("--command", type=click.Choice(["fix", "refactor", "edit"]), help="One rule for every file.")
@click.option("--instruction", help="The instruction for --command refactor/edit.")
@click.option("--budget", type=click.FloatRange(min=0), help="Seconds for the whole commit. [default: 300]")
@click.option(
    "--on-budget", type=click.Choice(["pass", "fail"]), help="Past the budget: commit anyway or stop."
)
@click.option("-m", "--model", help="[default: the `pedit config` model]")
@click.option("-b", "--backend", type=click.Choice(["auto", "llama.cpp", "transformers", "reference"]))
@click.option("--temperature", type=click.FloatRange(min=0.0), help="[default: 0, greedy]")
@click.option("--seed", type=int)
def run_command(
    files, mode, restage, command, instruction, budget, on_budget, model, backend, temperature, seed
):
    """Rewrite the staged files the rules select (FILES: these files, as pre-commit passes them).

    Never prompts. One line per file; exit 0 when the commit may go on (a model's answer
    refused as incomplete or unsafe leaves its file as staged), 1 when it should stop
    (changes to review, check failed, a fix it could not write safely, a file staged again
    while it ran, over budget with on_budget = "fail"), 2 bad configuration, 3 model
    missing. SKIP=pedit skips it.
    """
    from . import config
    from .hook import git, rules
    from .hook.run import run_hook

    if "pedit" in {s.strip() for s in os.environ.get("SKIP", "").split(",")}:
        click.echo("pedit: skipped (SKIP=pedit)")
        return
    repo = git.root(Path.cwd())
    hook_config = rules.with_overrides(
        rules.load(repo), mode=mode, restage=restage, command=command, instruction=instruction,
        budget=budget, on_budget=on_budget, temperature=temperature, seed=seed,
    )  # fmt: skip
    settings = config.resolve({"model": model, "backend": backend})
    outcome = run_hook(
        repo, hook_config, settings, list(files) if files else None, notify=lambda s: click.echo(s, err=True)
    )
    for line in outcome.lines:
        click.echo(line)
    if outcome.code:
        sys.exit(int(outcome.code))


@hook_group.command("install")
@click.option(
    "--hooks-dir", type=click.Path(path_type=Path, file_okay=False), help="Install here (core.hooksPath)."
)
def install_command(hooks_dir):
    """Write the repository's pre-commit hook (an existing one is kept and runs first)."""
    from .hook import git, install

    repo = git.root(Path.cwd())
    click.echo(install.install(repo, install.hooks_dir(repo, hooks_dir)))


@hook_group.command("uninstall")
@click.option("--hooks-dir", type=click.Path(path_type=Path, file_okay=False), help="Where it was installed.")
def uninstall_command(hooks_dir):
    """Remove pedit's pre-commit hook and restore the one it replaced."""
    from .hook import git, install

    repo = git.root(Path.cwd())
    click.echo(install.uninstall(repo, install.hooks_dir(repo, hooks_dir)))
