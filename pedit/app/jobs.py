"""A file's job: a loaded backend, the template and the command's options, and one run of
the engine on a piece of the file (`run_one`: its prompt, its cached start, the fix's
scored swaps, the guard's check of a whole answer).

wholefile.py runs a file in pieces (rewrite, summarize) and refactor.rewrite is every
template's rewrite: each a stream of the runs' events that the shell consumes (outcome.py).
"""

from __future__ import annotations

import time
from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass, field, replace

from ..backends import AnyBackend
from ..checks import guard
from ..engine.decode import common_prefix, hold
from ..engine.edit import EditOptions, edit_events, local, prompt_size
from ..engine.grammar import Constraint, GrammarError, json_grammar
from ..engine.likelihood import Scored
from ..engine.prompt import build_prompt, build_summary_prompt
from ..errors import UsageError
from ..events import Event, Finished, Prefilled, Progress
from ..machine import prefixcache
from ..machine.calibration import identity
from ..models import cache_root
from ..request import EditRequest
from ..tools import commas, dialect, fix
from . import chunking
from .linebreaks import keep_line_breaks
from .options import EngineOptions
from .outcome import Started
from .templates import Template

SUMMARY_ROOM = 512  # tokens kept free for a summary's answer


@dataclass(frozen=True)
class Job:
    backend: AnyBackend
    template: Template
    instruction: str | None  # what the user typed (refactor, edit)
    options: EngineOptions
    system: str | None = None  # --system
    force: bool = False  # --force: write an answer that stops early anyway
    chunk_tokens: int | None = None  # most file tokens per run (None: the template's; 0: whole)
    # tell a run of a file cut in runs which part it is ("part 2 of 3"): about 20 prompt
    # tokens a run, and off by default since the quality report measured it buying nothing
    # (the 16 fix tasks: 0.75 with and without; the `+partnote` lever turns it on)
    part_note: bool = False
    file_first: bool = False  # the file before the instruction in the prompt (EditRequest.file_first)
    # the answer cache (answercache.py), when on: a file cut in runs keeps each piece's answer,
    # and a piece answered before is not run again (wholefile.rewrite)
    answers: object = None
    # stem()'s prompt for no file, per kind (not copied by replace(): another job, another prompt)
    _bare: dict[str, list[int]] = field(default_factory=dict, init=False, compare=False, repr=False)

    @property
    def keep_bias(self) -> float:
        """The keep-bias of this job's runs: the option's, else the template's; none on a
        remote backend (it adds to logits a server does not give)."""
        if not local(self.backend):
            return 0.0
        return self.template.bias(self.options.keep_bias)

    @property
    def suggest_bias(self) -> float | None:
        """The β on what a tool changed in the draft: the option's, else the template's
        (None: the keep-bias there too); none on a remote backend."""
        if not local(self.backend):
            return None
        s = self.options.edit.suggest_bias
        return self.template.suggest_bias if s is None else s

    @property
    def sure_bias(self) -> float | None:
        """The β on the suggestions the model's reading is sure of (EditRequest.doubtful):
        the option's, else the template's (None: the suggestions' β there too); none on a
        remote backend."""
        if not local(self.backend):
            return None
        s = self.options.edit.sure_bias
        return self.template.sure_bias if s is None else s

    @property
    def spelling(self) -> bool:
        """Do this job's drafts carry spelling suggestions? The option's, else the template's."""
        s = self.options.tools.spelling
        return self.template.spelling if s is None else s

    def request(self, text: str, name: str, part: str = "", draft: str | None = None) -> EditRequest:
        """`draft`: a tool's proposal for this text (refactor.py), else the spelling's."""
        instruction = self.template.render(self.instruction)
        if part and self.part_note:
            instruction += f"\n\n(This is {part} of the file; rewrite only this part.)"
        # with β <= 0 the file drafts: β = 0 cannot change the answer, and β < 0 would push
        # the model away from the suggestions
        if draft is None and self.spelling and self.keep_bias > 0:
            draft = fix.draft(text, name, self.options.tools)
        return EditRequest(
            text,
            instruction,
            name,
            self.system or self.template.system,
            draft=None if draft == text else draft,
            file_first=self.file_first,
        )

    def constraint(self, text: str, name: str, kind: str) -> Constraint | None:
        """What the answer about this file must match: the options' constraint (JSON in a
        rewrite with any whitespace, as the file is laid out; in new text, compact: the
        most forced text), else JSON for a .json file that parses, else nothing."""
        c = self.options.edit.constraint
        if c is not None:
            return replace(c, compact=c.kind == "json" and kind != "rewrite")
        if not local(self.backend):  # no grammar on a server: the guard parses the answer
            return None
        return json_grammar(text, name) if kind == "rewrite" and self.options.json_auto else None

    def scored(self, req: EditRequest) -> tuple[EditRequest, Scored | None]:
        """fix.scored for this job's request, where its drafts carry the tools' suggestions
        and the keep-bias leans on them; else (req, None)."""
        if not (self.spelling and self.keep_bias > 0):
            return req, None
        return fix.scored(self.backend, req, self.options.tools)

    def stem(self, prompt: list[int], kind: str) -> list[int]:
        """The start every run of this job's prompts shares (chat template, system prompt,
        instruction; not the part note, the file's name or text): the common prefix of a
        run's prompt and this job's prompt for no file (built once per kind)."""
        none = self._bare.get(kind)
        if none is None:
            build = build_summary_prompt if kind == "summary" else build_prompt
            bare = replace(self.request("", "\x00"), draft=None)
            none = self._bare[kind] = build(self.backend, bare).tokens
        return prompt[: common_prefix(prompt, none)]

    def _events(
        self, req: EditRequest, kind: str, whole: bool = True, forced: Constraint | None = None
    ) -> Iterator[Event]:
        """A rewrite may be cut off only by the limits (an error); a summary stops at
        SUMMARY_ROOM tokens unless --max-tokens or a grammar says otherwise. A constraint
        applies to an answer about the whole file only; `forced`, a piece's skeleton
        grammar, to this answer."""
        c = forced or (self.constraint(req.text, req.filename, kind) if whole else None)
        try:
            return edit_events(self.backend, req, self.run_options(kind, c))
        except GrammarError as exc:
            raise UsageError(f"{_what(c)}: {exc}") from None

    def run_options(self, kind: str, constraint: Constraint | None) -> EditOptions:
        """One run's EditOptions: the command's, with the run's kind, limit, biases and grammar.
        An answer under a grammar ends where the grammar does (a long extraction included)."""
        o = self.options.edit
        limit = o.max_tokens or (SUMMARY_ROOM if kind == "summary" and constraint is None else None)
        return replace(
            o, kind=kind, max_tokens=limit, keep_bias=self.keep_bias, suggest_bias=self.suggest_bias,
            sure_bias=self.sure_bias, constraint=constraint,
        )  # fmt: skip

    def budget(self, name: str, kind: str) -> int:
        """Most file tokens one run can take: the prompt around the file, the file, and
        room for the answer (a rewrite about 1.5x the file; a summary SUMMARY_ROOM)."""
        overhead = prompt_size(self.backend, self.request("", name, "part 10 of 10"), kind) + 16
        room = self.backend.n_ctx - overhead
        return room - SUMMARY_ROOM if kind == "summary" else int(room / 2.5)

    def pieces(
        self, text: str, name: str, kind: str, joined: frozenset[int] = frozenset(), previous: Sequence[str] = ()
    ) -> list[str]:
        """`joined`: lines no run starts at (inside a code block: skeleton.joined_lines);
        `previous`: the pieces of this file's last cut, kept where found again whole
        (chunking.rechunk)."""
        budget = room = self.budget(name, kind)
        if budget < 32:
            raise UsageError(f"--n-ctx {self.backend.n_ctx} leaves no room for the file")
        size = self.backend.count_tokens(text)

        def count(s: str) -> int:
            return self.backend.count_tokens(s)

        limit = self.template.chunk_tokens if self.chunk_tokens is None else self.chunk_tokens
        if limit and size > limit:  # smaller runs, lines kept whole
            longest = max(count(line) for line in text.splitlines(keepends=True))
            budget = min(budget, max(limit, longest))
        if size <= budget:
            return [text]
        if previous:
            return chunking.rechunk(text, previous, count, budget, joined, room)
        return chunking.chunks(text, count, budget, joined)

    def run_one(
        self, req: EditRequest, kind: str, label: str, *, whole: bool = True, score: bool = False,
        forced: Constraint | None = None,
    ) -> Generator[Event | Started, None, Finished]:
        """One run: Started(label), then its events; returns its Finished, a `fix`'s with
        the line breaks the model dropped put back (linebreaks.py), its English's words
        (dialect.keep_words) and no optional comma it added (commas.optional_added). `score` (a rewrite
        drafted by the job's own suggestions, not a tool's): the confusion-set swaps are
        scored first (`scored`; the scoring's reading of the prompt, and its time and
        passes, count as the run's prefill). `forced`: the piece's skeleton grammar."""
        yield Started(label)
        t0, passes = time.perf_counter(), 0
        on_here = local(self.backend)
        if on_here:  # the prompt's start, read alone: from memory or disk, else read (and saved)
            prompt = (build_summary_prompt if kind == "summary" else build_prompt)(self.backend, req).tokens
            stem = self.stem(prompt, kind)[: len(prompt) - 1]
            # nothing after it is reused: what ran before (another paragraph, another file)
            # never changes how this prompt is read, nor so its answer (decode.hold); unless
            # the setting `reuse` is "longest" and the cache holds more of this prompt
            longest = 0  # what the cache holds of this prompt, where it may be kept
            if self.options.reuse == "longest":
                longest = min(common_prefix(self.backend.held, prompt), len(prompt) - 1)
            if longest > len(stem):
                read, held = 0, longest  # kept whole (decode.prefill, likelihood.score)
            elif self.options.prompt_cache:
                where = cache_root() / "prefixes"
                read = prefixcache.ready(self.backend, identity(self.backend), stem, where).read
                held = len(stem)
            else:
                read, held = hold(self.backend, stem), len(stem)
            cached, passes = held - read, (1 if read else 0)
        tools = Tools()
        if score and kind == "rewrite":
            t1 = time.perf_counter()
            req, got = self.scored(req)
            if got is not None:  # what it kept of the cache (less: it read some of it again)
                cached, passes = min(cached, got.kept), passes + got.passes
                # its reading of the prompt (which the run finds cached) is the prompt's
                tools = Tools(time.perf_counter() - t1 - got.base_seconds, got.passes - got.base_passes)
        events = self._events(req, kind, whole, forced)
        if on_here:  # the figures count what ran before the run's own prefill
            events = _counted(events, time.perf_counter() - t0 - tools.seconds, passes, cached, tools)
        fin = None
        try:
            for ev in events:
                yield ev
                if isinstance(ev, Finished):
                    fin = ev
                    break
        except GrammarError as exc:  # found while decoding: no token satisfies it
            raise UsageError(f"{req.filename}: {exc}") from None
        finally:
            events.close()
        if fin is None:
            raise RuntimeError("the decoder ended without a Finished event")
        if kind == "rewrite":
            refusal = guard.incomplete(req.text, fin)
            if refusal and refusal.stands(self.force):
                raise refusal.error(req.filename)
            if self.template.keeps_lines:  # a fix keeps the file's layout and its English
                fin = replace(fin, text=self.as_fix(req, fin.text))
        return fin

    def as_fix(self, req: EditRequest, answer: str) -> str:
        """A fix's answer with the line breaks the model dropped put back, the file's
        English's words, and no optional comma it added (a learner's correctors leave them)."""
        text = keep_line_breaks(req.text, answer)
        text = dialect.keep_words(req.text, text, dialect.resolve(self.options.tools.dialect, req.text))
        if not self.options.tools.optional_commas:
            text = commas.optional_added(req.text, req.draft, text)
        return text


