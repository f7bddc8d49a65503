"""fix / refactor / summarize / edit: files in, one model load, results out.

One output mode per run (options.WriteBack: ask, yes, diff, check, stdout, json); a
summary always prints (text, or JSON with --json) and never writes.
"""

from __future__ import annotations

import contextlib
import glob
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import click
from rich.console import Console

from .. import models
from ..app import calibration, config, fileio, guard
from ..app.jobs import EngineOptions, Job, Outcome
from ..app.templates import templates
from ..backends import BackendError, ContextFull, count_tokens
from ..engine import costmodel
from ..engine.grammar import Constraint
from ..engine.sampling import Sampling
from ..errors import ExitCode, ModelError, PeditError, RefusedError, UsageError
from ..ui.live import LiveView
from ..ui.render import RichReporter, print_diff, stats_line, unified_diff
from ..ui.styles import legend
from .options import WriteBack
from .stream import StrippedStream


@dataclass(frozen=True)
class Invocation:
    """Everything a command was asked for on the command line (the engine's request is
    request.EditRequest, built per file and run by app.jobs)."""

    command: str  # template name
    files: tuple[str, ...]
    instruction: str | None
    mode: WriteBack | None
    force: bool
    system: str | None
    cli: dict  # model, backend, n_ctx, threads, speculate, draft_max, keep_bias, spelling (None: not given)
    max_tokens: int | None
    sampling: Sampling
    drafters: tuple[str, ...]
    stats_json: Path | None
    stdin_filename: str | None = None  # FILE "-": the name shown to the model and the guard
    constraint: Constraint | None = None  # --schema / --regex / --grammar
    json_grammar: bool = True  # a .json file that parses is rewritten under a JSON grammar
    coalesce: bool = True
    api_key: str | None = None  # -b openai: --api-key(-file), PEDIT_API_KEY, OPENAI_API_KEY
    prompt_cache: bool = True  # the prompt's shared start kept on disk (app/prefixcache.py)


def expand(files: tuple[str, ...]) -> list[str]:
    """Files and globs (expanded here too, for shells that pass them quoted), in order; a
    file named twice (`a.md ./a.md`, or through a link) is taken once."""
    out: list[str] = []
    seen: set[Path] = set()
    for f in files:
        matches = sorted(glob.glob(f, recursive=True)) if glob.has_magic(f) and f != "-" else [f]
        if not matches:
            raise UsageError(f"{f}: no file matches")
        for m in matches:
            key = Path(m).resolve() if m != "-" else Path("-")
            if key not in seen:
                seen.add(key)
                out.append(m)
    if "-" in out and len(out) > 1:
        raise UsageError("'-' (standard input) cannot be combined with other files")
    return out


def choose_mode(inv: Invocation, files: list[str], kind: str) -> WriteBack:
    if kind == "summary":
        return WriteBack.JSON if inv.mode == WriteBack.JSON else WriteBack.STDOUT
    if inv.mode:
        if inv.mode == WriteBack.STDOUT and len(files) > 1:
            raise UsageError("--stdout takes one file")
        if inv.mode == WriteBack.YES and "-" in files:
            raise UsageError(
                "-y: standard input has no file to write back to; use --stdout (the default for '-')"
            )
        return inv.mode
    if files == ["-"]:
        return WriteBack.STDOUT
    if sys.stdin.isatty() and sys.stdout.isatty():
        return WriteBack.ASK
    raise UsageError("not a terminal, so pedit cannot ask: choose -y, --diff, --check, --stdout or --json")


def run(inv: Invocation) -> int:
    err = Console(stderr=True, soft_wrap=True)
    settings = config.resolve(inv.cli)
    template = templates(settings.templates)[inv.command]
    template.render(inv.instruction)  # an instruction is required before anything loads
    files = expand(inv.files)
    mode = choose_mode(inv, files, template.kind)
    shell = Shell(err, mode, inv, template.kind, template.intents)
    files = shell.precheck(files)  # a typo in a file name costs no model load
    if files:
        shell.code = max(shell.code, _run_files(shell, settings, template, files))
    if inv.stats_json:
        shell.write_stats(inv.stats_json, settings, template)
    if mode == WriteBack.JSON:
        click.echo(json.dumps(shell.results, indent=2))
    return shell.code


