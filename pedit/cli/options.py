"""The options the commands share, as Typer annotations, grouped in --help's panels.

Each alias is one option; a command lists the ones it takes and gives the default in its
signature. The values are checked by click's types (the messages users see), and the
sampling ones turned into a Sampling by `sampling()` for every shell (CLI, session).
"""

from __future__ import annotations

import math
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import click
import typer

from ..engine.names import DRAFTERS
from ..errors import UsageError
from ..machine.cpus import CPUS
from ..tools.dialect import CHOICES

OUTPUT, MODEL, DECODING, SPECULATION = "Output", "Model", "Decoding", "Speculation"
STRUCTURE = "Structure"
BACKENDS = ("auto", "llama.cpp", "transformers", "reference", "openai")


class WriteBack(StrEnum):
    """What a rewrite does with its result (black's WriteBack): one per run."""

    ASK = "ask"  # a terminal and no flag: the coloured diff, then "apply? [y/N]" per file
    YES = "yes"  # -y/--yes: write without asking
    DIFF = "diff"  # print the unified diff, write nothing
    CHECK = "check"  # write nothing; exit 1 if any file would change
    STDOUT = "stdout"  # print the new text only (the default for FILE "-")
    JSON = "json"  # print results and figures as JSON, write nothing


def write_back(**flags: bool) -> WriteBack | None:
    """The one mode the flags chose (None: none given); two is a usage error."""
    chosen = [name for name, on in flags.items() if on]
    if len(chosen) > 1:
        raise UsageError(f"choose one of {', '.join('--' + c for c in chosen)}")
    return WriteBack(chosen[0]) if chosen else None


def _drafter_list(value: str) -> tuple[str, ...]:
    names = tuple(n.strip() for n in value.split(",") if n.strip())
    if not names or any(n not in DRAFTERS for n in names):
        raise typer.BadParameter(f"choose from {','.join(DRAFTERS)} (got {value!r})")
    return names


SEED_MAX = 2**63 - 1  # a signed 64-bit integer: what OpenAI-compatible servers take


def sampling(temperature: float, top_k: int, top_p: float, seed: int):
    """The Sampling the options ask for; an impossible combination is a usage error."""
    from ..engine.options import Sampling  # declared without numpy: a resident's client imports none

    try:
        return Sampling(temperature, top_k, top_p, seed)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc


class Finite(click.FloatRange):
    """A float in a range, and a number: nan and inf are refused (nan compares false with
    every bound, so a range alone lets it through)."""

    def convert(self, value, param, ctx):
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        return number


def api_key(key: str | None, key_file: Path | None) -> str | None:
    """The API key for -b openai: --api-key-file's first line, else --api-key (or its
    environment variables, which click has read into it). Both given on the command line,
    or an empty key file, is a usage error."""
    if key_file is None:
        return key
    ctx = click.get_current_context(silent=True)
    typed = ctx is not None and ctx.get_parameter_source("api_key") == click.core.ParameterSource.COMMANDLINE
    if typed:
        raise UsageError("choose one of --api-key, --api-key-file")
    try:
        lines = key_file.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"--api-key-file {key_file}: cannot read it ({exc})") from exc
    if not lines or not lines[0].strip():
        raise UsageError(f"--api-key-file {key_file}: its first line is empty")
    return lines[0].strip()


def _flag(*names: str, text: str, panel: str = OUTPUT):
    return typer.Option(*names, help=text, rich_help_panel=panel, show_default=False)


Files = Annotated[
    list[str],
    typer.Argument(help="Files or globs; - reads standard input.", show_default=False, metavar="FILES..."),
]
Instruction = Annotated[str, typer.Argument(help="What to do, in words.", show_default=False)]

# Output
Yes = Annotated[bool, _flag("-y", "--yes", text="Write the rewrite without asking.")]
Diff = Annotated[bool, _flag("--diff", text="Print the unified diff; write nothing.")]
Check = Annotated[bool, _flag("--check", text="Write nothing; exit 1 if a file would change.")]
Stdout = Annotated[bool, _flag("--stdout", text="Print the rewritten text only (the default for FILE '-').")]
Json = Annotated[bool, _flag("--json", text="Print results and figures as JSON; write nothing.")]
Force = Annotated[
    bool, _flag("--force", text="Rewrite hard-linked files; write what the guard refuses (docs/cli.md).")
]
NoProject = Annotated[
    bool,
    _flag(
        "--no-project",
        text="A rename in this file alone: not its callers in the project's other files (docs/cli.md).",
    ),
]
StdinFilename = Annotated[
    str | None,
    typer.Option(
        metavar="NAME",
        help="For FILE '-': the name the model is shown, whose suffix picks the fence's language "
        "and the guard's rules (as ruff and black). [default: stdin]",
        rich_help_panel=OUTPUT,
    ),
]
StatsJson = Annotated[
    Path | None,
    typer.Option(
        dir_okay=False, help="Write the run's figures to this file as JSON.", rich_help_panel=OUTPUT
    ),
]

