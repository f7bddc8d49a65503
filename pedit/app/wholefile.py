"""A whole file through a job, in runs of job.pieces(): rewritten (each piece of a judged
template's file judged alone) or summarized (the parts' summaries combined). Each is a
stream of the runs' events whose value is the Outcome (outcome.py)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import PurePath

from ..checks import guard
from ..engine.edit import local
from ..engine.grammar import Constraint
from ..errors import RefusedError, UsageError
from ..tools import dialect, skeleton
from ..tools.skeleton import Skeleton
from ..tools.skeleton import grammar as skeleton_grammar
from . import chunking
from .answercache import job_key
from .codelayout import keep_code_layout
from .jobs import Job
from .outcome import Answering, Outcome


def rewrite(
    job: Job, text: str, name: str, spans: list[tuple[int, int]] | None = None, *, draft: str | None = None
) -> Answering:
    """The file, in runs of job.pieces() (one if it fits); or, given `spans` (character
    ranges: the hook's changed blocks), only those, each told its lines, and the text
    between them kept as it is. `draft`: a tool's proposal for the whole file, cut
    into the same lines as the pieces (it must have as many lines as `text`; if not,
    it drafts a file that goes in one run only)."""
    job = _english_of(job, text)
    sk = _skeleton(job, text, name)
    cut = _cut_key(job, name) if job.answers is not None and spans is None else None
    segments = _segments(job, text, name, spans, sk, job.answers.cut(cut) if cut else ())
    drafts = chunking.cut_like(draft, [p for p, _ in segments]) if draft is not None else None
    outs, stats, notes = [], [], []
    # a template's pieces of a file cut in runs are judged one by one (the hook's changed
    # blocks are not: it reports a block it could not fix, hook/run.py)
    judged = job.template.judged and spans is None and len(segments) > 1
    at = 0
    for i, (piece, part) in enumerate(segments):
        at += len(piece)
        if part is None:  # between two spans: kept
            outs.append(piece)
            continue
        forced = _forced(sk, at - len(piece), at)
        if forced is False:  # all skeleton: nothing the fix may change, no run
            outs.append(piece)
            continue
        whole = spans is None and len(segments) == 1
        keyed = job.answers is not None and not whole and spans is None
        key = _piece_key(job, name, piece, part, drafts[i] if drafts else None, forced) if keyed else None
        kept = job.answers.get(key) if key else None
        if kept is not None:  # this piece was answered before, as it is now: no run, no tool
            outs.append(kept.text)
            notes += [f"{part}: kept as it was ({why})" for why in kept.notes]  # refused then: refused now
            continue
        req = job.request(piece, name, part, drafts[i] if drafts else None)
        try:
            label = f"{name} {part}".strip()
            fin = yield from job.run_one(req, "rewrite", label, whole=whole, score=drafts is None, forced=forced)
        except RefusedError as exc:  # not a whole answer: a judged piece stays as it was
            if not judged:
                raise
            _refused(job, key, piece, exc.reason, part, notes)
            outs.append(piece)
            continue
        out = fin.text if len(segments) == 1 else chunking.same_trailing_newlines(fin.text, piece)
        refusal = _piece_refused(name, segments, i, out) if judged else None
        if refusal:
            _refused(job, key, piece, refusal.reason, part, notes)
            out = piece
        elif key:
            job.answers.put_text(key, out)
        outs.append(out)
        stats.append(fin.stats)
    if cut and len(segments) > 1:  # the next fix of this file, edited, cuts it here again
        job.answers.put_cut(cut, [p for p, _ in segments])
    out = "".join(outs)
    out = keep_code_layout(name, text, out) if job.template.keeps_lines else out
    return Outcome(out, stats, notes=notes)


def _refused(job: Job, key: str | None, piece: str, reason: str, part: str, notes: list[str]) -> None:
    """A judged piece kept as it was: said, and kept in the answer cache with its reason
    (its run gives the same answer again, which the guard refuses again), so an edit of
    another paragraph does not run it again."""
    notes.append(f"{part}: kept as it was ({reason})")
    if key:
        job.answers.put(key, Outcome(text=piece, stats=[], notes=[reason]), None)


def _segments(
    job: Job, text: str, name: str, spans: list[tuple[int, int]] | None, sk: Skeleton | None,
    previous: Sequence[str] = (),
) -> list[tuple[str, str | None]]:
    """The file cut as it runs: (piece, its part's label: "" for a file in one run, None
    for the text kept between the hook's spans). `previous`: the pieces of this file's
    last cut, kept where its text is unchanged (chunking.rechunk)."""
    if spans is not None:
        return chunking.span_segments(text, spans)
    parts = job.pieces(text, name, "rewrite", skeleton.joined_lines(sk) if sk else frozenset(), previous)
    n = len(parts)
    if n > 1 and job.constraint(text, name, "rewrite"):
        raise UsageError(f"{name}: too long for one run, and a grammar constrains the whole file "
                         "(raise --n-ctx, or --no-json-grammar for a .json file)")  # fmt: skip
    return [(p, f"part {i} of {n}" if n > 1 else "") for i, p in enumerate(parts, 1)]


def _piece_key(
    job: Job, name: str, piece: str, part: str, draft: str | None, forced: Constraint | None
) -> str:
    """What a piece's answer depends on: the job (`_job`), what its request is made of
    (job.request: the piece, the file's name, a tool's draft, its part where the prompt
    says it (part_note), not otherwise: a file cut in more runs after an edit finds its
    unchanged pieces again; the spelling's draft follows from them and the options) and
    its skeleton's grammar."""
    said = part if job.part_note else ""
    return job_key("piece", *_job(job), name, piece, said, draft, forced)


def _cut_key(job: Job, name: str) -> str:
    """Where the answer cache keeps the pieces of this file's last cut by this job."""
    return job_key("cut", *_job(job), name)


def _job(job: Job) -> tuple:
    """What a job's answers depend on: the model (its file's identity), the template, the
    options without the cost model (which prices passes and changes no answer), the
    instruction, system prompt, --force, the part note and the prompt's order."""
    from ..machine.calibration import identity

    options = replace(job.options, edit=replace(job.options.edit, cost=None))
    model = (job.backend.name, identity(job.backend), getattr(job.backend, "n_ctx", None))
    asked = (job.instruction, job.system, job.force, job.part_note, job.file_first)
    return model, job.template, options, asked


def _english_of(job: Job, text: str) -> Job:
    """The job with the variety of English its fix keeps detected on the whole file (dialect
    "auto"), once: every run of the file keeps the same one, and the detection (Harper's
    spelling of the file's words, a second for a code file's identifiers) is not made
    again for each run. A job whose answers neither draft spellings nor keep the file's
    English is as it was."""
    tools = job.options.tools
    if tools.dialect != dialect.AUTO or not (job.spelling or job.template.keeps_lines):
        return job
    return replace(job, options=replace(job.options, tools=replace(tools, dialect=dialect.detect(text))))


def _skeleton(job: Job, text: str, name: str) -> Skeleton | None:
    """The file's skeleton (tools/skeleton), when the job's answers are forced by it: a
    template that changes only prose (fix), on a backend that runs a grammar, with no
    grammar of the user's or a .json file's. None: the guard checks it afterwards."""
    if not (job.template.skeleton and job.options.skeleton) or not local(job.backend):
        return None
    if job.constraint(text, name, "rewrite") is not None:
        return None
    return skeleton.of(text, name)


def _forced(sk: Skeleton | None, start: int, end: int) -> Constraint | None | bool:
    """The grammar of text[start:end]'s skeleton (tools/skeleton/grammar.py); None with
    no skeleton; False when the piece has no prose the grammar leaves free."""
    if sk is None:
        return None
    piece = sk.sliced(start, end)
    free = skeleton_grammar.holes(piece)
    return Constraint("lark", skeleton_grammar.lark(piece, free)) if free else False


def _piece_refused(
    name: str, segments: list[tuple[str, str | None]], i: int, out: str
) -> guard.Refusal | None:
    """A template whose pieces are judged (fix): why piece i's answer fails the guard's
    fix checks, so that piece stays as it was and the others are still fixed. Prose is
    judged piece by piece; a code file as the whole file with only that piece replaced
    (a piece cut out of a docstring does not lex alone)."""
    piece = segments[i][0]
    if PurePath(name).suffix.lower() in guard.PROSE:
        return guard.judge_fix(name, piece, out)
    before = "".join(p for p, _ in segments)
    after = "".join(p for p, _ in segments[:i]) + out + "".join(p for p, _ in segments[i + 1 :])
    return guard.judge_fix(name, before, after)


def summarize(job: Job, text: str, name: str) -> Answering:
    """The file's summary: in one run, or each part's summarized and the summaries combined."""
    parts = job.pieces(text, name, "summary")
    if len(parts) > 1 and job.options.edit.constraint is not None:
        raise UsageError(f"{name}: too long for one run, and a grammar constrains the whole answer "
                         "(raise --n-ctx)")  # fmt: skip
    if len(parts) == 1:
        fin = yield from job.run_one(job.request(text, name), "summary", name)
        if not fin.text.strip():  # nothing to print: the model (or a grammar) stopped at once
            raise RefusedError(f"{name}: the model's answer is empty; nothing printed")
        return Outcome(fin.text.strip() + "\n", [fin.stats])
    notes, stats = [], []
    for i, piece in enumerate(parts, 1):
        part = f"part {i} of {len(parts)}"
        fin = yield from job.run_one(job.request(piece, name, part), "summary", f"{name} {part}")
        notes.append(f"Part {i}: {fin.text.strip()}\n")
        stats.append(fin.stats)
    combine = replace(job, instruction=None, template=replace(
        job.template, instruction="Combine these summaries of the parts of one file into one summary.",
    ))  # fmt: skip
    final = yield from summarize(combine, "\n".join(notes), f"summaries of {name}")
    return Outcome(final.text, stats + final.stats)
