"""Speculative decoding: draft, verify in one forward pass, keep what the model agrees with;
under a grammar, the tokens it forces ride in that pass too. The one decoding loop that
accelerates (plain decoding, decode.generate, is the baseline it reproduces).

    prefill(prompt); rows = [the prefill's logits]
    repeat:
        F = the tokens the rule forces here (no grammar: none): emit them, no draw;
            they wait in `pending` (emitted, not yet in the KV cache)    # coalescence
        proposals = every drafter's guess for what follows context       # cheap, no model
        draft     = the composed choice, cut where the rule rejects it; k = planner(draft)
        rows      = eval([*pending, d_1 .. d_k]) -> logits [k+1, n_vocab] # ONE forward pass
        walk rows[i] (the logits after pending + d_1..d_i), i = 0, 1, ...:
            F (i > 0): the drafts equal to F's first tokens are in the cache already (i
                advances); the rest of F waits for the next pass
            else: m, y = rule.verify(rows, d_1..d_k, i)  # d_i+1..d_i+m accepted; y the
                model's own token (pending), or None: look at the rule again after them
        truncate the KV cache to base + len(pending) + i; score every proposal against the
        emitted tokens (acceptance estimates)

A rule (no grammar: FREE; a grammar: constrained.GrammarRule) says what may be emitted:
its verify() draws each token as plain decoding under it would, one draw per drawn token,
and forced tokens take no draw. Lossless: every emitted token is the rule's output at its
state, whatever pass produced its row, and the Emitter shared with plain decoding stops at
exactly the same token. With a keep-bias (keepbias.py) each row is biased as plain
decoding with the same bias would bias it. Without coalescence (plain constrained
decoding, the baseline of coalescence) every pending token gets a pass of its own.
"""

from __future__ import annotations

import time
from collections.abc import Container, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from ..backends import Backend
from ..events import Event, Finished, Progress, TokenGenerated, TokensAccepted
from .costmodel import CostModel
from .decode import DecodeOptions, Emitter, Tracker, begin
from .drafters.compose import Composite
from .keepbias import KeepBias
from .names import DRAFT_MAX
from .planner import Acceptance, Planner
from .prompt import FenceStream
from .sampling import Sampling
from .verify import verify

FORCED = "grammar"  # the provenance of forced tokens (TokensAccepted.source)


class Rule(Protocol):
    """What may be emitted next: FREE (anything), or a grammar (constrained.GrammarRule)."""

    @property
    def done(self) -> bool:
        """Nothing may follow: the answer ends here."""

    def forced(self) -> list[int]:
        """Tokens that must come next, emitted with no draw; [] where there is a choice."""

    def valid_prefix(self, tokens: Sequence[int]) -> int:
        """How many of `tokens` may come next, in order."""

    def consume(self, tokens: Sequence[int]) -> None:
        """The tokens were emitted."""

    def verify(
        self,
        rows: np.ndarray,
        draft: Sequence[int],
        at: int,
        s: Sampling,
        rng: np.random.Generator,
        stop: Container,
    ) -> tuple[int, int | None]:
        """The walk from rows[at] (the logits after draft[:at]): (m, y), draft[at:at+m]
        accepted; y the token drawn from rows[at+m], or None when the rule must be asked
        again after the m tokens."""


class Free:
    """No grammar: nothing forced, every token allowed, the walk is verify.verify."""

    done = False

    def forced(self) -> list[int]:
        return []

    def valid_prefix(self, tokens: Sequence[int]) -> int:
        return len(tokens)

    def consume(self, tokens: Sequence[int]) -> None:
        pass

    def verify(self, rows, draft, at, s, rng, stop) -> tuple[int, int | None]:
        return verify(rows[at:], draft[at:] if at else draft, s, rng, stop)  # y is never None: once a pass


FREE = Free()


@dataclass(frozen=True)
class Drafting:
    """Where drafts come from and how long they are: the composed drafters, the planner
    that picks k, the acceptance estimates it reads, and the longest draft."""

    drafter: Composite
    planner: Planner
    acceptance: Acceptance
    draft_max: int = DRAFT_MAX


@dataclass(frozen=True, kw_only=True)
class _Pass:
    """One forward pass: its rows, the draft they verify, where it began."""

    rows: np.ndarray
    guess: list[int]
    label: str = ""
    proposals: list | None = None
    base: int = 0
    t: float = 0.0
    evaluated: int = 0  # tokens of `pending` this pass read (0: the prefill's row, no pass)
    inside: float = 0.0  # seconds in the backend's eval
    coalesced: int = 0  # pending tokens it read that were forced (plain decoding: a pass each)


