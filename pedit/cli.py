"""The `pedit` command: a thin shell that parses input, runs the decoder, renders events.

Exit codes (docs/cli.md): 0 ok, 1 would change (--check, later), 2 usage or bad input,
3 model missing/corrupt/unloadable, 70 internal error, 130 interrupted.
"""

from __future__ import annotations

import os
import sys
import traceback
from pathlib import Path

import click

from . import __version__
from .errors import ExitCode, PeditError


class PeditGroup(click.Group):
    """Turns pedit's errors into one line on stderr and a documented exit code."""

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
        except KeyboardInterrupt:
            _fail(ctx, "interrupted; no file was written", ExitCode.INTERRUPTED)
        except (click.exceptions.Exit, click.ClickException, click.exceptions.Abort):
            raise
        except Exception as exc:
            if os.environ.get("PEDIT_DEBUG"):
                traceback.print_exc()
            _fail(
                ctx,
                f"internal error: {type(exc).__name__}: {exc} (set PEDIT_DEBUG=1 for a traceback)",
                ExitCode.INTERNAL,
            )


def _fail(ctx: click.Context, message: str, code: int):
    click.echo(f"pedit: error: {message}", err=True)
    ctx.exit(int(code))


EPILOG = """\b
Exit codes: 0 ok, 2 usage error or bad input, 3 model missing, corrupt or
unloadable, 70 internal error, 130 interrupted.
\b
Environment: PEDIT_MODEL, PEDIT_BACKEND (defaults for -m/-b); config file:
`pedit models` prints its path."""


@click.group(cls=PeditGroup, epilog=EPILOG, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="pedit")
def cli():
    """Rewrite a file from an instruction with a local language model.

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


model_options = _options(
    click.option(
        "-m",
        "--model",
        help="Model: a name from `pedit models`, a GGUF file, a "
        "Hugging Face directory or repo id. [default: qwen2.5-coder-0.5b]",
    ),
    click.option(
        "-b",
        "--backend",
        type=click.Choice(["auto", "llama.cpp", "transformers", "reference"]),
        help="Inference backend. auto: llama.cpp for GGUF, transformers for HF models.",
    ),
    click.option(
        "--n-ctx",
        type=click.IntRange(min=256),
        default=8192,
        show_default=True,
        help="Context window in tokens (prompt + rewrite).",
    ),
    click.option("--threads", type=click.IntRange(min=1), help="CPU threads [default: all usable]."),
)

decode_options = _options(
    click.option(
        "--max-tokens",
        type=click.IntRange(min=1),
        help="Stop after this many tokens [default: 2 x the file's tokens + 1024].",
    ),
    click.option(
        "--temperature",
        type=click.FloatRange(min=0.0),
        default=0.0,
        show_default=True,
        help="0 is greedy (argmax).",
    ),
    click.option(
        "--top-k",
        type=click.IntRange(min=0),
        default=0,
        show_default=True,
        help="Sample among the k most likely tokens (0: all).",
    ),
    click.option(
        "--top-p",
        type=click.FloatRange(min=0.0, max=1.0, min_open=True),
        default=1.0,
        show_default=True,
        help="Nucleus sampling mass.",
    ),
    click.option("--seed", type=int, default=0, show_default=True, help="Random seed for sampling."),
)


def _drafter_list(ctx, param, value: str) -> tuple[str, ...]:
    from .edit import DRAFTERS

    names = tuple(n.strip() for n in value.split(",") if n.strip())
    bad = [n for n in names if n not in DRAFTERS]
    if bad or not names:
        raise click.BadParameter(f"choose from {','.join(DRAFTERS)} (got {value!r})")
    return names


speculation_options = _options(
    click.option(
        "--speculate",
        type=click.Choice(["auto", "fixed", "off"]),
        default="auto",
        show_default=True,
        help="auto: verify drafts when the measured cost model says they pay; fixed: always "
        "verify up to --draft-max; off: plain decoding, the true baseline.",
    ),
    click.option(
        "--drafters",
        default="predicted,lookup,ngram",
        show_default=True,
        callback=_drafter_list,
        help="Which drafters to use: predicted (the file itself), lookup (prompt lookup), "
        "ngram (adaptive n-grams).",
    ),
    click.option(
        "--draft-max",
        type=click.IntRange(min=1, max=256),
        default=64,
        show_default=True,
        help="Most draft tokens verified in one forward pass.",
    ),
    click.option(
        "--stats-json",
        type=click.Path(path_type=Path, dir_okay=False),
        help="Write the run's figures to this file as JSON.",
    ),
)


@cli.command()
@click.argument("file", type=click.Path(path_type=Path, allow_dash=True))
@click.argument("instruction")
@click.option("--stdout", "mode", flag_value="stdout", help="Print the rewritten file (streamed).")
@click.option(
    "--diff",
    "mode",
    flag_value="diff",
    default=True,
    help="Print a unified diff of the rewrite (the default); writes nothing.",
)
@model_options
@decode_options
@speculation_options
def edit(file, instruction, mode, **options):
    """Rewrite FILE following INSTRUCTION.

    \b
    pedit edit essay.md "Fix the grammar" --stdout
    pedit edit main.py "Rename x to count"
    """
    from .edit_cmd import RunSettings, run_edit_command

    run_edit_command(file, instruction, mode, RunSettings.from_cli(options))


def _register_subcommands():
    from .models_cmd import models_group

    cli.add_command(models_group)


_register_subcommands()


def main():
    cli(prog_name="pedit")


if __name__ == "__main__":
    sys.exit(main())
