"""What a run reports: a line per event on stderr, one record per file (what --json prints,
whose figures --stats-json keeps), and the combined exit code (the highest file's)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.text import Text

from ..app import config
from ..app.outcome import Outcome
from ..app.templates import Template
from ..errors import ExitCode, PeditError, UsageError

if TYPE_CHECKING:
    from ..engine.sampling import Sampling


@dataclass(kw_only=True)
class Report:
    err: Console
    stdin_filename: str | None = None  # the name standard input ("-") is shown under
    records: list[dict] = field(default_factory=list)  # one per file, in order
    code: int = int(ExitCode.OK)
    # what ran the files, once loaded: the backend's name and device, the model's name where
    # the backend says it (a server's), the seconds the load took
    backend: str = ""
    device: str = ""
    model: str | None = None
    load_seconds: float = 0.0
    # the files' answers, from asking to the outcome (the model's runs, the tools, and for a
    # resident model its work and the stream back): the rest of the command is its own
    answering_seconds: float = 0.0

    # a file's name, a path or a model's message may hold `[/]`: never read as markup
    def say(self, name: str, message: str) -> None:
        self.err.print(f"pedit: {name}: {message}", highlight=False, markup=False)

    def dim(self, line: str) -> None:
        self.err.print(Text(line, style="dim"), highlight=False)

    def add(self, record: dict) -> dict:
        self.records.append(record)
        return record

    def ran(self, name: str, outcome: Outcome) -> dict:
        """A record's figures: its runs' stats, and the backend and device that made them."""
        return {
            "file": name,
            "stats": outcome.total().to_dict(),
            "runs": len(outcome.stats),  # the model's runs (a fix: one per part of the file)
            "backend": self.backend,
            "device": self.device,
        }

    def fail(self, name: str, exc: PeditError, record: dict | None = None) -> int:
        """One line that names the file; the error and its exit code join the file's record
        (a new one if it has none yet); the exit code, kept in `code` too."""
        message = self.named(name, exc.message)
        self.err.print(f"pedit: error: {message}", highlight=False, markup=False)
        if record is None:
            record = self.add({"file": name})
        record["error"], record["exit_code"] = message, int(exc.exit_code)
        self.code = max(self.code, int(exc.exit_code))
        return int(exc.exit_code)

    def named(self, name: str, message: str) -> str:
        """`message`, with the file's name in front unless it starts with it already."""
        label = (self.stdin_filename or "stdin") if name == "-" else name
        if message.startswith((f"{label}:", f"{Path(label).name}:")):
            return message
        return f"{label}: {message}"


# a record's own keys that join its figures in --stats-json (project: a project rename's, cli/project.py)
_KEPT = ("check", "file_tokens", "runs", "project")


def write_stats(
    path: Path, report: Report, settings: config.Settings, template: Template, *,
    drafters: tuple[str, ...], sampling: Sampling,
) -> None:  # fmt: skip
    """--stats-json: the run's settings and load time, and each file's figures (one file's
    at the top level too)."""
    data = {
        "model": report.model or settings.model,
        "backend": report.backend or settings.backend,
        "device": report.device or None,
        "speculate": settings.speculate,
        "drafters": list(drafters),
        "draft_max": settings.draft_max,
        "keep_bias": template.bias(settings.keep_bias),
        "spelling": template.spelling if settings.spelling is None else settings.spelling,
        "temperature": sampling.temperature,
        "seed": sampling.seed,
        "load_seconds": report.load_seconds,  # the model's loading (and the server's listing)
        "answering_seconds": report.answering_seconds,  # the files' answers, asked to outcome
        "files": [
            {"file": r["file"], **r.get("stats", {}), **{k: r[k] for k in _KEPT if k in r}}
            for r in report.records
        ],
    }
    if len(data["files"]) == 1:  # one file: its figures at the top level too
        data.update(data["files"][0])
    try:
        path.write_text(json.dumps(data, indent=2) + "\n")
    except OSError as exc:
        raise UsageError(f"cannot write --stats-json {path}: {exc.strerror}") from exc


def verdict_line(outcome: Outcome) -> str:
    """The refactor's check, in words: "rename check passed (1 try)"."""
    v, tries = outcome.verdict, f"{outcome.tries} {'try' if outcome.tries == 1 else 'tries'}"
    if v.check == "none":
        return f"{outcome.intent.describe() if outcome.intent else 'refactor'}: no check a program can make"
    if outcome.answer == "tool":
        return f"{v.check} check: {v.reason} ({tries})"
    state = "passed" if v.passed else f"FAILED, written with --force: {v.reason}"
    return f"{v.check} check {state} ({tries})"