def _run_files(shell: Shell, settings: config.Settings, template, files: list[str]) -> int:
    inv, reporter = shell.inv, RichReporter(shell.err)
    t0 = time.perf_counter()
    backend = models.load(
        settings.get("model"), settings.get("backend"), reporter,
        n_ctx=settings.get("n_ctx"), n_threads=settings.get("threads"), base_url=settings.get("base_url"),
        api_key=inv.api_key, timeout=settings.get("timeout"), deadline=settings.get("deadline"),
    )  # fmt: skip
    shell.backend, shell.device = backend.name, backend.capabilities.device
    shell.load_seconds = time.perf_counter() - t0
    remote = not backend.capabilities.logits
    try:
        speculate = settings.get("speculate")
        cost = None
        if speculate != "off" and not remote:  # said only when measured, not when the cache has it

            def measuring(b):
                with reporter.task("measuring draft costs (once per model and machine)", None):
                    return costmodel.measure(b)

            cost = calibration.measure_cost(backend, measure_fn=measuring)
        options = EngineOptions(
            max_tokens=inv.max_tokens, sampling=inv.sampling, speculate=speculate, drafters=inv.drafters,
            draft_max=settings.get("draft_max"), cost=cost, keep_bias=settings.get("keep_bias"),
            spelling=settings.get("spelling"), constraint=inv.constraint, json_auto=inv.json_grammar,
            coalesce=inv.coalesce, prompt_cache=inv.prompt_cache,
        )  # fmt: skip
        job = Job(
            backend, template, inv.instruction, options, inv.system, inv.force, settings.get("chunk_tokens")
        )
        name = shell.model = backend.model if remote else settings.get("model")
        if shell.err.is_terminal and shell.mode != WriteBack.JSON:
            shell.err.print(legend(f"{name} on {backend.name} ({shell.device})"))
        jobs = (settings.get("jobs") or config.JOBS_REMOTE) if remote else 1
        if jobs > 1 and len(files) > 1:
            return shell.many(job, files, jobs)
        return max(shell.one(job, f) for f in files)
    finally:
        backend.close()


