"""The `pedit` command (Typer): parses input and hands it to rewrite.py; the other commands
live beside this module and are registered at the end.

Exit codes (docs/cli.md): 0 ok or no change, 1 would change (--check), 2 usage error or
bad input, 3 model missing/corrupt/unloadable, 4 conflict (the file changed on disk), 5
refused (an incomplete answer, or the write guard), 70 internal error, 75 the interactive
session ended on a bug with its unsaved text kept, 129 hung up (SIGHUP), 130 interrupted,
143 terminated.
"""

from __future__ import annotations

import contextlib
import faulthandler
import inspect
import os
import signal
import sys
import traceback
from pathlib import Path
from typing import Annotated

import click
import typer
from typer.core import TyperGroup

from .. import __version__
from ..errors import ExitCode, HungUp, PeditError, Terminated
from . import options as o


class PeditGroup(TyperGroup):
    """Turns pedit's errors into one line on stderr and a documented exit code."""

    def resolve_command(self, ctx: click.Context, args: list[str]):
        """`pedit FILE` (an existing path that is not a command): the interactive session."""
        if args and args[0] not in self.commands and not args[0].startswith("-") and Path(args[0]).exists():
            return "tui", self.commands["tui"], args
        return super().resolve_command(ctx, args)

    def main(self, *args, **kwargs):
        """click's own main: a usage error is click's plain `Error: ...` line (as scripts and
        the tests read it), not a rich box; --help still gets Typer's rich panels."""
        return click.Group.main(self, *args, **kwargs)

    def invoke(self, ctx: click.Context):
        from ..backends import BackendError

        try:
            _finish_journals()
            return super().invoke(ctx)
        except PeditError as exc:
            _fail(ctx, exc.message, exc.exit_code)
        except BackendError as exc:
            from .rewrite import as_error

            error = as_error(exc)
            _fail(ctx, error.message, error.exit_code)
        except HungUp:
            _fail(ctx, _stopped("hung up", ctx.invoked_subcommand), ExitCode.HANGUP)
        except Terminated:
            _fail(ctx, _stopped("terminated", ctx.invoked_subcommand), ExitCode.TERMINATED)
        except (KeyboardInterrupt, click.exceptions.Abort):  # click's prompts: Ctrl-C is Abort there
            _fail(ctx, _stopped("interrupted", ctx.invoked_subcommand), ExitCode.INTERRUPTED)
        except (click.exceptions.Exit, click.ClickException):
            raise
        except BrokenPipeError:  # `pedit ... | head`: click's main ends quietly with 1, as rich does
            raise
        except Exception as exc:
            if os.environ.get("PEDIT_DEBUG"):
                traceback.print_exc()
            message = f"internal error: {type(exc).__name__}: {exc} (set PEDIT_DEBUG=1 for a traceback)"
            _fail(ctx, message, ExitCode.INTERNAL)


def _finish_journals() -> None:
    """A rename across files that a killed pedit left partway is finished first (app/together.py)."""
    from ..app import together

    together.recover(lambda line: typer.echo(line, err=True))


REWRITES = ("fix", "refactor", "summarize", "edit", "extract", "tui")  # the commands that write files


def _stopped(how: str, command: str | None) -> str:
    """What a stop (Ctrl-C, SIGTERM) left, truly: a write is never split by a signal
    (atomic.uninterrupted), so the files this process replaced are exactly atomic.written()."""
    from ..app import atomic

    if command == "serve":
        return f"{how}; the server stopped"
    if command == "hook":
        return f"{how}; the lines above say what was changed, nothing else was"
    if command not in REWRITES:
        return how
    done = [str(p) for p in atomic.written()]
    if not done:
        return f"{how}; no file was changed"
    names = ", ".join(done[:3]) + (f" and {len(done) - 3} more" if len(done) > 3 else "")
    return f"{how} after writing {names}; no other file was changed"


def _fail(ctx: click.Context, message: str, code: int):
    with contextlib.suppress(OSError):  # the terminal is gone (SIGHUP): the exit code still says it
        typer.echo(f"pedit: error: {message}", err=True)
    ctx.exit(int(code))


# Typer renders help as Markdown, and joins an epilog's paragraphs with single newlines.
EPILOG = "\n\n".join(
    [
        "**Exit codes:**",
        "- 0 ok or no change; 1 would change (--check), or output closed early (| head)",
        "- 2 usage error or bad input",
        "- 3 model missing, corrupt or unloadable",
        "- 4 the file changed on disk (or another pedit has it)",
        "- 5 the answer was refused (incomplete, or the guard)",
        "- 70 internal error; 75 the session ended on a bug, its unsaved text kept (pedit FILE)",
        "- 129 hung up (SIGHUP); 130 interrupted; 143 terminated",
        "",
        "**Settings:** flags > PEDIT_MODEL / PEDIT_BACKEND > [tool.pedit] in pyproject.toml > the user "
        "config file > defaults; `pedit config` shows them and their sources.",
        "",
        "**Completion:** `pedit --install-completion` (bash, zsh, fish, PowerShell).",
    ]
)