@dataclass(frozen=True, kw_only=True)
class _Walked:
    """What walking one pass's rows found."""

    kept: int  # draft tokens now in the cache (forced or drawn)
    accepted: int  # of them, the drawn ones
    coalesced: int  # of them, the forced ones: in the cache with the draft, and no draw
    foresaw: bool  # the draft's token where EOS was drawn was EOS: not a rejection


@dataclass(kw_only=True)
class _Answer:
    """One answer's state: the emitter, the rule, the keep-bias and what is pending."""

    backend: Backend
    out: Emitter
    tracker: Tracker
    rule: Rule
    keep: KeepBias | None
    context: list[int]  # the prompt and what is emitted: what the drafters read
    sampling: Sampling
    rng: np.random.Generator
    pending: list[int] = field(default_factory=list)  # emitted, not yet in the KV cache
    # accepted drafts not yet yielded (one event per run: flush), their text, their drafter
    _run: list[int] = field(default_factory=list)
    _texts: list[str] = field(default_factory=list)
    _label: str = ""

    def emit(self, tokens: Sequence[int]) -> tuple[list[int], str]:
        """Emit tokens, stopping where the Emitter stops; consume them everywhere."""
        taken, pieces = [], []
        for tok in tokens:
            pieces.append(self.out.emit(tok))
            taken.append(tok)
            if self.out.stop:
                break
        self.rule.consume(taken)
        self.context.extend(taken)
        if self.keep:
            self.keep.advance(taken)
        return taken, "".join(pieces)

    def accept(self, tokens: Sequence[int], label: str) -> None:
        """Accepted drafts, yielded as one event per run (flush)."""
        taken, text = self.emit(tokens)
        if taken:
            self.tracker.drawn()
        self._run += taken
        self._texts.append(text)
        self._label = label

    def flush(self) -> Iterator[Event]:
        if self._run:
            yield TokensAccepted(tuple(self._run), "".join(self._texts), self._label)
            self._run, self._texts = [], []

    def forced(self, tokens: Sequence[int]) -> Iterator[Event]:
        yield from self.flush()
        at = len(self.context)
        taken, text = self.emit(tokens)
        self.tracker.forced += len(taken)
        self.tracker.follow(len(taken), at)
        yield TokensAccepted(tuple(taken), text, FORCED)

    def generated(self, token: int) -> Iterator[Event]:
        yield from self.flush()
        (taken,), text = self.emit([token])
        self.tracker.drawn()
        yield TokenGenerated(taken, text)


def speculative_generate(
    backend: Backend,
    prompt: Sequence[int],
    options: DecodeOptions,
    drafting: Drafting | None = None,
    *,
    rule: Rule = FREE,
    coalesce: bool = True,
    cost: CostModel | None = None,
    until: FenceStream | None = None,
    rng: np.random.Generator | None = None,
    keep: KeepBias | None = None,
) -> Iterator[Event]:
    """Events of one answer. drafting None: no drafts (a grammar's coalescence alone, or
    plain decoding's steps); coalesce False: each pending token gets its own pass."""
    if drafting is not None and not backend.capabilities.rollback:
        raise ValueError(f"backend {backend.name} cannot roll its cache back; use plain decoding")
    s = options.sampling
    rng = rng if rng is not None else np.random.default_rng(s.seed)
    # no drafts, forced runs coalesced: this run is `--speculate off`'s, the live line's baseline
    logits, tracker, out, prefilled = begin(backend, prompt, options, until, cost,
                                            baseline=drafting is None and coalesce)  # fmt: skip
    yield prefilled
    a = _Answer(backend=backend, out=out, tracker=tracker, rule=rule, keep=keep, context=list(prompt),
                sampling=s, rng=rng)  # fmt: skip
    first: np.ndarray | None = logits[np.newaxis]  # the prefill's row: [1, n_vocab]
    while True:
        while out.stop is None and (forced := rule.forced()):
            yield from a.forced(forced)
            a.pending += forced
            first = None  # the prefill's row is the row before them
        if out.stop is None and rule.done:
            out.stop = "eos"
        if out.stop is not None:
            break
        if first is not None:
            p = _Pass(rows=keep.bias(first, [keep.target]) if keep else first, guess=[])
        else:
            p = yield from _evaluate(a, drafting, options, coalesce)
            if p is None:  # no room in the context for what is pending
                break
        first, emitted_before = None, len(out.tokens)
        walked = yield from _walk(a, p)
        if p.evaluated:
            _account(a, p, walked, len(out.tokens) - emitted_before)
        if p.proposals is not None:
            drafting.acceptance.observe(drafting.drafter.eligible(p.proposals), out.tokens[emitted_before:])
        if p.evaluated:
            yield Progress(tracker.snapshot(len(out.tokens)))
        if out.stop is not None:
            break
    text = out.finish()
    yield Finished(tuple(out.tokens), text, tracker.snapshot(len(out.tokens), out.stop))


