"""The decoding loop: a generator of events; no I/O, no printing.

    prefill(prompt) -> logits of the last prompt position          # one forward pass
    repeat: token = sample(logits); stop on EOS / max_tokens / fence / full context;
            logits = eval([token])                                   # one pass per token

This is plain decoding, the baseline every accelerated path must reproduce exactly; the
speculative loop replaces the one-token step with draft-and-verify.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np

from .backends import Backend, ContextFull, TextStream
from .events import Event, Finished, Prefilled, Stats, TokenGenerated
from .prompt import FenceStream
from .sampling import Sampling, sample


@dataclass(frozen=True)
class DecodeOptions:
    max_tokens: int = 4096
    sampling: Sampling = field(default_factory=Sampling)


class PromptTooLong(ContextFull):
    pass


def prefill(backend: Backend, prompt: Sequence[int]) -> np.ndarray:
    """Start a fresh sequence; logits [n_vocab] for the token after the prompt."""
    if len(prompt) >= backend.n_ctx:
        raise PromptTooLong(0, len(prompt), backend.n_ctx)
    backend.truncate(0)
    return backend.eval(prompt, n_logits=1)[0]


def generate(
    backend: Backend,
    prompt: Sequence[int],
    options: DecodeOptions = DecodeOptions(),
    *,
    until: FenceStream | None = None,
    rng: np.random.Generator | None = None,
) -> Iterator[Event]:
    """Plain decoding. `until` filters the text and ends the run at the closing fence;
    `rng` defaults to a Generator seeded with options.sampling.seed."""
    rng = rng if rng is not None else np.random.default_rng(options.sampling.seed)
    t0 = time.perf_counter()
    logits = prefill(backend, prompt)
    t1 = time.perf_counter()
    yield Prefilled(len(prompt), t1 - t0)
    stream, tokens, pieces, passes = TextStream(backend), [], [], 1
    stop = "max_tokens"
    while len(tokens) < options.max_tokens:
        token = sample(logits, options.sampling, rng)
        if token in backend.eos_ids:
            stop = "eos"
            break
        tokens.append(token)
        text = stream.push(token)
        if until is not None:
            text = until.feed(text)
        pieces.append(text)
        yield TokenGenerated(token, text)
        if until is not None and until.closed:
            stop = "fence"
            break
        if len(tokens) == options.max_tokens:
            break
        if backend.n_past >= backend.n_ctx:
            stop = "context"
            break
        logits = backend.eval([token], n_logits=1)[0]
        passes += 1
    tail = stream.flush()
    if until is not None:
        tail = until.feed(tail) + until.close()
    pieces.append(tail)
    stats = Stats(len(prompt), len(tokens), passes, t1 - t0, time.perf_counter() - t1, stop)
    yield Finished(tuple(tokens), "".join(pieces), stats)
