"""fix / refactor / summarize / edit: files in, one model load, results out.

Output modes (one per run):
  ask     a terminal and no mode flag: the coloured diff, then "apply? [y/N]" per file
  yes     -y/--yes: write without asking
  diff    --diff: print the unified diff, write nothing
  check   --check: write nothing; exit 1 if any file would change (black's convention)
  stdout  --stdout, or FILE is "-": print the new text only (a filter for editors, pipes)
  json    --json: print results and figures as JSON, write nothing
summarize always prints (text, or JSON with --json) and never writes.
"""

from __future__ import annotations

import ast
import glob
import json
import sys
from dataclasses import dataclass
from pathlib import Path

import click
from rich.console import Console

from . import config, costmodel, fileio, models
from .errors import ExitCode, ModelError, PeditError, UsageError
from .jobs import EngineOptions, Job, Outcome
from .live import LiveView, legend
from .render import RichReporter, print_diff, stats_line, unified_diff
from .sampling import Sampling
from .templates import templates

MODES = ("ask", "yes", "diff", "check", "stdout", "json")


@dataclass(frozen=True)
class Request:
    """Everything a command was asked for."""

    command: str  # template name
    files: tuple[str, ...]
    instruction: str | None
    mode: str | None
    force: bool
    system: str | None
    cli: dict  # model, backend, n_ctx, threads, speculate, draft_max (None: not given)
    max_tokens: int | None
    sampling: Sampling
    drafters: tuple[str, ...]
    stats_json: Path | None


def expand(files: tuple[str, ...]) -> list[str]:
    """Files and globs (expanded here too, for shells that pass them quoted), in order."""
    out: list[str] = []
    for f in files:
        matches = sorted(glob.glob(f, recursive=True)) if glob.has_magic(f) and f != "-" else [f]
        if not matches:
            raise UsageError(f"{f}: no file matches")
        out += [m for m in matches if m not in out]
    if "-" in out and len(out) > 1:
        raise UsageError("'-' (standard input) cannot be combined with other files")
    return out


def choose_mode(req: Request, files: list[str], kind: str) -> str:
    if kind == "summary":
        return "json" if req.mode == "json" else "stdout"
    if req.mode:
        if req.mode == "stdout" and len(files) > 1:
            raise UsageError("--stdout takes one file")
        return req.mode
    if files == ["-"]:
        return "stdout"
    if sys.stdin.isatty() and sys.stdout.isatty():
        return "ask"
    raise UsageError("not a terminal, so pedit cannot ask: choose -y, --diff, --check, --stdout or --json")


def run(req: Request) -> int:
    err = Console(stderr=True, soft_wrap=True)
    settings = config.resolve(req.cli)
    template = templates(settings.templates)[req.command]
    template.render(req.instruction)  # an instruction is required before anything loads
    files = expand(req.files)
    mode = choose_mode(req, files, template.kind)
    reporter = RichReporter(err)
    backend = models.load(
        settings.get("model"), settings.get("backend"), reporter,
        n_ctx=settings.get("n_ctx"), n_threads=settings.get("threads"),
    )  # fmt: skip
    try:
        speculate = settings.get("speculate")
        cost = None
        if speculate != "off":
            with reporter.task("measuring draft costs (once per model and machine)", None):
                cost = costmodel.cached(backend, costmodel.identity(backend), models.cache_root() / "costs")
        options = EngineOptions(
            req.max_tokens, req.sampling, speculate, req.drafters, settings.get("draft_max"), cost
        )
        job = Job(backend, template, req.instruction, options, req.system)
        shell = Shell(err, mode, req, template.kind)
        if err.is_terminal and mode != "json":
            err.print(legend())
        code = max((shell.one(job, f) for f in files), default=0)
        if req.stats_json:
            shell.write_stats(req.stats_json, settings, backend.name)
        if mode == "json":
            click.echo(json.dumps(shell.results, indent=2))
        return code
    finally:
        backend.close()