def _evaluate(a: _Answer, drafting: Drafting | None, options: DecodeOptions, coalesce: bool):
    """The pass over what is pending and a draft (a generator: the steps plain constrained
    decoding makes first yield their Progress); None when the context has no room."""
    backend, tracker, out = a.backend, a.tracker, a.out
    room = backend.n_ctx - backend.n_past
    if room < len(a.pending):
        out.stop = "context"
        return None
    t = time.perf_counter()
    if not coalesce:  # one pass per pending token but the last
        for tok in a.pending[:-1]:
            backend.eval([tok], n_logits=1)
            tracker.step(seconds=time.perf_counter() - t, at=backend.n_past - 1, steps=1)
            yield Progress(tracker.snapshot(len(out.tokens)))
            t = time.perf_counter()
        a.pending = a.pending[-1:]
    base, guess, label, proposals = backend.n_past, [], "", None
    if drafting is not None:
        limit = min(drafting.draft_max, room - len(a.pending), options.max_tokens - len(out.tokens) - 1)
        proposals = drafting.drafter.propose_all(a.context, max(0, limit))
        draft = drafting.drafter.choose(proposals)
        k = drafting.planner.choose(draft.label, len(draft.tokens), base) if draft.tokens else 0
        guess, label = draft.tokens[: a.rule.valid_prefix(draft.tokens[:k])], draft.source
    t_eval = time.perf_counter()
    rows = backend.eval([*a.pending, *guess], n_logits=len(guess) + 1)  # [k+1, n_vocab]
    inside = time.perf_counter() - t_eval
    if a.keep:  # row i is biased as plain decoding would bias it after guess[:i]
        rows = a.keep.bias(rows, a.keep.targets(guess))
    return _Pass(rows=rows, guess=guess, label=label, proposals=proposals, base=base, t=t,
                 evaluated=len(a.pending), inside=inside, coalesced=len(a.pending) - 1)  # fmt: skip


def _walk(a: _Answer, p: _Pass):
    """Emit what one pass's rows decide (a generator of events); returns what it found
    (_Walked). Leaves in a.pending what the next pass must read."""
    rule, out, guess = a.rule, a.out, p.guess
    k, i, accepted, coalesced, foresaw = len(p.guess), 0, 0, 0, False
    a.pending = []
    while out.stop is None:
        forced = rule.forced() if i else []
        if forced:
            j = 0
            while j < len(forced) and i + j < k and guess[i + j] == forced[j]:
                j += 1
            yield from a.forced(forced)
            coalesced += j  # in the cache with the draft, and no draw
            i += j
            if j < len(forced):
                a.pending = forced[j:]
                break
            continue
        if rule.done:
            out.stop = "eos"
            break
        m, y = rule.verify(p.rows, guess, i, a.sampling, a.rng, a.backend.eos_ids)
        if m:
            a.accept(guess[i : i + m], p.label)
            i, accepted = i + m, accepted + m
        if y is None or out.stop is not None:
            continue
        if y in a.backend.eos_ids:
            out.stop = "eos"
            foresaw = i < k and guess[i] == y
            break
        yield from a.generated(y)
        a.pending = [y]
        break
    yield from a.flush()
    return _Walked(kept=i, accepted=accepted, coalesced=coalesced, foresaw=foresaw)


def _account(a: _Answer, p: _Pass, w: _Walked, emitted: int) -> None:
    """Roll the cache back to what the pass kept and count the pass: k drafted, w.kept of
    them kept (forced or drawn), the plain one-token steps it stood for, the forced tokens
    that took no pass of their own.

    The steps are plain decoding's under the same rule with coalescence (`--speculate off`:
    a forced run rides in the pass of the token drawn before it), so the live line's
    speedup is against what the user would run instead:
        steps  = pending read - forced among them + kept drafts emitted - forced among them
                 (at least one: the pass read the token drawn before them)
    The forced tokens are priced by their runs, as plain decoding reads them (Tracker.follow
    and drawn): without their price the live line read 0.88x where --speculate off measured
    1.02x on code-textwrap-fix; counting them as steps, 1.24x; pricing each pass's share,
    1.51x where 1.23x was measured (a draft's passes cut a run into pieces dearer a row)."""
    k, n = len(p.guess), p.evaluated
    a.backend.truncate(p.base + n + w.kept)
    rejected = k - w.kept - w.foresaw  # foresaw: kept < k, and the draft's token there was EOS
    kept = min(w.kept, emitted)
    forced = p.coalesced + min(w.coalesced, kept)
    steps = max(0, n + kept - forced)
    seconds = time.perf_counter() - p.t
    a.tracker.step(
        seconds=seconds, k=k, accepted=w.accepted, rejected=rejected, source=p.label, at=p.base, steps=steps,
        coalesced=p.coalesced + w.coalesced, rows=n + k, inside=p.inside,
    )  # fmt: skip