# Model
Model = Annotated[
    str | None,
    typer.Option(
        "-m",
        "--model",
        help="A name from `pedit models`, a GGUF file, a Hugging Face directory or repo id. "
        "[default: qwen2.5-coder-1.5b]",
        rich_help_panel=MODEL,
    ),
]
Backend = Annotated[
    str | None,
    typer.Option(
        "-b",
        "--backend",
        click_type=click.Choice(BACKENDS),
        help="auto: llama.cpp for GGUF, transformers for HF models; openai: a server at --base-url. "
        "[default: auto]",
        rich_help_panel=MODEL,
    ),
]


class HttpUrl(click.ParamType):
    """An http(s) URL with a host (config.http_url, the base_url setting's test)."""

    name = "url"

    def convert(self, value, param, ctx):
        from ..app.config import http_url

        if not http_url(value):
            self.fail(f"{value!r} is not an http(s) URL (e.g. http://127.0.0.1:8000/v1).", param, ctx)
        return value


BaseUrl = Annotated[
    str | None,
    typer.Option(
        click_type=HttpUrl(),
        metavar="URL",
        help="With -b openai: the server, e.g. http://127.0.0.1:8000/v1 (-m: its model name). "
        "[env: PEDIT_BASE_URL]",
        rich_help_panel=MODEL,
    ),
]  # fmt: skip
ApiKey = Annotated[
    str | None,
    typer.Option(
        envvar=["PEDIT_API_KEY", "OPENAI_API_KEY"], show_envvar=True, metavar="KEY",
        help="With -b openai: the server's API key. On the command line it is visible to every user "
        "of this machine (ps): prefer PEDIT_API_KEY or --api-key-file.",
        rich_help_panel=MODEL,
    ),
]  # fmt: skip
ApiKeyFile = Annotated[
    Path | None,
    typer.Option(
        exists=True, dir_okay=False, metavar="FILE",
        help="With -b openai: read the server's API key from this file's first line.",
        rich_help_panel=MODEL,
    ),
]  # fmt: skip
Jobs = Annotated[
    int | None,
    typer.Option(
        "-j", "--jobs", min=1, max=64,
        help="With -b openai: files sent at once (written one by one, in order). A local model "
        "takes one at a time. [default: 4]",
        rich_help_panel=MODEL,
    ),
]  # fmt: skip
NCtx = Annotated[
    int | None, typer.Option(min=256, help="Context window in tokens. [default: 8192]", rich_help_panel=MODEL)
]
Threads = Annotated[
    int | None,
    typer.Option(
        min=1,
        max=CPUS,
        help=f"CPU threads, at most the {CPUS} this machine lets pedit use. [default: all]",
        rich_help_panel=MODEL,
    ),
]

# Decoding
System = Annotated[
    str | None,
    typer.Option(help="Replace the command's system prompt for this run.", rich_help_panel=DECODING),
]
MaxTokens = Annotated[
    int | None,
    typer.Option(
        min=1,
        help="Stop after this many tokens. [default: 2 x the file's tokens + 1024]",
        rich_help_panel=DECODING,
    ),
]
Temperature = Annotated[
    float, typer.Option(click_type=Finite(min=0.0), help="0 is greedy (argmax).", rich_help_panel=DECODING)
]
TopK = Annotated[
    int, typer.Option(min=0, help="Sample among the k most likely tokens (0: all).", rich_help_panel=DECODING)
]
TopP = Annotated[
    float,
    typer.Option(
        click_type=Finite(min=0.0, max=1.0, min_open=True),
        help="Nucleus sampling mass.",
        rich_help_panel=DECODING,
    ),
]
Seed = Annotated[
    int,
    typer.Option(
        min=0, max=SEED_MAX, help="Random seed for sampling (0 to 2^63-1).", rich_help_panel=DECODING
    ),
]
KeepBias = Annotated[
    float | None,
    typer.Option(
        click_type=Finite(),
        help="Add this to the logit of the file's own next token: > 0 changes less, < 0 dares more; "
        "output stays exactly plain decoding's with the same bias. [default: fix 1.5, others 0]",
        rich_help_panel=DECODING,
    ),
]