class Shell:
    """Per-file reading, running, reporting and writing, and the combined exit code."""

    def __init__(self, err: Console, mode: str, req: Request, kind: str):
        self.err, self.mode, self.req, self.kind = err, mode, req, kind
        self.results: list[dict] = []

    def one(self, job: Job, name: str) -> int:
        try:
            return self._one(job, name)
        except ModelError:
            raise
        except PeditError as exc:
            self.err.print(f"pedit: error: {exc.message}", highlight=False)
            self.results.append({"file": name, "error": exc.message})
            return int(exc.exit_code)

    def _one(self, job: Job, name: str) -> int:
        if name == "-":
            source = fileio.decode(sys.stdin.buffer.read())
        else:
            source = fileio.read(Path(name), force=self.req.force)
            if self.mode in ("ask", "yes"):
                fileio.check_writable(Path(name))
        expected = len(job.backend.tokenize(source.text)) if self.kind == "rewrite" else None
        view = LiveView(self.err, show_text=self.mode not in ("stdout", "json"), expected=expected)

        def render(events, label: str):
            finished = view.run(events, label)
            self.err.print(f"[dim]pedit: {label}: {stats_line(finished.stats)}[/]", highlight=False)
            return finished

        run = job.summarize if self.kind == "summary" else job.rewrite
        outcome = run(source.text, source.name, render)
        if len(outcome.stats) > 1:
            self.err.print(
                f"[dim]pedit: {source.name} in all: {stats_line(outcome.total())}[/]", highlight=False
            )
        if self.kind == "summary":
            return self._summary(source, outcome)
        return self._rewrite(source, outcome)

    def _summary(self, source: fileio.Source, outcome: Outcome) -> int:
        if self.mode == "json":
            self.results.append(
                {"file": source.name, "summary": outcome.text, "stats": outcome.total().to_dict()}
            )
        else:
            click.echo(outcome.text, nl=False)
        return ExitCode.OK

    def _rewrite(self, source: fileio.Source, outcome: Outcome) -> int:
        new_bytes = source.encode(outcome.text)
        old_text = source.render(source.text)
        new_text = source.render(outcome.text)
        changed = new_text != old_text
        lines = unified_diff(old_text, new_text, source.name)
        record = {
            "file": source.name,
            "changed": changed,
            "written": False,
            "stats": outcome.total().to_dict(),
        }
        code = ExitCode.OK
        if self.mode == "stdout":
            sys.stdout.buffer.write(new_bytes)
            sys.stdout.flush()
        elif self.mode == "json":
            record["text"] = new_text
            record["diff"] = "".join(lines)
        elif not changed:
            self.err.print(f"pedit: {source.name}: no changes", highlight=False)
        elif self.mode == "check":
            self.err.print(f"pedit: {source.name}: would change", highlight=False)
            code = ExitCode.CHANGED
        elif self.mode == "diff":
            print_diff(lines)
        elif self.mode == "yes" or self._confirm(lines, source):
            if source.path.suffix == ".py" and not self.req.force:
                _check_python(source, old_text, new_text)
            fileio.write(source, outcome.text)
            record["written"] = True
            self.err.print(f"pedit: {source.name}: written", highlight=False)
        self.results.append(record)
        return code

    def _confirm(self, lines: list[str], source: fileio.Source) -> bool:
        print_diff(lines)
        return click.confirm(f"Apply to {source.path}?", default=False, err=True)

    def write_stats(self, path: Path, settings: config.Settings, backend: str) -> None:
        data = {
            "model": settings.get("model"),
            "backend": backend,
            "speculate": settings.get("speculate"),
            "drafters": list(self.req.drafters),
            "draft_max": settings.get("draft_max"),
            "temperature": self.req.sampling.temperature,
            "seed": self.req.sampling.seed,
            "files": [{"file": r["file"], **r.get("stats", {})} for r in self.results],
        }
        if len(data["files"]) == 1:  # one file: its figures at the top level too
            data.update(data["files"][0])
        try:
            path.write_text(json.dumps(data, indent=2) + "\n")
        except OSError as exc:
            raise UsageError(f"cannot write --stats-json {path}: {exc.strerror}") from exc


def _check_python(source: fileio.Source, old: str, new: str) -> None:
    """Refuse a rewrite that breaks a Python file that parsed (--force writes it anyway)."""
    try:
        ast.parse(old)
    except SyntaxError:
        return
    try:
        ast.parse(new)
    except SyntaxError as exc:
        raise UsageError(
            f"{source.name}: the rewrite is not valid Python (line {exc.lineno}: {exc.msg}); "
            "not written (--force to write it anyway)"
        ) from exc
