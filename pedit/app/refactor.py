"""A refactor: tools propose, the model verifies, a check of the intent decides.

    intent   = intent.parse(instruction), else the model's reading of it (a vague one)
    proposal = rename: the exact rename (rename.py) as the draft, with keep-bias β_tool
               towards it: the model keeps the tool's edit where it agrees and adapts what
               a tool cannot (a docstring that speaks of the name)
               hints:  an edit grammar (hints.py): the file forced, an annotation slot at
               every parameter and return: the model chooses only the types
               fstrings: flynt's conversion as the draft, β_tool towards it
               logging: every print() as a logger call (printlog.py) as the draft,
               β_tool towards it
               extract, other: no tool; the check alone
    answer   = the model's rewrite under that draft, bias and grammar (app/jobs.py)
    verdict  = intentcheck.check(intent, answer)
    early    = a rename's answer is checked as it is written (earlycheck.py): once what it
               has written fails the check whatever follows (its code departs from the
               exact rename's, or a line it wrote names none of the names and is none of
               the file's), the model is stopped there and the verdict is taken as below
    failed   -> a rename that left an old name (intentcheck.missed): one more try with
                β_retry, the tool's draft leaned on harder; a rename that strayed (changed
                code the rename does not), or fails again: the exact rename itself is the
                answer (the tool's edit, which the check passes by construction; a second
                run would stray the same way: measured on fnmatch.py, where β 4 renamed
                `pat_str` as β 1.5 did); f-strings and logging likewise: the tool's own
                conversion if it
                passes the check (a second run at β_retry failed as the first on all three
                f-string tasks of the report); anything else is refused with the check's
                reason (RefusedError, exit 5; --force writes it)

The keep-bias and the grammar are the engine's (lossless: plain decoding of the same
biased, masked distribution); this module only chooses them and reads the verdict.
"""

from __future__ import annotations

import contextlib
from dataclasses import replace
from pathlib import PurePath

from ..checks.earlycheck import EarlyCheck, Stopped, watched
from ..checks.intentcheck import Verdict, check, missed
from ..engine.edit import local
from ..engine.grammar import Constraint
from ..errors import RefusedError
from ..events import Stats, drain
from ..tools import intent as intents
from ..tools.intent import FSTRINGS, HINTS, LOGGING, RENAME, Intent
from ..tools.printlog import to_logging
from ..tools.rename import RenameError, rename, supported
from .outcome import Outcome

TOOL_BIAS = 1.5  # β towards a tool's draft on the first try (issue 26's prototype: 3/7 -> 4/7)
RETRY_BIAS = 4.0  # β on the second try: the model departs from the tool only when sure
TRIES = 2
EARLY = True  # rename answers checked as they are written (tests compare with False)


def read(instruction: str | None, job=None, render=None) -> Intent:
    """The intent: the patterns', else (given a job with a local model and a vague
    instruction) the model's own reading, under intent.SCHEMA; `render` (default: drained
    quietly) gets that run's events."""
    found = intents.parse(instruction)
    if job is None or not intents.vague(instruction, found) or not local(job.backend):
        return found
    return _ask(job, instruction or "", render or (lambda events, _label: drain(events)))


def _ask(job, instruction: str, render) -> Intent:
    """pedit extract's run on the instruction: JSON forced by the schema (a few passes)."""
    import json

    from .templates import BUILTIN

    extract = replace(
        job, template=BUILTIN["extract"], instruction=json.dumps(intents.SCHEMA),
        options=replace(job.options, constraint=Constraint("json", json.dumps(intents.SCHEMA), compact=True)),
    )  # fmt: skip
    req = extract.request(intents.ASK.format(instruction=instruction), "request.txt")
    fin = extract.run_one(req, "summary", render, "intent")
    return intents.from_extracted(fin.text, instruction)


def precheck(instruction: str | None, text: str, filename: str) -> None:
    """UsageError now, before a model loads, for a rename of a name the file lacks."""
    found = intents.parse(instruction)
    if found.kind == RENAME and supported(filename):
        # a file that does not parse (RenameError): the model alone, checked by the guard
        with contextlib.suppress(RenameError):
            rename(text, filename, found.renames, within=found.within)


def proposal(
    found: Intent, text: str, filename: str, instruction: str | None = ""
) -> tuple[str | None, Constraint | None]:
    """(the tool's draft, the edit grammar) for this intent and file."""
    python = PurePath(filename).suffix.lower() in (".py", ".pyi")
    if found.kind == RENAME and supported(filename):
        try:
            exact = rename(text, filename, found.renames, docs=found.docs, within=found.within)
        except RenameError:
            return None, None
        return exact, None
    if found.kind == HINTS and python:
        from ..tools.hints import hints_grammar

        try:
            return None, Constraint("lark", hints_grammar(text))
        except SyntaxError:
            return None, None
    if found.kind == FSTRINGS and python:
        return fstrings(text), None
    if found.kind == LOGGING and python:
        return to_logging(text, instruction), None
    return None, None


