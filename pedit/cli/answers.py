"""A summary's and an extract's way out (they never write a file): printed, streamed as it
came (stream.py), or kept in the file's record for --json. An answer a constraint cut short
is refused, never printed."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import click

from ..app import fileio
from ..app.outcome import Outcome
from ..errors import ExitCode, RefusedError
from .options import WriteBack
from .report import Report
from .stream import StrippedStream

if TYPE_CHECKING:
    from ..engine.grammar import Constraint

CUT = ("max_tokens", "context")  # the stop reasons of an answer a limit ended


def summary(
    mode: WriteBack, source: fileio.Source, outcome: Outcome, report: Report, *,
    constraint: Constraint | None, sink: StrippedStream | None,
) -> int:  # fmt: skip
    """The summary out: in --json's record, else finishing what `sink` streamed, else printed."""
    stop = outcome.total().stop_reason
    if constraint is not None and stop in CUT:  # short of the grammar
        what = {"json": "--schema", "regex": "--regex", "lark": "--grammar"}[constraint.kind]
        raise RefusedError(f"{source.name}: the model's answer was cut off ({stop}) before it matched "
                           f"{what} (raise --max-tokens or --n-ctx); nothing printed")  # fmt: skip
    if mode == WriteBack.JSON:
        report.add({"file": source.name, "summary": outcome.text, **report.ran(source.name, outcome)})
    elif sink:
        sink.close()  # what was streamed is outcome.text: the answer, stripped, and a newline
    else:
        click.echo(outcome.text, nl=False)
    return ExitCode.OK


def data(mode: WriteBack, source: fileio.Source, outcome: Outcome, report: Report, *, schema: str) -> int:
    """Print the data if it is valid against the schema (it is, unless a limit cut it)."""
    import jsonschema

    stats = outcome.total()
    record = report.add(report.ran(source.name, outcome))
    try:
        value = json.loads(outcome.text)
        jsonschema.validate(value, json.loads(schema))
    except (ValueError, jsonschema.ValidationError) as exc:
        why = getattr(exc, "message", None) or str(exc)
        cut = f" (cut off: {stats.stop_reason})" if stats.stop_reason in CUT else ""
        raise RefusedError(f"{source.name}: the answer is not valid against the schema{cut}: {why}") from None
    if mode == WriteBack.JSON:
        record["data"] = value
    else:
        click.echo(outcome.text.strip())
    return ExitCode.OK
