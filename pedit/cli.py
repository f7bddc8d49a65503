"""The `pedit` command: a thin shell that parses input and hands it to runner.py.

Exit codes (docs/cli.md): 0 ok or no change, 1 would change (--check), 2 usage error or
bad input, 3 model missing/corrupt/unloadable, 4 conflict (the file changed on disk), 5
refused (an incomplete answer, or the write guard), 70 internal error, 130 interrupted,
143 terminated.
"""

from __future__ import annotations

import os
import signal
import sys
import traceback
from pathlib import Path

import click

from . import __version__
from .errors import ExitCode, PeditError, Terminated, UsageError


class PeditGroup(click.Group):
    """Turns pedit's errors into one line on stderr and a documented exit code."""

    def resolve_command(self, ctx: click.Context, args: list[str]):
        """`pedit FILE` (an existing path that is not a command): the interactive session."""
        if args and args[0] not in self.commands and not args[0].startswith("-") and Path(args[0]).exists():
            return "tui", self.commands["tui"], args
        return super().resolve_command(ctx, args)

    def invoke(self, ctx: click.Context):
        from .backends import BackendError, ContextFull

        try:
            return super().invoke(ctx)
        except PeditError as exc:
            _fail(ctx, exc.message, exc.exit_code)
        except ContextFull as exc:
            _fail(ctx, f"{exc}; the file is too long for this context window (try --n-ctx)", ExitCode.USAGE)
        except BackendError as exc:
            _fail(ctx, str(exc), ExitCode.MODEL)
        except Terminated:
            _fail(ctx, "terminated; the file being rewritten was not written", ExitCode.TERMINATED)
        except KeyboardInterrupt:
            _fail(ctx, "interrupted; the file being rewritten was not written", ExitCode.INTERRUPTED)
        except (click.exceptions.Exit, click.ClickException, click.exceptions.Abort):
            raise
        except Exception as exc:
            if os.environ.get("PEDIT_DEBUG"):
                traceback.print_exc()
            message = f"internal error: {type(exc).__name__}: {exc} (set PEDIT_DEBUG=1 for a traceback)"
            _fail(ctx, message, ExitCode.INTERNAL)


def _fail(ctx: click.Context, message: str, code: int):
    click.echo(f"pedit: error: {message}", err=True)
    ctx.exit(int(code))


EPILOG = """\b
Exit codes: 0 ok or no change, 1 would change (--check), 2 usage error or bad
input, 3 model missing, corrupt or unloadable, 4 the file changed on disk (or
another pedit has it), 5 the answer was refused (incomplete, or the guard),
70 internal error, 130 interrupted, 143 terminated.
\b
Settings: flags > PEDIT_MODEL / PEDIT_BACKEND > [tool.pedit] in pyproject.toml >
the user config file > defaults; `pedit config` shows them and their sources."""


@click.group(cls=PeditGroup, epilog=EPILOG, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="pedit")
def cli():
    """Rewrite files with a local language model, fast: the file itself is the draft.

    \b
    pedit fix essay.md                  fix grammar and spelling
    pedit refactor main.py "rename x to count"
    pedit summarize notes.md            print a summary
    pedit edit FILE "any instruction"

    The model runs on this machine (llama.cpp or transformers); the default model,
    Qwen2.5-Coder-0.5B-Instruct, is installed with pedit and works offline.
    """


def _options(*decorators):
    """Apply click options so that --help lists them in the order written."""

    def apply(f):
        for decorator in reversed(decorators):
            f = decorator(f)
        return f

    return apply


def _drafter_list(ctx, param, value: str) -> tuple[str, ...]:
    from .edit import DRAFTERS

    names = tuple(n.strip() for n in value.split(",") if n.strip())
    if not names or any(n not in DRAFTERS for n in names):
        raise click.BadParameter(f"choose from {','.join(DRAFTERS)} (got {value!r})")
    return names


def _mode(flag: str, value: str, text: str):
    return click.option(*flag.split("/"), f"mode_{value}", is_flag=True, help=text)


def _chosen_mode(options: dict) -> str | None:
    chosen = [k.removeprefix("mode_") for k, v in list(options.items()) if k.startswith("mode_") and v]
    if len(chosen) > 1:
        raise UsageError(f"choose one of {', '.join('--' + c for c in chosen)}")
    return chosen[0] if chosen else None


output_options = _options(
    _mode("-y/--yes", "yes", "Write the rewrite without asking."),
    _mode("--diff", "diff", "Print the unified diff; write nothing."),
    _mode("--check", "check", "Write nothing; exit 1 if a file would change."),
    _mode("--stdout", "stdout", "Print the rewritten text only (the default for FILE '-')."),
    _mode("--json", "json", "Print results and figures as JSON; write nothing."),
    click.option(
        "--force",
        is_flag=True,
        help="Rewrite hard-linked files; write what the guard refuses (docs/cli.md).",
    ),
    click.option(
        "--stdin-filename",
        metavar="NAME",
        help="For FILE '-': the name the model is shown, whose suffix picks the fence's language "
        "and the guard's rules (as ruff and black). [default: stdin]",
    ),
)