def fstrings(text: str) -> str | None:
    """flynt's conversion of every %-format and .format() to an f-string (aggressive: %d
    and the like too; the check and the model decide), None if it changes nothing."""
    from flynt.api import fstringify_code
    from flynt.state import State

    try:
        done = fstringify_code(text, State(quiet=True, aggressive=True, len_limit=None))
    except Exception:  # flynt on a file it cannot read: no proposal, the model alone
        return None
    return done.content if done is not None and done.content != text else None


def run(job, text: str, name: str, render):
    """The refactor loop (module docstring); returns outcome.Outcome with its verdict."""
    found, asked = _intent(job)
    tool, grammar = proposal(found, text, name, job.instruction)
    given = job.options.keep_bias  # the user's --keep-bias wins over the tool's β
    options = job.options
    if grammar is not None and options.constraint is None and len(job.pieces(text, name, "rewrite")) == 1:
        options = replace(options, constraint=grammar)  # a grammar holds a file that goes in one run
    stats, verdict, outcome = [], None, None
    early = _checked_early(job, found, tool, text, name)

    def counted(events, label):  # every run's figures, a refused one's and a stopped one's too
        stopped: list[Stopped] = []
        if early:
            events = watched(events, EarlyCheck(name, text, tool, found.renames).refuses, stopped)
        fin = render(events, label)
        stats.append(_with_tools(fin.stats, asked) if not stats else fin.stats)
        if stopped:
            raise stopped[0]
        return fin

    def done(outcome, verdict, attempt, answer="model"):
        return replace(outcome, stats=stats, verdict=verdict, tries=attempt, intent=found, answer=answer)

    tries = TRIES if job.options.retry else 1
    for attempt in range(1, tries + 1):
        beta = given if given is not None else (TOOL_BIAS if attempt == 1 else RETRY_BIAS) if tool else None
        if attempt > 1 and (tool is None or given is not None):
            break  # nothing would differ from the first try: the same draft, bias and grammar
        tried = replace(job, options=replace(options, keep_bias=beta))
        try:
            outcome = tried.plain_rewrite(text, name, counted, draft=tool)
        except RefusedError as exc:  # not a whole answer (guard.incomplete): a failed try
            if tool is None:
                raise
            outcome, verdict = Outcome(text, []), Verdict(check=found.kind, passed=False, reason=exc.reason)
            continue
        except Stopped as exc:  # what it wrote fails the check already: decided as below
            outcome, verdict = (
                Outcome(exc.text, []),
                Verdict(check="rename", passed=False, reason=exc.early.reason),
            )
            if exc.early.missed:
                continue
            break
        verdict = check(found, name, text, outcome.text, tool)
        if verdict.passed:
            return done(outcome, verdict, attempt)
        if tool is not None and not (found.kind == RENAME and missed(name, text, tool, outcome.text)):
            break  # it strayed from the tool's edit: the retry would stray the same way
    if tool is not None and job.options.retry:  # the model's answers failed: the tool's own edit
        own = check(found, name, text, tool, tool)
        if own.passed:
            tool_name = _TOOLS.get(found.kind, "the tool")
            why = f"the model's answer did not pass ({verdict.reason}): {tool_name}'s edit"
            return replace(done(outcome, replace(own, reason=why), attempt, "tool"), text=tool)
    if job.force:
        return done(outcome, verdict, attempt)
    why = f"the refactor fails its {verdict.check} check: {verdict.reason}"
    raise RefusedError(f"{name}: {why}; nothing written (--force to write it anyway)", force=True, reason=why)


def _intent(job) -> tuple[Intent, list[Stats]]:
    """The job's intent (read()), and the figures of the model's reading of it when it was
    asked (a vague instruction): a tool's read, not the prompt's."""
    asked: list[Stats] = []

    def reading(events, _label):
        fin = drain(events)
        asked.append(fin.stats)
        return fin

    return read(job.instruction, job, reading), asked


def _checked_early(job, found: Intent, tool: str | None, text: str, name: str) -> bool:
    """Is the answer checked as it is written (earlycheck.py)? A rename with the exact
    rename to check against, read whole where --force may write it, in one run."""
    early = EARLY and found.kind == RENAME and tool is not None and not job.force
    return early and len(job.pieces(text, name, "rewrite")) == 1


def _with_tools(st: Stats, asked: list[Stats]) -> Stats:
    """A run's figures with the intent's reading (asked) among its tools' model reads."""
    if not asked:
        return st
    spent = sum(a.prefill_seconds + a.tool_seconds + a.decode_seconds for a in asked)
    passes = sum(a.forward_passes for a in asked)
    return replace(
        st, tool_seconds=st.tool_seconds + spent, tool_passes=st.tool_passes + passes,
        forward_passes=st.forward_passes + passes,
    )  # fmt: skip


_TOOLS = {RENAME: "the exact rename", FSTRINGS: "flynt", LOGGING: "the print-to-logging rewrite"}
