"""Speculative decoding: draft, verify in one forward pass, keep what the model agrees with.

    prefill(prompt); token = sample(prefill logits)               # as plain decoding
    repeat:
        proposals = every drafter's guess for what follows context      # cheap, no model
        draft     = the composed choice; k = planner(draft)              # k = 0: a plain step
        rows      = eval([token, d_1 .. d_k])  -> logits [k+1, n_vocab]  # ONE forward pass
        m, y      = verify(rows, d_1..d_k)      # d_1..d_m accepted, y the model's own token
        truncate the KV cache to drop d_m+1 .. d_k; emit d_1..d_m, y; token = y
        score every proposal against the emitted tokens (acceptance estimates)

Lossless: verify() emits exactly what plain decoding would, one draw per emitted token, and
the Emitter shared with plain decoding stops at exactly the same token. With a keep-bias
(keepbias.py) each row is biased as plain decoding with the same bias would bias it.
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
from .keepbias import KeepBias
from .planner import DRAFT_MAX, Acceptance, Planner
from .prompt import FenceStream
from .sampling import sample
from .verify import verify


def speculative_generate(
    backend: Backend,
    prompt: Sequence[int],
    options: DecodeOptions,
    drafter: Composite,
    planner: Planner,
    acceptance: Acceptance,
    *,
    draft_max: int = DRAFT_MAX,
    cost: CostModel | None = None,
    until: FenceStream | None = None,
    rng: np.random.Generator | None = None,
    keep: KeepBias | None = None,
) -> Iterator[Event]:
    if not backend.capabilities.rollback:
        raise ValueError(f"backend {backend.name} cannot roll its cache back; use plain decoding")
    s = options.sampling
    rng = rng if rng is not None else np.random.default_rng(s.seed)
    logits, tracker, out, prefilled = begin(backend, prompt, options, until, cost)
    yield prefilled
    context = list(prompt)
    token = sample(keep.bias(logits, [keep.target]) if keep else logits, s, rng)
    if token in backend.eos_ids:
        out.stop = "eos"
    else:
        context.append(token)
        if keep:
            keep.advance([token])
        yield TokenGenerated(token, out.emit(token))
    while out.stop is None:
        room = backend.n_ctx - backend.n_past  # KV positions left; `token` needs one
        if room < 1:
            out.stop = "context"
            break
        limit = max(0, min(draft_max, room - 1, options.max_tokens - len(out.tokens) - 1))
        proposals = drafter.propose_all(context, limit)
        draft = drafter.choose(proposals)
        k = planner.choose(draft.label, len(draft.tokens), backend.n_past) if draft.tokens else 0
        guess = draft.tokens[:k]
        base = backend.n_past
        t = time.perf_counter()
        rows = backend.eval([token, *guess], n_logits=k + 1)  # [k+1, n_vocab]
        if keep:  # row i is biased as plain decoding would bias it after guess[:i]
            rows = keep.bias(rows, keep.targets(guess))
        m, y = verify(rows, guess, s, rng, backend.eos_ids)
        backend.truncate(base + 1 + m)  # keep `token` and the accepted drafts
        foresaw_stop = m < k and guess[m] == y  # the draft foresaw EOS: not a rejection
        seconds = time.perf_counter() - t
        emitted: list[int] = []
        if m:
            pieces = []
            for tok in guess[:m]:
                pieces.append(out.emit(tok))
                emitted.append(tok)
                if out.stop:  # the closing fence may come inside an accepted run
                    break
            yield TokensAccepted(tuple(emitted), "".join(pieces), draft.source)
        if out.stop is None:
            if y in backend.eos_ids:
                out.stop = "eos"
            else:
                emitted = [*emitted, y]
                yield TokenGenerated(y, out.emit(y))
        context.extend(emitted)
        if keep:
            keep.advance(emitted)
        acceptance.observe(drafter.eligible(proposals), emitted)
        # plain decoding would evaluate `token` and the accepted drafts: 1 + m one-token steps
        tracker.step(k, m, k - m - foresaw_stop, seconds, draft.source, base, 1 + min(m, len(emitted)))
        token = y
        yield Progress(tracker.snapshot(len(out.tokens)))
    text = out.finish()
    yield Finished(tuple(out.tokens), text, tracker.snapshot(len(out.tokens), out.stop))