model_options = _options(
    click.option(
        "-m",
        "--model",
        help="A name from `pedit models`, a GGUF file, a Hugging Face "
        "directory or repo id. [default: qwen2.5-coder-1.5b]",
    ),  # fmt: skip
    click.option(
        "-b",
        "--backend",
        type=click.Choice(["auto", "llama.cpp", "transformers", "reference"]),
        help="auto: llama.cpp for GGUF, transformers for HF models. [default: auto]",
    ),  # fmt: skip
    click.option("--n-ctx", type=click.IntRange(min=256), help="Context window in tokens. [default: 8192]"),
    click.option("--threads", type=click.IntRange(min=1), help="CPU threads. [default: all usable]"),
)

decode_options = _options(
    click.option("--system", help="Replace the command's system prompt for this run."),
    click.option(
        "--max-tokens",
        type=click.IntRange(min=1),
        help="Stop after this many tokens. [default: 2 x the file's tokens + 1024]",
    ),  # fmt: skip
    click.option(
        "--temperature",
        type=click.FloatRange(min=0.0),
        default=0.0,
        show_default=True,
        help="0 is greedy (argmax).",
    ),  # fmt: skip
    click.option(
        "--top-k",
        type=click.IntRange(min=0),
        default=0,
        show_default=True,
        help="Sample among the k most likely tokens (0: all).",
    ),  # fmt: skip
    click.option(
        "--top-p",
        type=click.FloatRange(min=0.0, max=1.0, min_open=True),
        default=1.0,
        show_default=True,
        help="Nucleus sampling mass.",
    ),  # fmt: skip
    click.option("--seed", type=int, default=0, show_default=True, help="Random seed for sampling."),
    click.option(
        "--speculate",
        type=click.Choice(["auto", "fixed", "off"]),
        help="auto: verify drafts when the measured cost model says they pay; fixed: always "
        "verify up to --draft-max; off: plain decoding. [default: auto]",
    ),  # fmt: skip
    click.option(
        "--drafters",
        default="predicted,lookup,ngram",
        show_default=True,
        callback=_drafter_list,
        help="predicted (the file), lookup (prompt lookup), ngram (adaptive n-grams).",
    ),  # fmt: skip
    click.option(
        "--draft-max",
        type=click.IntRange(min=1, max=256),
        help="Most draft tokens verified in one pass. [default: 64]",
    ),  # fmt: skip
    click.option(
        "--keep-bias",
        type=float,
        help="Add this to the logit of the file's own next token: > 0 changes less, < 0 dares "
        "more; output stays exactly plain decoding's with the same bias. [default: fix 1.5, others 0]",
    ),  # fmt: skip
    click.option(
        "--spelling/--no-spelling",
        default=None,
        help="Draft with a spell checker's corrections of unknown prose words, so the keep-bias "
        "leans towards them; the model keeps or rejects each. [default: on for fix]",
    ),  # fmt: skip
    click.option(
        "--stats-json",
        type=click.Path(path_type=Path, dir_okay=False),
        help="Write the run's figures to this file as JSON.",
    ),  # fmt: skip
)

FILES = click.argument("files", nargs=-1, required=True)


def _run(command: str, files, instruction, options: dict) -> None:
    from .runner import Request, run
    from .sampling import Sampling

    try:
        sampling = Sampling(options["temperature"], options["top_k"], options["top_p"], options["seed"])
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    keys = ("model", "backend", "n_ctx", "threads", "speculate", "draft_max", "keep_bias", "spelling")
    req = Request(
        command, tuple(files), instruction, _chosen_mode(options), options.get("force", False),
        options["system"], {k: options[k] for k in keys}, options["max_tokens"], sampling,
        options["drafters"], options["stats_json"], options.get("stdin_filename"),
    )  # fmt: skip
    code = run(req)
    if code:
        sys.exit(code)


@cli.command()
@FILES
@output_options
@model_options
@decode_options
def fix(files, **options):
    """Fix grammar, spelling and punctuation in FILES without changing meaning or format.

    Prose (Markdown, text, reStructuredText) and the comments and docstrings of code;
    in code, obvious typos too, never behaviour. FILES may be globs, or - for stdin.
    """
    _run("fix", files, None, options)


@cli.command()
@FILES
@click.argument("instruction")
@output_options
@model_options
@decode_options
def refactor(files, instruction, **options):
    """Refactor the code in FILES as INSTRUCTION says: pedit refactor main.py "rename x to count"."""
    _run("refactor", files, instruction, options)


@cli.command()
@FILES
@click.option("--json", "mode_json", is_flag=True, help="Print the summaries and figures as JSON.")
@model_options
@decode_options
def summarize(files, **options):
    """Print a summary of each of FILES (never rewrites them)."""
    _run("summarize", files, None, options)


@cli.command()
@FILES
@click.argument("instruction")
@output_options
@model_options
@decode_options
def edit(files, instruction, **options):
    """Rewrite FILES following any INSTRUCTION: pedit edit essay.md "Make it shorter"."""
    _run("edit", files, instruction, options)


def _register_subcommands():
    from .bench_cmd import bench_command
    from .config_cmd import config_command, templates_command
    from .hook_cmd import hook_group
    from .models_cmd import models_group
    from .tui_cmd import tui_command

    cli.add_command(models_group)
    cli.add_command(templates_command)
    cli.add_command(config_command)
    cli.add_command(bench_command)
    cli.add_command(tui_command)
    cli.add_command(hook_group)


_register_subcommands()


def _terminate(signum, frame):
    raise Terminated()


def main():
    signal.signal(signal.SIGTERM, _terminate)  # cleaned up like Ctrl-C, exit 143
    cli(prog_name="pedit")


if __name__ == "__main__":
    sys.exit(main())