app = typer.Typer(
    cls=PeditGroup,
    name="pedit",
    epilog=EPILOG,
    context_settings={"help_option_names": ["-h", "--help"]},
    rich_markup_mode="markdown",
    pretty_exceptions_enable=False,
    no_args_is_help=True,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"pedit, version {__version__}")
        raise typer.Exit()


@app.callback()
def main_options(
    version: Annotated[
        bool | None,
        typer.Option("--version", callback=_version, is_eager=True, help="Show the version and exit."),
    ] = None,
):
    """Rewrite files with a local language model, fast: the file itself is the draft.

    ```
    pedit fix essay.md                  fix grammar and spelling
    pedit refactor main.py "rename x to count"
    pedit summarize notes.md            print a summary
    pedit edit FILE "any instruction"
    ```

    The model runs on this machine (llama.cpp or transformers); the default model,
    Qwen2.5-Coder-1.5B-Instruct, is installed with pedit and works offline.
    """


SETTINGS = ("model", "backend", "n_ctx", "threads", "speculate", "draft_max", "keep_bias", "spelling",
            "dialect", "skeleton", "base_url", "jobs",
            "answer_cache")  # fmt: skip  # the flags that are config.KEYS settings


def _run(command: str, given: dict, *, data: bool = False) -> None:
    """Run the template `command` on the parsed options `given`; `data`: the answer is JSON
    data valid against --schema, which is the instruction too (extract)."""
    from ..app import config
    from ..app.options import EngineOptions
    from ..engine.options import EditOptions
    from .rewrite import Invocation, run

    c = o.constraint(given.get("schema"), given.get("regex"), given.get("grammar"))
    mode = o.write_back(**{k: given.get(k, False) for k in ("yes", "diff", "check", "stdout", "json")})
    sampling = o.sampling(given["temperature"], given["top_k"], given["top_p"], given["seed"])
    key = o.api_key(given.get("api_key"), given.get("api_key_file"))
    settings = config.resolve({k: given.get(k) for k in SETTINGS})
    decoding = EditOptions(
        sampling=sampling, max_tokens=given["max_tokens"], drafters=given["drafters"], constraint=c,
        coalesce=given.get("coalesce", True),
    )  # fmt: skip
    flags = EngineOptions(
        edit=decoding, json_auto=given.get("json_grammar", True), prompt_cache=given.get("prompt_cache", True)
    )
    inv = Invocation(
        command=command, files=tuple(given["files"]), settings=settings,
        instruction=c.source if data else given.get("instruction"), mode=mode,
        force=given.get("force", False), system=given["system"], options=settings.engine_options(flags),
        stats_json=given["stats_json"], stdin_filename=given.get("stdin_filename"), data=data, api_key=key,
        project=not given.get("no_project", False),
    )  # fmt: skip
    code = run(inv)
    if code:
        sys.exit(code)


# fix, refactor, summarize and edit take the same options; each (name, annotation, default),
# in --help's order. Typer reads a command's options from its signature, so each command
# below is a function with this signature (inspect.Signature), not four copies of it.
OUTPUT = [
    ("yes", o.Yes, False), ("diff", o.Diff, False), ("check", o.Check, False),
    ("stdout", o.Stdout, False), ("json", o.Json, False), ("force", o.Force, False),
]  # fmt: skip
SUMMARY_JSON = typer.Option(
    "--json", help="Print the summaries and figures as JSON.", rich_help_panel=o.OUTPUT, show_default=False
)
SUMMARY_OUTPUT = [("json", Annotated[bool, SUMMARY_JSON], False)]
EXTRACT_JSON = typer.Option(
    "--json", help="Print the data and figures as JSON.", rich_help_panel=o.OUTPUT, show_default=False
)
ExtractJson = Annotated[bool, EXTRACT_JSON]
COMMON = [
    ("stdin_filename", o.StdinFilename, None), ("stats_json", o.StatsJson, None),
    ("model", o.Model, None), ("backend", o.Backend, None), ("n_ctx", o.NCtx, None),
    ("threads", o.Threads, None), ("base_url", o.BaseUrl, None), ("api_key", o.ApiKey, None),
    ("api_key_file", o.ApiKeyFile, None), ("jobs", o.Jobs, None),
    ("system", o.System, None), ("max_tokens", o.MaxTokens, None), ("temperature", o.Temperature, 0.0),
    ("top_k", o.TopK, 0), ("top_p", o.TopP, 1.0), ("seed", o.Seed, 0), ("keep_bias", o.KeepBias, None),
    ("speculate", o.Speculate, None), ("drafters", o.Drafters, "predicted,lookup,ngram"),
    ("draft_max", o.DraftMax, None), ("spelling", o.Spelling, None), ("dialect", o.Dialect, None),
    ("coalesce", o.Coalesce, True),
    ("prompt_cache", o.PromptCache, True), ("answer_cache", o.AnswerCache, None),
    ("schema", o.Schema, None), ("regex", o.Regex, None), ("grammar", o.Grammar, None),
    ("json_grammar", o.JsonGrammar, True), ("skeleton", o.SkeletonGrammar, None),
]  # fmt: skip