@dataclass(frozen=True)
class Tools:
    """The tools' own model reads before a run (the confusion-set scoring): seconds, passes."""

    seconds: float = 0.0
    passes: int = 0


def _counted(
    events: Iterator[Event], seconds: float, passes: int, cached: int, tools: Tools = Tools()
) -> Iterator[Event]:
    """A run's events, its figures including what ran before its own prefill: the prompt's
    start read (or found in the prompt cache) as prompt, `seconds`; the tools' reads
    (the scoring, which reads the prompt the run then finds in the cache) apart, as tools;
    all their `passes`; and as cached only what the cache held or the disk gave before
    them and no one read again (at most what the run's own prefill found), so the figures
    the user sees are the run's whole cost, and its "prompt" the prompt."""
    try:
        for ev in events:
            if isinstance(ev, Prefilled):
                cached = min(cached, ev.reused)
                ev = Prefilled(ev.prompt_tokens, ev.seconds + seconds, cached)
            elif isinstance(ev, Progress | Finished):
                st = ev.stats
                st = replace(
                    st, prefill_seconds=st.prefill_seconds + seconds, cached_tokens=cached,
                    forward_passes=st.forward_passes + passes, tool_seconds=st.tool_seconds + tools.seconds,
                    tool_passes=st.tool_passes + tools.passes,
                )  # fmt: skip
                ev = replace(ev, stats=st)
            yield ev
    finally:
        events.close()  # stopped early: the run stops at the pass it is in


def _what(c: Constraint | None) -> str:
    return {"json": "--schema", "regex": "--regex", "lark": "--grammar"}.get(c.kind if c else "", "grammar")
