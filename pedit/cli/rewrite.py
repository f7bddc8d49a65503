"""fix / refactor / summarize / extract / edit: files in, one model load, results out.

The flow: the files checked before anything loads (files.py), the model loaded with its
cost model (app/loading.py), then each file read, run through the engine (app/jobs.py),
decided by the guard and written back in the run's one output mode (writeback.py:
ask, yes, diff, check, stdout, json), and reported (report.py); a server's files several
at once (parallel.py). A summary or extract always prints (text, or JSON with --json) and
never writes (answers.py).
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.console import Console

from .. import models
from ..app import config, fileio
from ..app.answercache import AnswerCache
from ..app.options import EngineOptions
from ..app.outcome import Outcome
from ..app.templates import Template
from ..backends import BackendError, ContextFull
from ..errors import ExitCode, ModelError, PeditError, UsageError
from ..events import Event, Finished
from ..resident.client import Resident, ResidentLost, ResidentUnavailable, resident_for
from ..resident.protocol import LoadSettings
from ..ui.live import LiveView
from ..ui.render import shown, stats_line
from ..ui.runs import Show, answer
from ..ui.styles import legend
from . import answers
from . import project as across
from .answerers import Answerer, Cached, Here, NotCached, There, cache_parts
from .files import Files
from .options import WriteBack
from .parallel import Ran, run_many
from .report import Report, verdict_line, write_stats
from .stream import StrippedStream
from .writeback import decide, to_stdout, write_back

if TYPE_CHECKING:
    from ..app.jobs import Job


@dataclass(frozen=True, kw_only=True)
class Invocation:
    """Everything a command was asked for on the command line, and the settings it resolved
    to (the engine's request is request.EditRequest, built per file and run by app.jobs)."""

    command: str  # template name
    files: tuple[str, ...]
    settings: config.Settings  # the config layers with the command line's on top
    instruction: str | None = None
    mode: WriteBack | None = None
    force: bool = False
    system: str | None = None
    # the engine's options: the flags, the settings over them (Settings.engine_options);
    # the cost model joins them when the model is loaded
    options: EngineOptions = field(default_factory=EngineOptions)
    stats_json: Path | None = None
    stdin_filename: str | None = None  # FILE "-": the name shown to the model and the guard
    data: bool = False  # the answer is JSON data, valid against --schema (extract), printed as data
    api_key: str | None = None  # -b openai: --api-key(-file), PEDIT_API_KEY, OPENAI_API_KEY
    project: bool = True  # a rename sees the file's project (cli/project.py); --no-project: the file alone


def expand(files: tuple[str, ...]) -> list[str]:
    """Files and globs (expanded here too, for shells that pass them quoted), in order; a
    file named twice (`a.md ./a.md`, or through a link) is taken once. A name that is a
    file is that file, even when it reads as a glob (`notes [draft].md`)."""
    out: list[str] = []
    seen: set[Path] = set()
    for f in files:
        literal = f == "-" or not glob.has_magic(f) or os.path.lexists(f)
        matches = [f] if literal else sorted(glob.glob(f, recursive=True))
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
    template = inv.settings.prompt_templates()[inv.command]
    template.render(inv.instruction)  # an instruction is required before anything loads
    names = expand(inv.files)
    mode = choose_mode(inv, names, template.kind)
    report = Report(err=Console(stderr=True, soft_wrap=True), stdin_filename=inv.stdin_filename)
    files = Files(
        force=inv.force, writes=mode in (WriteBack.ASK, WriteBack.YES), stdin_filename=inv.stdin_filename
    )
    flow = Run(inv=inv, template=template, mode=mode, files=files, report=report)
    with _planned(flow, names) as whole:
        if whole is not None and whole.module:  # a module renamed: rope's edit, no model
            code = across.answered(whole, flow, None, None)
        else:
            names = flow.precheck(names)  # a typo in a file name costs no model load
            code = _run_files(flow, names) if names else ExitCode.OK
    if inv.stats_json:
        write_stats(
            inv.stats_json,
            report,
            inv.settings,
            template,
            drafters=inv.options.edit.drafters,
            sampling=inv.options.edit.sampling,
        )
    if mode == WriteBack.JSON:
        click.echo(json.dumps(report.records, indent=2))
    return max(report.code, int(code))


@contextlib.contextmanager
def _planned(flow: Run, names: list[str]) -> Iterator[across.Plan | None]:
    """The project rename the command asks for (cli/project.py), its files locked while the
    command runs; None for any other command."""
    inv = flow.inv
    whole = None
    if inv.project and flow.template.intents and inv.options.tools.intents:
        whole = across.plan(names, inv.instruction, flow.mode, writes=flow.files.writes, force=inv.force)
    flow.project = whole
    if whole is None:
        yield None
        return
    with whole.locks:
        yield whole


def _run_files(flow: Run, names: list[str]) -> int:
    """The files the answer cache has answered before, with no model; the others through
    the resident model (resident/), else through a model loaded here (and the files the
    resident could not answer: none reached, or it died mid-request): one by one, or a
    server's several at once."""
    code = int(ExitCode.OK)
    settings = flow.inv.settings
    if settings.answer_cache and not settings.on_server:
        say = flow.report.dim
        flow.cache = AnswerCache(
            models.cache_root() / "answers", warn=lambda line: say(f"pedit: {line}"),
            limit=settings.answer_cache_mb << 20,
        )  # fmt: skip
        code, names = _run_cached(flow, names)
    load = resident_for(settings)
    if names and load is not None:
        done, names = _run_resident(flow, names, load)
        code = max(code, done)
    if not names:
        return code
    with _here(flow) as (here, job, jobs):
        if jobs > 1 and len(names) > 1:
            return max(code, run_many(flow, job, names, jobs))
        for f in names:
            code = max(code, flow.one(here, f))
    return code


def _run_cached(flow: Run, names: list[str]) -> tuple[int, list[str]]:
    """The files whose answers the cache has (each read, decided and written as any), and
    the others."""
    only = Cached(None, flow.cache, cache_parts(flow.inv, flow.template))
    code, left = int(ExitCode.OK), []
    for name in names:
        try:
            code = max(code, flow.one(only, name))
        except NotCached:
            left.append(name)
    return code, left


def _run_resident(flow: Run, names: list[str], load: LoadSettings) -> tuple[int, list[str]]:
    """The files through the resident process, started when none runs; the exit code so
    far and the files left for this process."""
    report, settings = flow.report, flow.inv.settings
    resident = Resident(load, settings.keep_alive, log=lambda line: report.dim(f"pedit: {line}"))
    t0 = time.perf_counter()
    starting = report.err.status("loading the model (it stays loaded: pedit daemon status)")
    try:
        with starting if report.err.is_terminal else contextlib.nullcontext():
            resident.connect().close()
    except ResidentUnavailable as exc:
        report.dim(f"pedit: {exc}; loading the model in this process")
        return int(ExitCode.OK), names
    report.load_seconds = time.perf_counter() - t0
    report.backend = resident.info.get("backend", load.backend)
    report.device = resident.info.get("device", "")
    report.model = settings.model
    _legend(flow, settings.model, report.backend, report.device)
    there = flow.caching(There(resident, flow.inv, flow.template))
    code = int(ExitCode.OK)
    for i, name in enumerate(names):
        try:
            code = max(code, flow.one(there, name))
        except ResidentLost as exc:
            report.dim(f"pedit: the resident model stopped in the middle of {name} ({exc}); running it here")
            return code, names[i:]
        except ResidentUnavailable as exc:  # gone, stopping, busy or not answering before this file
            left = len(names) - i
            report.dim(f"pedit: {exc}; the {left} file{'s' if left > 1 else ''} left run in this process")
            return code, names[i:]
    return code, []


def _legend(flow: Run, name: str, backend: str, device: str) -> None:
    if flow.report.err.is_terminal and flow.mode != WriteBack.JSON:
        flow.report.err.print(legend(f"{name} on {backend} ({device})"))


@contextlib.contextmanager
def _here(flow: Run) -> Iterator[tuple[Answerer, Job, int]]:
    """A model loaded in this process for the command's files (closed after them): who
    answers them, its job, and how many files go at once (a server's several)."""
    from ..app.jobs import Job
    from ..app.loading import load_with_cost
    from ..machine import build
    from ..tools import grammarcheck

    inv, settings, report = flow.inv, flow.inv.settings, flow.report
    tools = flow.template.spelling if inv.options.tools.spelling is None else inv.options.tools.spelling
    beside = grammarcheck.warm if tools and not settings.on_server else None  # fix's tools, built meanwhile
    loaded = shown(load_with_cost(settings, api_key=inv.api_key, beside=beside), report.err)
    try:
        backend = loaded.backend
        report.backend, report.device = backend.name, build.device(backend)
        report.load_seconds = loaded.seconds
        flow.remote = loaded.remote
        options = inv.options.costed(loaded.cost)
        job = Job(
            backend=backend, template=flow.template, instruction=inv.instruction, options=options,
            system=inv.system, force=inv.force, chunk_tokens=settings.chunk_tokens, answers=flow.cache,
        )  # fmt: skip
        name = report.model = backend.model if loaded.remote else settings.model
        _legend(flow, name, backend.name, report.device)
        yield flow.caching(Here(job, backend.name, report.device)), job, settings.files_at_once(loaded.remote)
    finally:
        loaded.close()


@dataclass(kw_only=True)
class Run:
    """A command's files, each read (files.py), run, decided and written back
    (writeback.py) and reported (report.py)."""

    inv: Invocation
    template: Template
    mode: WriteBack
    files: Files
    report: Report
    remote: bool = False  # the loaded model is a server's (loading.Loaded.remote)
    cache: AnswerCache | None = None  # the answer cache, when on
    project: across.Plan | None = None  # a rename across the file's project (cli/project.py)
    _said_ignored: bool = False

    def caching(self, answerer: Answerer) -> Answerer:
        """`answerer`, its answers kept in the answer cache when it is on."""
        if self.cache is None:
            return answerer
        return Cached(answerer, self.cache, cache_parts(self.inv, self.template))

    @property
    def summary(self) -> bool:
        return self.template.kind == "summary"

    def precheck(self, names: list[str]) -> list[str]:
        """The files worth a model (Files.check: readable text, writable if the mode
        writes) and not empty; the others reported now, their exit codes kept."""
        intent = self.inv.instruction if self.template.intents else None  # a rename's names checked first
        keep = []
        for name in names:
            try:
                source = self.files.check(name, intent)
            except PeditError as exc:
                self.report.fail(name, exc)
                continue
            if source.text.strip():
                keep.append(name)
            else:
                self._empty(source)
        return keep

    def _empty(self, source: fileio.Source) -> None:
        what = "summarize" if self.summary else "rewrite"
        self.report.say(source.name, f"empty, nothing to {what}; the model was not called")
        self.report.add({"file": source.name, "changed": False, "written": False, "empty": True})
        if self.mode == WriteBack.STDOUT and not self.summary:
            to_stdout(source, source.text)  # a filter passes it through

    def one(self, answerer: Answerer, name: str) -> int:
        """One file: read (locked, if the mode writes), run with the live view, written back;
        a failure is this file's line and exit code, and the other files go on."""
        before = len(self.report.records)
        try:
            with self.files.lock(name):
                source = self.files.read(name)  # again: what is written must be checked against this
                try:
                    ran, sink, tokens = self._shown(answerer, source)
                except ContextFull as exc:
                    if self.project is None:
                        raise
                    return across.too_long(self.project, self, source, exc)
                return self._result(ran, sink, tokens)
        except ModelError:  # a model that fails to load stops the command
            raise
        except (PeditError, BackendError) as exc:
            return self._failed(name, exc, before)

    def _shown(
        self, answerer: Answerer, source: fileio.Source
    ) -> tuple[Ran, StrippedStream | None, int | None]:
        """The file's runs in the live view, each followed by its figures' line; and the
        file's tokens (a rewrite's). A summary in one run streams to stdout as it is written
        (the live view: status only), unless a constraint must be seen complete before
        anything is printed."""
        t0 = time.perf_counter()
        begun = answerer.begin(self._kind, source, count=self.template.kind == "rewrite")
        if begun.cached:
            said = "answered before with these settings: the same answer, no model run"
            self.report.dim(f"pedit: {source.name}: {said}")
        stream = self.summary and self.mode != WriteBack.JSON and self.inv.options.edit.constraint is None
        stream = stream and begun.pieces == 1
        sink = StrippedStream() if stream else None
        show_text = self.mode not in (WriteBack.STDOUT, WriteBack.JSON) and not stream
        view = LiveView(self.report.err, show_text=show_text, expected=begun.tokens)

        def show(events: Iterator[Event], label: str) -> Finished:
            finished = view.run(sink.tee(events) if sink else events, label)
            self.report.dim(f"pedit: {label}: {stats_line(finished.stats)}")
            return finished

        try:
            return Ran(source=source, outcome=answer(begun.stream, show)), sink, begun.tokens
        finally:
            self.report.answering_seconds += time.perf_counter() - t0

    @property
    def _kind(self) -> str:
        return "summary" if self.summary else "rewrite"

    def outcome(self, job: Job, name: str, show: Show) -> Ran:
        """The file read and run through the job, each run's events to `show`."""
        source = self.files.read(name)
        begun = Here(job).begin(self._kind, source, count=False)
        return Ran(source=source, outcome=answer(begun.stream, show))

    def collect(self, job: Job, name: str, ran: Callable[[], Ran]) -> int:
        """One file's result, in order: its runs' lines, then reported and written (with
        its lock) as `one` does; `ran()` gives the file's run or raises its failure."""
        before = len(self.report.records)
        try:
            done = ran()
            for line in done.lines:
                self.report.dim(line)
            tokens = job.backend.count_tokens(done.source.text) if self.template.kind == "rewrite" else None
            with self.files.lock(name):
                return self._result(done, None, tokens)
        except ModelError:
            raise
        except (PeditError, BackendError) as exc:
            return self._failed(name, exc, before)

    def _failed(self, name: str, exc: PeditError | BackendError, before: int) -> int:
        """The file's failure: its line and record (a refused rewrite has its record
        already, with its figures, added after the `before` records there were)."""
        records = self.report.records
        return self.report.fail(name, as_error(exc), records[-1] if len(records) > before else None)

    def _result(self, ran: Ran, sink: StrippedStream | None, tokens: int | None) -> int:
        source, outcome = ran.source, ran.outcome
        if len(outcome.stats) > 1:
            self.report.dim(f"pedit: {source.name} in all: {stats_line(outcome.total())}")
        if self.remote:
            self._ignored_prediction(outcome)
        if self.inv.data:
            return answers.data(
                self.mode, source, outcome, self.report, schema=self.inv.options.edit.constraint.source
            )
        if self.summary:
            return answers.summary(
                self.mode,
                source,
                outcome,
                self.report,
                constraint=self.inv.options.edit.constraint,
                sink=sink,
            )
        return self._rewrite(source, outcome, tokens or 0)

    def _ignored_prediction(self, outcome: Outcome) -> None:
        """Once: a server that reported no prediction tokens for a rewrite ignores them."""
        s = outcome.total()
        none = not (s.accepted_prediction_tokens or s.rejected_prediction_tokens)
        if self.template.kind == "rewrite" and none and not self._said_ignored:
            self._said_ignored = True
            self.report.err.print(
                "pedit: the server reported no accepted or rejected prediction tokens: it ignores "
                "`prediction` (no speedup from the file; docs/scale.md)", highlight=False,
            )  # fmt: skip

    def _rewrite(self, source: fileio.Source, outcome: Outcome, file_tokens: int) -> int:
        """The guard's decision, the file's record and notes, then the mode's write-back."""
        ran = self.report.ran(source.name, outcome)
        ran["file_tokens"] = file_tokens  # the file's own tokens (a remote backend's estimate)
        if outcome.verdict is not None:
            ran["check"] = outcome.check_dict()
            self.report.say(source.name, verdict_line(outcome))
        if self.project is not None:  # the defining file of a project's rename: every file together
            return across.answered(self.project, self, source, outcome.text, ran)
        d = decide(self.template.judged, source, outcome.text, self.inv.force)
        record = {"file": source.name, "changed": d.changed, "written": False, **ran}
        if d.refused:
            record["refused"] = d.refused
        for note in outcome.notes:
            self.report.say(source.name, note)
        if outcome.notes:
            record["kept"] = outcome.notes
        self.report.add(record)
        return write_back(self.mode, d, record, self.report.say)


def as_error(exc: PeditError | BackendError) -> PeditError:
    """A backend's failure as the error the user sees (for one file here, for the command
    in app.PeditGroup): a context too small for the file is a usage error (exit 2), any
    other the backend's (exit 3)."""
    if isinstance(exc, PeditError):
        return exc
    if isinstance(exc, ContextFull):
        return UsageError(f"{exc}; the file is too long for this context window (try --n-ctx)")
    return ModelError(str(exc))
