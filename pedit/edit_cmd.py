"""`pedit edit`: read the file, load the model, stream the rewrite, print it or its diff."""

from __future__ import annotations

import sys
from pathlib import Path

from rich.console import Console

from . import config, models
from .edit import edit_events
from .errors import UsageError
from .events import Finished, TokenGenerated
from .render import RichReporter, print_diff, stats_line, unified_diff
from .request import EditRequest
from .sampling import Sampling


def read_input(file: Path) -> tuple[str, str]:
    """(text, display name) of FILE or of stdin for "-"; a clear error for what is not text."""
    if str(file) == "-":
        return sys.stdin.read(), "stdin"
    if not file.exists():
        raise UsageError(f"{file}: no such file")
    if file.is_dir():
        raise UsageError(f"{file}: is a directory")
    try:
        data = file.read_bytes()
    except OSError as exc:
        raise UsageError(f"{file}: cannot read ({exc.strerror})") from exc
    if b"\0" in data[:8192]:
        raise UsageError(f"{file}: looks binary (contains NUL bytes)")
    try:
        return data.decode("utf-8-sig"), file.name
    except UnicodeDecodeError as exc:
        raise UsageError(f"{file}: not UTF-8 text (byte {exc.start})") from exc


def run_edit_command(
    file: Path,
    instruction: str,
    *,
    mode: str,
    model: str | None,
    backend: str | None,
    load_options: dict,
    max_tokens: int | None,
    sampling: Sampling,
) -> None:
    err = Console(stderr=True, soft_wrap=True)
    text, name = read_input(file)
    if not instruction.strip():
        raise UsageError("the instruction is empty")
    settings = config.resolve({"model": model, "backend": backend})
    lm = models.load(settings["model"].value, settings["backend"].value, RichReporter(err), **load_options)
    try:
        req = EditRequest(text, instruction, name)
        events = edit_events(lm, req, max_tokens=max_tokens, sampling=sampling)
        finished = _stream(events, mode, err)
    finally:
        lm.close()
    err.print(f"[dim]pedit: {stats_line(finished.stats)}[/]", highlight=False)
    if finished.stats.stop_reason in ("max_tokens", "context"):
        why = "--max-tokens" if finished.stats.stop_reason == "max_tokens" else "the context window (--n-ctx)"
        raise UsageError(f"the rewrite was cut off after {finished.stats.completion_tokens} tokens by {why}")
    if mode == "diff":
        lines = unified_diff(text, finished.text, name)
        if lines:
            print_diff(lines)
        else:
            err.print("pedit: no changes", highlight=False)


def _stream(events, mode: str, err: Console) -> Finished:
    """Consume the decoder's events: text to stdout (--stdout) or a live count on stderr."""
    if mode == "stdout":
        printed = 0
        for ev in events:
            if isinstance(ev, TokenGenerated) and ev.text:
                sys.stdout.write(ev.text)
                sys.stdout.flush()
                printed += len(ev.text)
            elif isinstance(ev, Finished):
                sys.stdout.write(ev.text[printed:])  # text the decoder held back until the end
                sys.stdout.flush()
                return ev
    else:
        n = 0
        with err.status("rewriting…") as status:
            for ev in events:
                if isinstance(ev, TokenGenerated):
                    n += 1
                    status.update(f"rewriting… {n} tokens")
                elif isinstance(ev, Finished):
                    return ev
    raise AssertionError("the decoder ended without a Finished event")
