"""Constrained decoding under a grammar: plain, coalesced, and coalesced with drafts.

The rule (grammar.py): forced tokens are emitted with no draw; otherwise one draw from the
row masked by the grammar. Three ways to run it, one output:
    plain      every emitted token, forced or drawn, gets its own forward pass
    coalesce   forced tokens get none: they wait in `pending` (emitted, not yet in the KV
               cache) and ride in the next pass, whose logits are needed only for its
               last position (.txt's "Coalescence")
    + drafts   that pass also verifies a draft: rows = eval([*pending, d_1 .. d_k])
The walk over one pass, rows[i] the logits after pending + d_1..d_i (rows: [k+1, n_vocab]):
    i = 0; repeat:
        F = forced tokens here (i > 0: the pass began where nothing was forced)
        F: the draft tokens equal to F's first ones are already in the cache (i advances);
           the rest of F waits for the next pass; end of the walk if any is left
        else: y = draw(mask(rows[i])); y == d_{i+1}: accept, i += 1; else emit y, end
    truncate the cache to base + len(pending) + i
Drafts are cut at the first token the grammar rejects (validate), so every draft token
a row is verified against is one the masked distribution can produce. The matcher only
ever consumes emitted tokens: no roll-back. Lossless: each emitted token is the rule's
output at its state, with one draw per drawn token, whatever pass produced the row.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence

import numpy as np

from ..backends import Backend
from ..events import Event, Finished, Progress, TokenGenerated, TokensAccepted
from .costmodel import CostModel
from .decode import DecodeOptions, begin
from .drafters.compose import Composite
from .grammar import Matcher
from .keepbias import KeepBias
from .planner import DRAFT_MAX, Acceptance, Planner
from .prompt import FenceStream
from .sampling import Sampling, sample

FORCED = "grammar"  # the provenance of forced tokens (TokensAccepted.source)


def draw(row: np.ndarray, matcher: Matcher, s: Sampling, rng: np.random.Generator) -> int:
    """The rule's drawn token from one row of logits ([n_vocab], modified in place).
    Greedy: the raw argmax when the grammar allows it (masking cannot change it), else the
    masked argmax."""
    if s.greedy:
        y = int(np.argmax(row))
        if matcher.allows(y):
            return y
    return sample(matcher.mask(row), s, rng)


def constrained_generate(
    backend: Backend,
    prompt: Sequence[int],
    options: DecodeOptions,
    matcher: Matcher,
    *,
    coalesce: bool = True,
    drafter: Composite | None = None,
    planner: Planner | None = None,
    acceptance: Acceptance | None = None,
    draft_max: int = DRAFT_MAX,
    cost: CostModel | None = None,
    until: FenceStream | None = None,
    rng: np.random.Generator | None = None,
    keep: KeepBias | None = None,
) -> Iterator[Event]:
    """Events of one answer under `matcher`'s grammar. Drafts need coalescence and a
    backend that rolls back."""
    if drafter is not None and not (coalesce and backend.capabilities.rollback and planner and acceptance):
        raise ValueError("drafts under a grammar need coalescence, a planner and a backend that rolls back")
    s = options.sampling
    rng = rng if rng is not None else np.random.default_rng(s.seed)
    logits, tracker, out, prefilled = begin(backend, prompt, options, until, cost)
    yield prefilled
    context = list(prompt)
    pending: list[int] = []  # emitted, not yet in the KV cache
    coalesced = 0  # forced tokens that took no pass of their own: len(pending) - 1 per pass

    def emit(tokens: Sequence[int], source: str) -> Event:
        """Emit tokens (stopping where the Emitter stops), consume them, keep the state."""
        pieces, taken = [], []
        for tok in tokens:
            pieces.append(out.emit(tok))
            taken.append(tok)
            if out.stop:
                break
        matcher.consume(taken)
        context.extend(taken)
        if keep:
            keep.advance(taken)
        if source == "generated":
            return TokenGenerated(taken[0], pieces[0])
        return TokensAccepted(tuple(taken), "".join(pieces), source)

    rows: np.ndarray | None = logits[np.newaxis]  # the prefill's row: [1, n_vocab]
    while True:
        while out.stop is None and (forced := matcher.forced()):
            yield emit(forced, FORCED)
            pending += forced
            rows = None  # the prefill's row is the row before them
        if out.stop is not None:
            break
        if matcher.done:
            out.stop = "eos"
            break
        guess: list[int] = []
        base, t = backend.n_past, time.perf_counter()
        label, proposals = "", None
        if rows is None:  # evaluate what is pending (and a draft)
            room = backend.n_ctx - backend.n_past
            if room < len(pending):
                out.stop = "context"
                break
            if not coalesce:  # one pass per pending token but the last
                for tok in pending[:-1]:
                    backend.eval([tok], n_logits=1)
                    tracker.step(0, 0, 0, time.perf_counter() - t, "", backend.n_past - 1, 1)
                    yield Progress(tracker.snapshot(len(out.tokens)))
                    t = time.perf_counter()
                pending, base = pending[-1:], backend.n_past
            if drafter is not None:
                limit = max(0, min(draft_max, room - len(pending), options.max_tokens - len(out.tokens) - 1))
                proposals = drafter.propose_all(context, limit)
                draft = drafter.choose(proposals)
                k = planner.choose(draft.label, len(draft.tokens), base) if draft.tokens else 0
                guess = draft.tokens[: matcher.valid_prefix(draft.tokens[:k])]
                label = draft.source
            rows = backend.eval([*pending, *guess], n_logits=len(guess) + 1)  # [k+1, n_vocab]
            coalesced += len(pending) - 1  # plain decoding: a pass for each of them
            if keep:
                rows = keep.bias(rows, keep.targets(guess))
        elif keep:
            rows = keep.bias(rows, [keep.target])
        k, i, accepted, after = len(guess), 0, 0, []
        emitted_before = len(out.tokens)
        while out.stop is None:
            forced = matcher.forced() if i else []
            if forced:
                j = 0
                while j < len(forced) and i + j < k and guess[i + j] == forced[j]:
                    j += 1
                yield emit(forced, FORCED)
                coalesced += j  # in the cache with the draft, and no draw
                i += j
                if j < len(forced):
                    after = forced[j:]
                    break
                continue
            if matcher.done:
                out.stop = "eos"
                break
            y = draw(rows[i], matcher, s, rng)
            if y in backend.eos_ids:
                out.stop = "eos"
                break
            if i < k and y == guess[i]:
                yield emit([y], label)
                i, accepted = i + 1, accepted + 1
                continue
            yield emit([y], "generated")
            after = [y]
            break
        if pending or guess:  # a pass was made
            backend.truncate(base + len(pending) + i)
            seconds = time.perf_counter() - t
            tracker.step(k, accepted, k - i, seconds, label, base, len(pending) + i)
        if proposals is not None:
            acceptance.observe(drafter.eligible(proposals), out.tokens[emitted_before:])
        pending, rows = after, None
        tracker.coalesced = coalesced
        yield Progress(tracker.snapshot(len(out.tokens)))
        if out.stop is not None:
            break
    text = out.finish()
    yield Finished(tuple(out.tokens), text, tracker.snapshot(len(out.tokens), out.stop))
