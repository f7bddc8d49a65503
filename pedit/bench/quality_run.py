"""Run the configurations a user chooses between on the tasks whose right answer is known,
the way the CLI would (chunks, the answer checks, the write guard: a refused answer leaves
the file as it was), and time each run.

A configuration is written `MODEL[@BACKEND][+VARIANT...]`: a model pedit knows, the
backend (llama.cpp by default), and variants (levers.py) such as `plain` (no
speculation: the speed baseline, whose output must be the same) or a prompt. The name
`spellcheck` is the non-LLM baseline (pedit/tools/spelling.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field

from ..app import fileio
from ..app.jobs import Job
from ..app.templates import templates
from ..checks import guard
from ..engine.costmodel import measure
from ..errors import RefusedError
from ..events import Event, Finished, drain
from ..tools.spelling import spellcheck
from ..ui.runs import answer
from . import gleu
from .checks import run_checks
from .corpus import Task
from .levers import VARIANTS, Variant, lookup
from .quality import score_fix

BASELINE = "spellcheck"


@dataclass(frozen=True)
class Config:
    name: str
    model: str | None  # None: the spell-check baseline
    backend: str = "llama.cpp"
    variants: tuple[str, ...] = ()

    @classmethod
    def parse(cls, name: str) -> Config:
        if name == BASELINE:
            return cls(name, None, "none")
        head, *variants = name.split("+")
        model, _, backend = head.partition("@")
        for v in variants:
            if lookup(v) is None:
                raise ValueError(f"unknown variant {v!r} in {name!r} ({', '.join(VARIANTS)}, kbBETA, sbBETA)")
        return cls(name, model, backend or "llama.cpp", tuple(variants))

    def variant(self) -> Variant:
        return Variant.combine([lookup(v) for v in self.variants])


@dataclass(kw_only=True)
class QualityRun:
    task: str
    config: str
    output: str  # what the file would be after the run (the source when refused)
    refused: str | None  # why the answer was not written
    pieces_refused: int = 0  # of a task run a piece a file (`+sentences`): the pieces left as they were
    seconds: float  # the whole rewrite, as the user waits for it (model loading excluded)
    prefill_seconds: float = 0.0
    decode_seconds: float = 0.0
    output_tokens: int = 0
    forward_passes: int = 0
    accepted: int = 0
    prompt_tokens: int = 0  # the prompts' tokens, read or found cached (a prompt's cost)
    fix: dict | None = None  # quality.FixScore.to_dict() for a fix task
    checks: list[dict] = field(default_factory=list)  # checks.Check for a refactor task
    check: dict | None = None  # the refactor's own check of its intent (outcome.Outcome.check_dict)

    @property
    def passed(self) -> bool | None:
        return all(c["passed"] for c in self.checks) if self.checks else None


def scored(task: Task) -> bool:
    return task.reference() is not None or bool(task.check)


def evaluate(task: Task, run: QualityRun) -> QualityRun:
    source = task.text()
    reference = task.reference()
    if reference is not None:
        run.fix = score_fix(source, run.output, reference, task.kinds(), task.file).to_dict()
        if task.learner:  # GLEU's counts, of the output and of the source left as it was
            run.fix["gleu"] = gleu.counts(source, run.output, reference)
            run.fix["gleu_source"] = gleu.counts(source, source, reference)
    if task.check:
        run.checks = [asdict(c) for c in run_checks(source, run.output, task.check)]
    return run


def run_baseline(task: Task) -> QualityRun:
    t0 = time.perf_counter()
    out = spellcheck(task.text(), task.file)
    seconds = time.perf_counter() - t0
    run = QualityRun(task=task.id, config=BASELINE, output=out, refused=None, seconds=seconds)
    return evaluate(task, run)


def run_model(backend, config: Config, task: Task, cost=None) -> QualityRun:
    """One task as `pedit COMMAND FILE [INSTRUCTION]` would do it, no file written."""
    variant = config.variant()
    template = variant.template(templates({}, config.model)[task.command])
    options = variant.options().costed(cost)
    job = Job(backend, template, task.instruction or None, options)
    source = task.text()
    stats = []

    def show(events: Iterator[Event], label: str) -> Finished:
        finished = drain(events)
        stats.append(finished.stats)
        return finished

    t0 = time.perf_counter()
    verdict = None
    pieces = variant.pieces(source)
    judged = job.template.judged
    refusals: list[str] = []
    try:
        output = ""
        for piece, after in pieces:
            try:
                outcome = answer(variant.rewrite(job, piece, task.file), show)
                # as pedit writes it to a file of the piece's text: a sentence with no final
                # newline gets none, the answer's (the fence's line) dropped
                written = fileio.decode(piece.encode("utf-8"), task.file).render(outcome.text)
                verdict = outcome.check_dict()
                if len(pieces) > 1:  # each piece a file of its own: judged as its own
                    refusal = guard.judge(task.file, piece, written, judged=judged) if written != piece else None
                    if refusal:
                        raise RefusedError(refusal.reason)
            except RefusedError as exc:
                if len(pieces) == 1:
                    raise
                written = piece  # that file left as it was, the others written
                refusals.append(exc.reason or str(exc))
            output += written + after
        refusal = guard.judge(task.file, source, output, judged=judged) if output != source and len(pieces) == 1 else None
        refused = refusal.reason if refusal else None
        if refusals and len(refusals) == len(pieces):
            refused = refusals[0]
    except RefusedError as exc:
        output, refused = source, exc.reason or str(exc)
    seconds = time.perf_counter() - t0
    run = QualityRun(
        task=task.id, config=config.name, output=source if refused else output, refused=refused,
        seconds=seconds, check=verdict, pieces_refused=len(refusals),
    )  # fmt: skip
    for s in stats:
        run.prefill_seconds += s.prefill_seconds
        run.decode_seconds += s.decode_seconds
        run.output_tokens += s.completion_tokens
        run.forward_passes += s.forward_passes
        run.accepted += s.accepted_prediction_tokens
        run.prompt_tokens += s.prompt_tokens
    return evaluate(task, run)


def run_all(
    configs: list[Config],
    tasks: list[Task],
    *,
    load: Callable[[Config], object],
    progress: Callable[[str], None] = lambda _: None,
) -> list[QualityRun]:
    """Every scored task on every configuration; one model load per configuration."""
    tasks = [t for t in tasks if scored(t)]
    runs: list[QualityRun] = []
    for config in configs:
        if config.model is None:
            runs += [run_baseline(t) for t in tasks if t.reference() is not None]  # prose only
            continue
        backend = load(config)
        try:
            cost = measure(backend) if config.variant().speculate == "auto" else None
            for task in tasks:
                progress(f"{config.name}: {task.id}")
                runs.append(run_model(backend, config, task, cost))
        finally:
            backend.close()
    return runs