class Shell:
    """Per-file reading, running, reporting and writing, and the combined exit code."""

    def __init__(self, err: Console, mode: WriteBack, inv: Invocation, kind: str, intents: bool = False):
        self.err, self.mode, self.inv, self.kind = err, mode, inv, kind
        self.intents = intents  # the instruction is an intent: a rename's names are checked first
        self.results: list[dict] = []
        self.code = int(ExitCode.OK)
        self.backend = self.device = ""
        self._stdin: fileio.Source | None = None
        self._said_ignored = False
        self.model: str | None = None  # the model's name where the backend says (a server's)
        self.load_seconds = 0.0

    @property
    def writes(self) -> bool:
        return self.mode in (WriteBack.ASK, WriteBack.YES)

    def say(self, name: str, message: str) -> None:
        self.err.print(f"pedit: {name}: {message}", highlight=False)

    def fail(self, name: str, exc: PeditError, record: dict | None = None) -> int:
        """One line that names the file; the error and its exit code join the file's record
        (a new one if it has none yet)."""
        message = self._named(name, exc.message)
        self.err.print(f"pedit: error: {message}", highlight=False)
        if record is None:
            self.results.append(record := {"file": name})
        record["error"], record["exit_code"] = message, int(exc.exit_code)
        return int(exc.exit_code)

    def _named(self, name: str, message: str) -> str:
        """`message`, with the file's name in front unless it starts with it already."""
        label = (self.inv.stdin_filename or "stdin") if name == "-" else name
        if message.startswith((f"{label}:", f"{Path(label).name}:")):
            return message
        return f"{label}: {message}"

    def precheck(self, files: list[str]) -> list[str]:
        """The files worth a model: each readable text (and writable, if the mode writes)
        and not empty; the others reported now, their exit codes kept in `code`."""
        keep = []
        for name in files:
            try:
                source = self._read(name)
                if self.writes:
                    fileio.check_writable(Path(name))
                    with fileio.locked(Path(name)):
                        pass  # another pedit on it: said now, not after loading the model
                if self.intents and source.text.strip():
                    from ..app.refactor import precheck

                    precheck(self.inv.instruction, source.text, source.name)
            except PeditError as exc:
                self.code = max(self.code, self.fail(name, exc))
                continue
            if source.text.strip():
                keep.append(name)
            else:
                self._empty(source)
        return keep

    def _read(self, name: str) -> fileio.Source:
        if name != "-":
            return fileio.read(Path(name), force=self.inv.force)
        if self._stdin is None:
            self._stdin = fileio.read_stream(sys.stdin.buffer, self.inv.stdin_filename or "stdin")
        return self._stdin

    def _empty(self, source: fileio.Source) -> None:
        what = "summarize" if self.kind == "summary" else "rewrite"
        self.say(source.name, f"empty, nothing to {what}; the model was not called")
        self.results.append({"file": source.name, "changed": False, "written": False, "empty": True})
        if self.mode == WriteBack.STDOUT and self.kind != "summary":
            sys.stdout.buffer.write(source.encode(source.text))  # a filter passes it through
            sys.stdout.flush()

    def one(self, job: Job, name: str) -> int:
        before = len(self.results)
        try:
            with fileio.locked(Path(name)) if self.writes else contextlib.nullcontext():
                return self._one(job, name)
        except ModelError:
            raise
        except (PeditError, BackendError) as exc:  # a refused rewrite has its record (with its figures)
            return self.fail(name, as_error(exc), self.results[-1] if len(self.results) > before else None)

    def _one(self, job: Job, name: str) -> int:
        source = self._read(name)  # again: what is written must be checked against this
        expected = count_tokens(job.backend, source.text) if self.kind == "rewrite" else None
        # a summary in one run streams to stdout as it is written (the live view: status only),
        # unless a constraint must be seen complete before anything is printed
        stream = self.kind == "summary" and self.mode != WriteBack.JSON and self.inv.constraint is None
        stream = stream and len(job.pieces(source.text, source.name, "summary")) == 1
        sink = StrippedStream() if stream else None
        show = self.mode not in (WriteBack.STDOUT, WriteBack.JSON) and not stream
        view = LiveView(self.err, show_text=show, expected=expected)

        def render(events, label: str):
            finished = view.run(sink.tee(events) if sink else events, label)
            self.err.print(f"[dim]pedit: {label}: {stats_line(finished.stats)}[/]", highlight=False)
            return finished

        return self._result(job, source, self._outcome(job, source, render), sink)

    def _outcome(self, job: Job, source: fileio.Source, render) -> Outcome:
        run = job.summarize if self.kind == "summary" else job.rewrite
        return run(source.text, source.name, render)

    def _result(self, job: Job, source: fileio.Source, outcome: Outcome, sink=None) -> int:
        if len(outcome.stats) > 1:
            self.err.print(
                f"[dim]pedit: {source.name} in all: {stats_line(outcome.total())}[/]", highlight=False
            )
        if not job.backend.capabilities.logits:
            self._ignored_prediction(outcome)
        if self.kind == "summary":
            return self._summary(source, outcome, sink)
        return self._rewrite(source, outcome, count_tokens(job.backend, source.text))

    def many(self, job: Job, files: list[str], jobs: int) -> int:
        """A remote backend's files, `jobs` at once (parallel.py)."""
        from .parallel import run_many

        return run_many(self, job, files, jobs)

    def collect(self, job: Job, name: str, outcome_of) -> int:
        """One file's result, in order: its runs' lines, then reported and written (with
        its lock) as `one` does; `outcome_of()` gives (source, outcome, its runs' lines) or raises."""
        before = len(self.results)
        try:
            source, outcome, lines = outcome_of()
            for line in lines:
                self.err.print(f"[dim]{line}[/]", highlight=False)
            with fileio.locked(Path(name)) if self.writes else contextlib.nullcontext():
                return self._result(job, source, outcome)
        except ModelError:
            raise
        except (PeditError, BackendError) as exc:  # this file's failure: the others go on
            return self.fail(name, as_error(exc), self.results[-1] if len(self.results) > before else None)

    def outcome(self, job: Job, name: str, render) -> tuple[fileio.Source, Outcome]:
        source = self._read(name)
        return source, self._outcome(job, source, render)

    def _ignored_prediction(self, outcome: Outcome) -> None:
        """Once: a server that reported no prediction tokens for a rewrite ignores them."""
        s = outcome.total()
        none = not (s.accepted_prediction_tokens or s.rejected_prediction_tokens)
        if self.kind == "rewrite" and none and not self._said_ignored:
            self._said_ignored = True
            self.err.print(
                "pedit: the server reported no accepted or rejected prediction tokens: it ignores "
                "`prediction` (no speedup from the file; docs/scale.md)", highlight=False,
            )  # fmt: skip

    def _summary(self, source: fileio.Source, outcome: Outcome, sink: StrippedStream | None) -> int:
        if self.inv.command == "extract":
            return self._extracted(source, outcome)
        stop = outcome.total().stop_reason
        if self.inv.constraint is not None and stop in ("max_tokens", "context"):  # short of the grammar
            what = {"json": "--schema", "regex": "--regex", "lark": "--grammar"}[self.inv.constraint.kind]
            raise RefusedError(f"{source.name}: the model's answer was cut off ({stop}) before it matched "
                               f"{what} (raise --max-tokens or --n-ctx); nothing printed")  # fmt: skip
        if self.mode == WriteBack.JSON:
            self.results.append(
                {
                    "file": source.name,
                    "summary": outcome.text,
                    "stats": outcome.total().to_dict(),
                    "backend": self.backend,
                    "device": self.device,
                }  # fmt: skip
            )
        elif sink:
            sink.close()  # what was streamed is outcome.text: the answer, stripped, and a newline
        else:
            click.echo(outcome.text, nl=False)
        return ExitCode.OK

    def _extracted(self, source: fileio.Source, outcome: Outcome) -> int:
        """Print the data if it is valid against the schema (it is, unless a limit cut it)."""
        import jsonschema

        stats = outcome.total()
        record = {
            "file": source.name,
            "stats": stats.to_dict(),
            "backend": self.backend,
            "device": self.device,
        }
        self.results.append(record)
        try:
            data = json.loads(outcome.text)
            jsonschema.validate(data, json.loads(self.inv.constraint.source))
        except (ValueError, jsonschema.ValidationError) as exc:
            why = getattr(exc, "message", None) or str(exc)
            cut = f" (cut off: {stats.stop_reason})" if stats.stop_reason in ("max_tokens", "context") else ""
            raise RefusedError(
                f"{source.name}: the answer is not valid against the schema{cut}: {why}"
            ) from None
        if self.mode == WriteBack.JSON:
            record["data"] = data
        else:
            click.echo(outcome.text.strip())
        return ExitCode.OK

    def _rewrite(self, source: fileio.Source, outcome: Outcome, file_tokens: int) -> int:
        old_text = source.render(source.text)
        new_text = source.render(outcome.text)
        changed = new_text != old_text
        refused = guard.reason(self.inv.command, source.name, source.text, outcome.text) if changed else None
        forceable = not guard.never(source.text, outcome.text)  # an empty answer: no flag writes it
        force = self.inv.force and forceable
        lines = unified_diff(old_text, new_text, source.name)
        record = {
            "file": source.name,
            "changed": changed,
            "written": False,
            "stats": outcome.total().to_dict(),
            "backend": self.backend,
            "device": self.device,
            "file_tokens": file_tokens,  # the file's own tokens (a remote backend's estimate)
        }
        if refused:
            record["refused"] = refused
        if outcome.verdict is not None:
            record["check"] = outcome.check_dict()
            self.say(source.name, _verdict_line(outcome))
        for note in outcome.notes:
            self.say(source.name, note)
        if outcome.notes:
            record["kept"] = outcome.notes
        self.results.append(record)
        if self.mode == WriteBack.JSON:
            record["text"] = new_text
            record["diff"] = "".join(lines)
        elif self.mode == WriteBack.STDOUT:
            if refused and not force:
                raise _unsafe(source, refused, forceable)
            sys.stdout.buffer.write(source.encode(outcome.text))
            sys.stdout.flush()
        elif not changed:
            self.say(source.name, "no changes")
        elif self.mode == WriteBack.DIFF:
            print_diff(lines)
            if refused:
                unless = " without --force" if forceable else ""
                self.say(source.name, f"{refused}: pedit would not write it{unless}")
        elif self.mode == WriteBack.CHECK:
            if refused:
                raise RefusedError(f"{source.name}: would change, but {refused}; it would not be written")
            self.say(source.name, "would change")
            return ExitCode.CHANGED
        elif refused and not force:
            if self.mode == WriteBack.ASK:
                print_diff(lines)
            raise _unsafe(source, refused, forceable)
        elif self.mode == WriteBack.YES or self._confirm(lines, source):
            fileio.write(source, outcome.text)
            record["written"] = True
            self.say(source.name, "written" + (f" (forced: {refused})" if refused else ""))
        return ExitCode.OK

    def _confirm(self, lines: list[str], source: fileio.Source) -> bool:
        print_diff(lines)
        return click.confirm(f"Apply to {source.path}?", default=False, err=True)

    def write_stats(self, path: Path, settings: config.Settings, template) -> None:
        data = {
            "model": self.model or settings.get("model"),
            "backend": self.backend or settings.get("backend"),
            "device": self.device or None,
            "speculate": settings.get("speculate"),
            "drafters": list(self.inv.drafters),
            "draft_max": settings.get("draft_max"),
            "keep_bias": template.bias(settings.get("keep_bias")),
            "spelling": template.spelling if settings.get("spelling") is None else settings.get("spelling"),
            "temperature": self.inv.sampling.temperature,
            "seed": self.inv.sampling.seed,
            "load_seconds": self.load_seconds,  # the model's loading (and the server's listing)
            "files": [
                {
                    "file": r["file"],
                    **r.get("stats", {}),
                    **{k: r[k] for k in ("check", "file_tokens") if k in r},
                }
                for r in self.results
            ],
        }
        if len(data["files"]) == 1:  # one file: its figures at the top level too
            data.update(data["files"][0])
        try:
            path.write_text(json.dumps(data, indent=2) + "\n")
        except OSError as exc:
            raise UsageError(f"cannot write --stats-json {path}: {exc.strerror}") from exc


