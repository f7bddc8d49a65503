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
    answer   = the model's rewrite under that draft, bias and grammar (jobs.py)
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
`rewrite` is every template's rewrite: this loop for a template that reads intents, else
wholefile.rewrite.
"""

from __future__ import annotations

import json
from collections.abc import Generator
from dataclasses import replace
from pathlib import PurePath

from ..checks.earlycheck import EarlyCheck, Stopped, watched
from ..checks.intentcheck import Verdict, check, missed
from ..engine.edit import local
from ..engine.grammar import Constraint
from ..errors import RefusedError
from ..events import Event, Finished, Stats, finish
from ..tools import intent as intents
from ..tools.hints import hints_grammar
from ..tools.intent import FSTRINGS, HINTS, LOGGING, RENAME, Intent
from ..tools.printlog import to_logging
from ..tools.rename import RenameError, rename, supported
from . import wholefile
from .jobs import Job
from .options import EngineOptions
from .outcome import Answering, Outcome, Started
from .templates import BUILTIN

TOOL_BIAS = 1.5  # β towards a tool's draft on the first try (the prototype's renames: 3/7 -> 4/7 passed)
RETRY_BIAS = 4.0  # β on the second try: the model departs from the tool only when sure
TRIES = 2
EARLY = True  # rename answers checked as they are written (tests compare with False)


def rewrite(job: Job, text: str, name: str, spans: list[tuple[int, int]] | None = None) -> Answering:
    """The file rewritten: a template that reads intents (refactor) through the tools, the
    model and the intent's check (`run`); any other, or only `spans`, as wholefile.rewrite."""
    if job.template.intents and job.options.tools.intents and spans is None:
        return run(job, text, name)
    return wholefile.rewrite(job, text, name, spans)


def read(instruction: str | None, job: Job | None = None) -> tuple[Intent, Stats | None]:
    """The intent: the patterns', else (given a job with a local model and a vague
    instruction) the model's own reading, under intent.SCHEMA, with that run's figures."""
    found = intents.parse(instruction)
    if job is None or not intents.vague(instruction, found) or not local(job.backend):
        return found, None
    return _ask(job, instruction or "")


def _ask(job: Job, instruction: str) -> tuple[Intent, Stats]:
    """pedit extract's run on the instruction: JSON forced by the schema (a few passes)."""
    schema = Constraint("json", json.dumps(intents.SCHEMA), compact=True)
    options = replace(job.options, edit=replace(job.options.edit, constraint=schema))
    extract = replace(
        job, template=BUILTIN["extract"], instruction=json.dumps(intents.SCHEMA), options=options
    )
    req = extract.request(intents.ASK.format(instruction=instruction), "request.txt")
    fin = finish(extract.run_one(req, "summary", "intent"))
    return intents.from_extracted(fin.text, instruction), fin.stats


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


def run(job: Job, text: str, name: str) -> Answering:
    """The refactor loop (module docstring): every try's runs' events; its value the
    outcome with its verdict."""
    found, asked = read(job.instruction, job)
    tool, grammar = proposal(found, text, name, job.instruction)
    given = job.options.keep_bias  # the user's --keep-bias wins over the tool's β
    options = _with_grammar(job, grammar, text, name)
    stats: list[Stats] = []  # every run's figures, a refused one's and a stopped one's too
    verdict, outcome = None, None
    early = _checked_early(job, found, tool, text, name)

    def done(outcome: Outcome, verdict: Verdict, attempt: int, answer: str = "model") -> Outcome:
        runs = [_with_tools(stats[0], asked), *stats[1:]] if stats else stats
        return replace(outcome, stats=runs, verdict=verdict, tries=attempt, intent=found, answer=answer)

    tries = TRIES if job.options.tools.retry else 1
    for attempt in range(1, tries + 1):
        beta = given if given is not None else (TOOL_BIAS if attempt == 1 else RETRY_BIAS) if tool else None
        if attempt > 1 and (tool is None or given is not None):
            break  # nothing would differ from the first try: the same draft, bias and grammar
        tried = replace(job, options=replace(options, keep_bias=beta))
        stream, stopped = wholefile.rewrite(tried, text, name, draft=tool), list[Stopped]()
        if early:
            stream = watched(stream, EarlyCheck(name, text, tool, found.renames).refuses, stopped)
        try:
            outcome = yield from _counted(stream, stats)
        except RefusedError as exc:  # not a whole answer (guard.incomplete): a failed try
            if tool is None:
                raise
            outcome, verdict = Outcome(text, []), Verdict(check=found.kind, passed=False, reason=exc.reason)
            continue
        if stopped:  # what it wrote fails the check already: decided as below
            stop = stopped[0]
            outcome = Outcome(stop.text, [])
            verdict = Verdict(check="rename", passed=False, reason=stop.early.reason)
            if stop.early.missed:
                continue
            break
        verdict = check(found, name, text, outcome.text, tool)
        if verdict.passed:
            return done(outcome, verdict, attempt)
        if tool is not None and not (found.kind == RENAME and missed(name, text, tool, outcome.text)):
            break  # it strayed from the tool's edit: the retry would stray the same way
    if tool is not None and job.options.tools.retry:  # the model's answers failed: the tool's own edit
        own = check(found, name, text, tool, tool)
        if own.passed:
            tool_name = _TOOLS.get(found.kind, "the tool")
            why = f"the model's answer did not pass ({verdict.reason}): {tool_name}'s edit"
            return replace(done(outcome, replace(own, reason=why), attempt, "tool"), text=tool)
    if job.force:
        return done(outcome, verdict, attempt)
    why = f"the refactor fails its {verdict.check} check: {verdict.reason}"
    raise RefusedError(f"{name}: {why}; nothing written (--force to write it anyway)", force=True, reason=why)


def _with_grammar(job: Job, grammar: Constraint | None, text: str, name: str) -> EngineOptions:
    """The job's options, under the tool's grammar when a file that goes in one run has one."""
    o = job.options
    if grammar is None or o.edit.constraint is not None or len(job.pieces(text, name, "rewrite")) > 1:
        return o
    return replace(o, edit=replace(o.edit, constraint=grammar))


def _counted(stream: Answering, stats: list[Stats]) -> Generator[Event | Started, None, Outcome | None]:
    """`stream`'s events, each run's figures added to `stats` as its Finished passes; its value."""
    try:
        while True:
            try:
                ev = next(stream)
            except StopIteration as end:
                return end.value
            if isinstance(ev, Finished):
                stats.append(ev.stats)
            yield ev
    finally:
        stream.close()


def _checked_early(job: Job, found: Intent, tool: str | None, text: str, name: str) -> bool:
    """Is the answer checked as it is written (earlycheck.py)? A rename with the exact
    rename to check against, read whole where --force may write it, in one run."""
    early = EARLY and found.kind == RENAME and tool is not None and not job.force
    return early and len(job.pieces(text, name, "rewrite")) == 1


def _with_tools(st: Stats, asked: Stats | None) -> Stats:
    """A run's figures with the model's reading of the intent (asked) among its tools' reads."""
    if asked is None:
        return st
    spent = asked.prefill_seconds + asked.tool_seconds + asked.decode_seconds
    passes = asked.forward_passes
    return replace(
        st, tool_seconds=st.tool_seconds + spent, tool_passes=st.tool_passes + passes,
        forward_passes=st.forward_passes + passes,
    )  # fmt: skip


_TOOLS = {RENAME: "the exact rename", FSTRINGS: "flynt", LOGGING: "the print-to-logging rewrite"}