# Speculation
Speculate = Annotated[
    str | None,
    typer.Option(
        click_type=click.Choice(["auto", "fixed", "off"]),
        help="auto: verify drafts when the measured cost model says they pay; fixed: always verify up "
        "to --draft-max; off: plain decoding. [default: auto]",
        rich_help_panel=SPECULATION,
    ),
]
Drafters = Annotated[
    str,
    typer.Option(
        parser=_drafter_list,
        metavar="LIST",
        help="predicted (the file), lookup (prompt lookup), ngram (adaptive n-grams).",
        rich_help_panel=SPECULATION,
    ),
]
DraftMax = Annotated[
    int | None,
    typer.Option(
        min=1,
        max=256,
        help="Most draft tokens verified in one pass. [default: 255]",
        rich_help_panel=SPECULATION,
    ),
]
Dialect = Annotated[
    str | None,
    typer.Option(
        "--dialect",
        click_type=click.Choice(CHOICES),
        help="The variety of English a fix keeps: a word right in it is never corrected into "
        "another's spelling (colour, organised, demeanour). auto: detected from the file's words. "
        "[default: auto]",
        rich_help_panel=SPECULATION,
        show_default=False,
    ),
]
Spelling = Annotated[
    bool | None,
    typer.Option(
        "--spelling/--no-spelling",
        help="Draft with the tools' suggestions (a spell checker's corrections of unknown prose words, "
        "Harper's grammar, the confused words the model scores likelier), so the keep-bias leans "
        "towards them; the model keeps or rejects each. [default: on for fix]",
        rich_help_panel=SPECULATION,
        show_default=False,
    ),
]


# Structure (docs/structured.md)
def _file(text: str, **more):
    return typer.Option(
        exists=True, dir_okay=False, metavar="FILE", help=text, rich_help_panel=STRUCTURE, **more
    )


SCHEMA_HELP = "The answer is JSON valid against this JSON Schema (a rewrite: the whole file)."
Schema = Annotated[Path | None, _file(SCHEMA_HELP)]
RequiredSchema = Annotated[Path, _file("The JSON Schema the output is valid against.", show_default=False)]
Regex = Annotated[
    str | None,
    typer.Option(
        metavar="PATTERN", help="The answer matches this regular expression.", rich_help_panel=STRUCTURE
    ),
]
Grammar = Annotated[Path | None, _file("The answer matches this grammar (Lark, llguidance's syntax).")]
JsonGrammar = Annotated[bool, _flag(
    "--json-grammar/--no-json-grammar", panel=STRUCTURE,
    text="Rewrite a .json file that parses under a JSON grammar, so the result is JSON. [default: on]",
)]  # fmt: skip
SkeletonGrammar = Annotated[bool | None, _flag(
    "--skeleton/--no-skeleton", panel=STRUCTURE,
    text="A fix may change only the prose: its answer follows a grammar that copies the file's skeleton "
    "(links' targets, code, markup) as it is. Without it, the write guard still refuses a changed "
    "skeleton (skeleton = false in the config). [default: on]",
)]  # fmt: skip
PromptCache = Annotated[bool, _flag(
    "--prompt-cache/--no-prompt-cache", panel=SPECULATION,
    text="Keep the prompt's shared start (system prompt, instruction) in pedit's cache on disk, "
    "so the next command loads it instead of reading it. [default: on]",
)]  # fmt: skip
AnswerCache = Annotated[
    bool | None,
    typer.Option(
        "--answer-cache/--no-answer-cache",
        help="Give a file's answer again, with no model, when the same model, settings, instruction "
        "and file were answered before (answer_cache, PEDIT_ANSWER_CACHE). [default: on]",
        rich_help_panel=SPECULATION, show_default=False,
    ),
]
Coalesce = Annotated[bool, _flag(
    "--coalesce/--no-coalesce", panel=SPECULATION,
    text="Under a grammar, emit the tokens it forces without a forward pass of their own. [default: on]",
)]  # fmt: skip


def constraint(schema: Path | None, regex: str | None, grammar: Path | None):
    """The Constraint the structure options ask for (None: none); a file that cannot be read,
    two of them, or a schema that is not one is a usage error."""
    given = [(k, v) for k, v in (("schema", schema), ("regex", regex), ("grammar", grammar)) if v is not None]
    if not given:
        return None
    if len(given) > 1:
        raise UsageError(f"choose one of {', '.join('--' + k for k, _ in given)}")
    from ..engine.grammar import Constraint

    what, value = given[0]
    if what == "regex":
        return _checked(Constraint("regex", value), what)
    try:
        text = value.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"--{what} {value}: cannot read it ({exc})") from exc
    if what == "grammar":
        return _checked(Constraint("lark", text), what)
    import json

    import jsonschema

    try:
        jsonschema.validators.validator_for(json.loads(text)).check_schema(json.loads(text))
    except json.JSONDecodeError as exc:
        raise UsageError(f"--schema {value}: not JSON (line {exc.lineno}: {exc.msg})") from exc
    except jsonschema.SchemaError as exc:
        raise UsageError(f"--schema {value}: not a JSON Schema ({exc.message})") from exc
    return _checked(Constraint("json", text), what)


def _checked(c, what: str):
    from ..engine.grammar import GrammarError, check

    try:
        check(c)
    except GrammarError as exc:
        raise UsageError(f"--{what}: {exc}") from exc
    return c