def _verdict_line(outcome: Outcome) -> str:
    """The refactor's check, in words: "rename check passed (1 try)"."""
    v, tries = outcome.verdict, f"{outcome.tries} {'try' if outcome.tries == 1 else 'tries'}"
    if v.check == "none":
        return f"{outcome.intent.describe() if outcome.intent else 'refactor'}: no check a program can make"
    if outcome.answer == "tool":
        return f"{v.check} check: {v.reason} ({tries})"
    state = "passed" if v.passed else f"FAILED, written with --force: {v.reason}"
    return f"{v.check} check {state} ({tries})"


def _unsafe(source: fileio.Source, refused: str, forceable: bool = True) -> RefusedError:
    hint = " (--force to write it anyway)" if forceable else ""
    return RefusedError(f"{source.name}: {refused}; nothing written{hint}", forceable)


def as_error(exc: PeditError | BackendError) -> PeditError:
    """A backend's failure as the error the user sees (for one file here, for the command
    in app.PeditGroup): a context too small for the file is a usage error (exit 2), any
    other the backend's (exit 3)."""
    if isinstance(exc, PeditError):
        return exc
    if isinstance(exc, ContextFull):
        return UsageError(f"{exc}; the file is too long for this context window (try --n-ctx)")
    return ModelError(str(exc))
