"""`pedit edit`: read the file, load the model, stream the rewrite, print it or its diff."""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from . import config, costmodel, models
from .edit import edit_events
from .errors import UsageError
from .events import Finished, Stats, TokenGenerated, TokensAccepted
from .render import RichReporter, print_diff, stats_line, unified_diff
from .request import EditRequest
from .sampling import Sampling


@dataclass(frozen=True)
class RunSettings:
    """Everything `pedit edit` was asked for, beyond the file and the instruction."""

    model: str | None
    backend: str | None
    n_ctx: int
    threads: int | None
    max_tokens: int | None
    sampling: Sampling
    speculate: str
    drafters: tuple[str, ...]
    draft_max: int
    stats_json: Path | None

    @classmethod
    def from_cli(cls, o: dict) -> RunSettings:
        try:
            sampling = Sampling(o["temperature"], o["top_k"], o["top_p"], o["seed"])
        except ValueError as exc:
            raise UsageError(str(exc)) from exc
        return cls(
            o["model"], o["backend"], o["n_ctx"], o["threads"], o["max_tokens"], sampling,
            o["speculate"], o["drafters"], o["draft_max"], o["stats_json"],
        )  # fmt: skip


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


def run_edit_command(file: Path, instruction: str, mode: str, run: RunSettings) -> None:
    err = Console(stderr=True, soft_wrap=True)
    text, name = read_input(file)
    if not instruction.strip():
        raise UsageError("the instruction is empty")
    settings = config.resolve({"model": run.model, "backend": run.backend})
    reporter = RichReporter(err)
    lm = models.load(
        settings["model"].value, settings["backend"].value, reporter, n_ctx=run.n_ctx, n_threads=run.threads
    )
    backend_name = lm.name
    try:
        cost = None  # the planner needs it (auto); the speedup figure uses it (auto, fixed)
        if run.speculate != "off":
            with reporter.task("measuring draft costs (once per model and machine)", None):
                cost = costmodel.cached(lm, costmodel.identity(lm), models.cache_root() / "costs")
        events = edit_events(
            lm, EditRequest(text, instruction, name), max_tokens=run.max_tokens, sampling=run.sampling,
            speculate=run.speculate, drafters=run.drafters, draft_max=run.draft_max, cost=cost,
        )  # fmt: skip
        finished = _stream(events, mode, err)
    finally:
        lm.close()
    err.print(f"[dim]pedit: {stats_line(finished.stats)}[/]", highlight=False)
    if run.stats_json:
        write_stats(run.stats_json, finished.stats, settings["model"].value, backend_name, run, name)
    if finished.stats.stop_reason in ("max_tokens", "context"):
        why = "--max-tokens" if finished.stats.stop_reason == "max_tokens" else "the context window (--n-ctx)"
        raise UsageError(f"the rewrite was cut off after {finished.stats.completion_tokens} tokens by {why}")
    if mode == "diff":
        lines = unified_diff(text, finished.text, name)
        if lines:
            print_diff(lines)
        else:
            err.print("pedit: no changes", highlight=False)


def write_stats(path: Path, stats: Stats, model: str, backend: str, run: RunSettings, name: str) -> None:
    data = {
        "file": name,
        "model": model,
        "backend": backend,
        "speculate": run.speculate,
        "drafters": list(run.drafters),
        "draft_max": run.draft_max,
        "temperature": run.sampling.temperature,
        "seed": run.sampling.seed,
        **stats.to_dict(),
    }
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        tmp.write_text(json.dumps(data, indent=2) + "\n")
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise UsageError(f"cannot write --stats-json {path}: {exc.strerror}") from exc


def _stream(events, mode: str, err: Console) -> Finished:
    """Consume the decoder's events: text to stdout (--stdout) or a live count on stderr."""
    if mode == "stdout":
        printed = 0
        for ev in events:
            if isinstance(ev, TokenGenerated | TokensAccepted) and ev.text:
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
                if isinstance(ev, TokenGenerated | TokensAccepted):
                    n += 1 if isinstance(ev, TokenGenerated) else len(ev.tokens)
                    status.update(f"rewriting… {n} tokens")
                elif isinstance(ev, Finished):
                    return ev
    raise AssertionError("the decoder ended without a Finished event")