def _command(
    name: str, doc: str, *, instruction: bool, output: list, common: list = COMMON, data: bool = False
) -> None:
    """Register `pedit NAME FILES... [INSTRUCTION] [options]` running the NAME template
    (`data`: see _run)."""
    params = [("files", o.Files, inspect.Parameter.empty)]
    params += [("instruction", o.Instruction, inspect.Parameter.empty)] if instruction else []
    params += output + common
    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD

    def command(**given) -> None:
        _run(name, given, data=data)

    command.__signature__ = inspect.Signature(
        [inspect.Parameter(n, kind, annotation=a, default=d) for n, a, d in params]
    )
    command.__annotations__ = {n: a for n, a, _ in params}
    command.__name__, command.__doc__ = name, doc
    app.command(name)(command)


_command(
    "fix",
    """Fix grammar, spelling and punctuation in FILES without changing meaning or format.

    Prose (Markdown, text, reStructuredText) and the comments and docstrings of code;
    in code, obvious typos too, never behaviour. Spelling (pyspellchecker) and grammar
    (Harper) suggestions, and the swaps of confused words (their/there, to/too, was/were)
    the model scores likelier, go into the draft, and the model keeps or rejects each.
    FILES may be globs, or - for stdin.
    """,
    instruction=False,
    output=OUTPUT,
)
_command(
    "refactor",
    """Refactor the code in FILES as INSTRUCTION says: pedit refactor main.py "rename x to count".

    A rename, type hints, f-strings, print to logging and extract function are read from
    INSTRUCTION: a tool proposes the edit (rope or tree-sitter: the exact rename; flynt:
    the f-strings; every print() as a logger call), type hints decode under a grammar,
    and the answer is written only if its check passes (else exit 5; --force writes it).
    A rename in a project (a git work tree, or under a pyproject.toml, setup.cfg or
    setup.py) renames the name's uses in every Python file of it too, all checked and
    written together or not at all (--no-project: this file alone). docs/cli.md has the
    details.
    """,
    instruction=True,
    output=[*OUTPUT, ("no_project", o.NoProject, False)],
)
_command(
    "summarize",
    """Print a summary of each of FILES (never rewrites them).""",
    instruction=False,
    output=SUMMARY_OUTPUT,
)
_command(
    "edit",
    """Rewrite FILES following any INSTRUCTION: pedit edit essay.md "Make it shorter".""",
    instruction=True,
    output=OUTPUT,
)


EXTRACT_OMITS = ("regex", "grammar", "json_grammar", "keep_bias", "spelling", "dialect", "skeleton", "schema")
_command(
    "extract",
    """Print the data in each of FILES as JSON valid against a schema.

    pedit extract notes.md --schema people.json

    The output is constrained to the schema as it is generated (the text it forces costs no
    forward pass) and checked against it before it is printed (docs/structured.md).
    """,
    instruction=False,
    output=[("schema", o.RequiredSchema, inspect.Parameter.empty), ("json", ExtractJson, False)],
    common=[c for c in COMMON if c[0] not in EXTRACT_OMITS],
    data=True,
)


def _register() -> None:
    from . import bench, config, daemon, hook, models, serve, tui

    app.add_typer(models.app, name="models")
    app.command("templates")(config.templates_command)
    app.command("config")(config.config_command)
    app.command("bench")(bench.bench_command)
    app.command("tui")(tui.tui_command)
    app.command("serve")(serve.serve_command)
    app.add_typer(hook.app, name="hook")
    app.add_typer(daemon.app, name="daemon")


_register()
cli = typer.main.get_command(app)  # the click command: what `pedit` runs and the tests invoke


def _terminate(signum, frame):
    raise Terminated()


def _hang_up(signum, frame):
    raise HungUp()


def main():
    signal.signal(signal.SIGTERM, _terminate)  # cleaned up like Ctrl-C, exit 143
    # a closed terminal: the same, exit 129 (not under nohup, which set it to be ignored)
    if hasattr(signal, "SIGHUP") and signal.getsignal(signal.SIGHUP) == signal.SIG_DFL:
        signal.signal(signal.SIGHUP, _hang_up)
    # A crash in native code (llama.cpp, torch) the build check could not foresee still
    # says where it happened on stderr before the process dies (exit 139), never silently.
    faulthandler.enable()
    cli(prog_name="pedit")


if __name__ == "__main__":
    sys.exit(main())
