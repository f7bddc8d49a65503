"""Plain decoding, and what every decoding loop shares. Generators of events; no I/O.

    prefill(prompt) -> logits of the last prompt position          # one forward pass
    repeat: token = sample(logits); stop on EOS / max_tokens / fence / full context;
            logits = eval([token])                                   # one pass per token

Plain decoding is the baseline every accelerated path must reproduce exactly. The
speculative loop (speculative.py) replaces the one-token step with draft-and-verify and
shares `Emitter` (what emitting a token means, stop conditions included) and `Tracker`
(the run's figures) with it, so both stop at exactly the same token.
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..backends import Backend, ContextFull, TextStream
from ..events import Event, Finished, Prefilled, Progress, Stats, TokenGenerated
from .costmodel import CostModel
from .keepbias import KeepBias
from .prompt import FenceStream
from .sampling import Sampling, sample


@dataclass(frozen=True)
class DecodeOptions:
    max_tokens: int = 4096
    sampling: Sampling = field(default_factory=Sampling)

    def __post_init__(self):
        if self.max_tokens < 1:
            raise ValueError("max_tokens must be >= 1")


class PromptTooLong(ContextFull):
    pass


def hold(backend: Backend, stem: Sequence[int]) -> int:
    """Make the cache hold exactly `stem`, read by one eval from position 0: kept when the
    backend says it was read so (`first_read`), else read again; returns the tokens read.
    A real backend rounds a batch differently from another split of the same tokens, and
    a near-tie then goes the other way: a start read alone is what a fresh reading gives,
    bit for bit, whatever ran before (the stems of app/jobs.py and machine/prefixcache.py)."""
    n = len(stem)
    if n and backend.first_read == n and list(backend.held[:n]) == list(stem):
        backend.truncate(n)
        return 0
    backend.truncate(0)
    if n:
        backend.eval(stem)
    return n


def prefill(backend: Backend, prompt: Sequence[int]) -> tuple[np.ndarray, int]:
    """Start the sequence `prompt`: (logits [n_vocab] for the token after it, prompt tokens
    reused). The longest prefix `prompt` shares with what the backend's cache holds
    (`backend.held`: whatever ran before) stays in the cache and only the rest is
    evaluated, at least one token (its logits are needed). A session's next turn shares the
    conversation so far; a file's next paragraph, and the next file, the system prompt
    and the instruction."""
    if len(prompt) >= backend.n_ctx:
        raise PromptTooLong(0, len(prompt), backend.n_ctx)
    keep = min(common_prefix(backend.held, prompt), len(prompt) - 1)
    backend.truncate(keep)
    return backend.eval(prompt[keep:], n_logits=1)[0], keep


def begin(
    backend: Backend,
    prompt: Sequence[int],
    options: DecodeOptions,
    until: FenceStream | None,
    cost: CostModel | None = None,
    *,
    baseline: bool = False,
) -> tuple[np.ndarray, Tracker, Emitter, Prefilled]:
    """What every decoding loop starts with: the prefill (logits [n_vocab] of the next
    token), the run's figures, the emitter, and the Prefilled event to yield. baseline:
    this run is what the live speedup measures against (Tracker)."""
    t0 = time.perf_counter()
    logits, reused = prefill(backend, prompt)
    tracker = Tracker(len(prompt), time.perf_counter() - t0, cost, reused, baseline=baseline)
    event = Prefilled(len(prompt), tracker.prefill_seconds, reused)
    return logits, tracker, Emitter(backend, options.max_tokens, until), event


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """Length of the longest common prefix of two token sequences."""
    n = min(len(a), len(b))
    if n == 0:
        return 0
    x, y = np.asarray(a[:n]), np.asarray(b[:n])
    differ = np.flatnonzero(x != y)
    return int(differ[0]) if differ.size else n


class Emitter:
    """Emitting a token: its text (UTF-8 safe, filtered through the closing fence) and
    whether the run must stop after it ("fence", "max_tokens")."""

    def __init__(self, backend: Backend, max_tokens: int, until: FenceStream | None):
        self.tokens: list[int] = []
        self.stop: str | None = None
        self._pieces: list[str] = []
        self._stream = TextStream(backend)
        self._until = until
        self._max = max_tokens

    def emit(self, token: int) -> str:
        self.tokens.append(token)
        text = self._stream.push(token)
        if self._until is not None:
            text = self._until.feed(text)
            if self._until.closed:
                self.stop = "fence"
        if self.stop is None and len(self.tokens) >= self._max:
            self.stop = "max_tokens"
        self._pieces.append(text)
        return text

    def finish(self) -> str:
        """All the text: what emit() returned plus what was held back until the end."""
        tail = self._stream.flush()
        if self._until is not None:
            tail = self._until.feed(tail) + self._until.close()
            if self._until.closed:  # closed by its last line (held until the end)
                self.stop = "fence"
        self._pieces.append(tail)
        return "".join(self._pieces)


class Tracker:
    """The run's figures, kept as counters (a Progress event costs O(1), whatever the run's
    length). The plain-decoding time behind `speedup` is what plain decoding would take
    here: with a cost model, the plain steps the passes stood for, each priced at its
    place in the context,
        plain = sum_steps cost(1, c_i)
    and without one, the median of this run's one-token passes per token. Not scaled by
    the run's own passes: right after a roll-back or a batch of another size a pass is
    slower than a plain step, and every such scaling tried overstated plain decoding
    (docs/engine.md#figures, scripts/live_speedup.py)."""

    def __init__(
        self,
        prompt_tokens: int,
        prefill_seconds: float,
        cost: CostModel | None = None,
        cached: int = 0,
        *,
        baseline: bool = False,
    ):
        self.prompt_tokens, self.prefill_seconds, self.cost = prompt_tokens, prefill_seconds, cost
        # this run is plain decoding as `--speculate off` runs it (a grammar's forced runs
        # coalesced): its own time is the baseline, speedup 1 (the fallback below, a median
        # step per token, would count the forced tokens as steps: 1.87x on code-textwrap-fix)
        self.baseline = baseline
        self.cached = cached  # prompt tokens found in the cache
        self.start = time.perf_counter()
        self.passes = 1
        self.accepted = self.rejected = 0
        self.coalesced = 0  # tokens a grammar forced, emitted without a pass of their own
        self.forced = 0  # tokens a grammar forced (no draw), in whatever pass they were read
        self.by_drafter: dict[str, int] = {}
        self._plain: list[float] = []  # seconds of one-token passes, sorted
        self._plain_priced = 0.0
        self.rows = 0  # rows the answer's passes read (the prefill's not)
        self.sizes: dict[int, int] = {}  # passes by the rows they read
        self.inside = 0.0  # seconds of those passes inside the backend's eval
        self.rejections, self.rejected_seconds = 0, 0.0  # passes that rejected drafts; their rows' cost
        self._single = False  # the last pass read one token and drafted none
        self._open, self._open_at = 0, 0  # the forced run since the last drawn token (follow)

    def step(
        self,
        *,
        seconds: float,
        k: int = 0,
        accepted: int = 0,
        rejected: int = 0,
        source: str = "",
        at: int = 0,
        steps: int = 0,
        coalesced: int = 0,
        rows: int = 1,
        inside: float | None = None,
    ) -> None:
        """One forward pass over `rows` tokens (k of them drafted, the rest pending: the
        last emitted token, and forced ones) after `at` cached tokens, taking `seconds`,
        `inside` of them in the backend's eval (None: all), that did the work of `steps`
        plain one-token steps (the tokens it stood for that a grammar did not force: those
        are priced by their runs, `follow`); `coalesced` of the tokens it emitted or read
        were forced and took no pass of their own."""
        self.rows += rows
        self.sizes[rows] = self.sizes.get(rows, 0) + 1
        self.inside += seconds if inside is None else inside
        self.passes += 1
        self.coalesced += coalesced
        self.accepted += accepted
        self.rejected += rejected
        if rejected:  # the rows thrown away cost their share of the pass
            self.rejections += 1
            self.rejected_seconds += (seconds if inside is None else inside) * rejected / rows
        if accepted:
            self.by_drafter[source] = self.by_drafter.get(source, 0) + accepted
        if k == 0:
            bisect.insort(self._plain, seconds)
        single = rows == 1 and k == 0 and inside is not None  # as plain decoding steps
        if self.cost is not None and self.cost.log is not None and inside is not None:
            self.cost.log.add(rows, at, inside)  # what this size really costs, for the next run
            if single and self._single:  # after another: nothing rolled back in between
                self.cost.log.step(at, inside)
        self._single = single
        if self.cost is not None:
            # plain decoding: `steps` one-token steps at contexts at .. at + steps - 1 (cost is
            # linear in the context: the middle one's price is their mean)
            self._plain_priced += steps * self.cost.cost(1, at + (steps - 1) / 2) if steps else 0.0

    def follow(self, forced: int, at: int) -> None:
        """`forced` tokens a grammar forced, after `at` tokens of context: the run they
        extend rides, under plain decoding with coalescence, in the pass that reads the
        token drawn before it, and costs it the rows it adds, with the last row's logits
        alone (the forced rows need none),
            cost_last(1 + m, c) - cost(1, c)        for a run of m forced tokens after c,
        however this run's own passes split it (priced per pass, a run cut into a draft's
        five-row passes cost 2 ms a row more than the one 49-row pass plain reads it in:
        the live line read 1.51x where 1.23x was measured on code-textwrap-fix)."""
        if not self._open:
            self._open_at = at
        self._open += forced

    def drawn(self) -> None:
        """A token drawn (sampled, or a draft's verified): the forced run before it closes.
        A run still open at the end is never read (the answer ends on it): no price."""
        if self._open and self.cost is not None:
            c = self._open_at
            self._plain_priced += self.cost.cost_last(1 + self._open, c) - self.cost.cost(1, c)
        self._open = 0

    def plain_seconds(self, completion_tokens: int, decode: float | None = None) -> float | None:
        """What plain decoding would have spent decoding this run's tokens (`decode`: this
        run's own seconds so far, which a baseline run's is)."""
        if self.baseline and decode is not None:
            return decode
        if self.cost is not None and self._plain_priced > 0:
            return self._plain_priced
        if self._plain:
            return self._plain[len(self._plain) // 2] * completion_tokens
        return None

    def snapshot(self, completion_tokens: int, stop: str = "") -> Stats:
        decode = time.perf_counter() - self.start
        plain = self.plain_seconds(completion_tokens, decode)
        return Stats(
            prompt_tokens=self.prompt_tokens,
            completion_tokens=completion_tokens,
            forward_passes=self.passes,
            prefill_seconds=self.prefill_seconds,
            decode_seconds=decode,
            stop_reason=stop,
            accepted_prediction_tokens=self.accepted,
            rejected_prediction_tokens=self.rejected,
            accepted_by_drafter=dict(self.by_drafter),
            plain_step_seconds=plain / completion_tokens if plain and completion_tokens else None,
            speedup=plain / decode if plain and decode > 0 else None,
            coalesced_tokens=self.coalesced,
            forced_tokens=self.forced,
            cached_tokens=self.cached,
            rows_read=self.rows,
            passes_by_size=dict(self.sizes),
            rejections=self.rejections,
            rejected_seconds=self.rejected_seconds,
            backend_seconds=self.inside,
        )


def generate(
    backend: Backend,
    prompt: Sequence[int],
    options: DecodeOptions = DecodeOptions(),
    *,
    until: FenceStream | None = None,
    rng: np.random.Generator | None = None,
    keep: KeepBias | None = None,
) -> Iterator[Event]:
    """Plain decoding. `until` filters the text and ends the run at the closing fence;
    `rng` defaults to a Generator seeded with options.sampling.seed; `keep`: a keep-bias on
    the file's next token (keepbias.py)."""
    rng = rng if rng is not None else np.random.default_rng(options.sampling.seed)
    logits, tracker, out, prefilled = begin(backend, prompt, options, until, baseline=True)
    yield prefilled
    while True:
        token = sample(keep.bias(logits, [keep.target]) if keep else logits, options.sampling, rng)
        if token in backend.eos_ids:
            out.stop = "eos"
            break
        if keep:
            keep.advance([token])
        yield TokenGenerated(token, out.emit(token))
        if out.stop:
            break
        if backend.n_past >= backend.n_ctx:
            out.stop = "context"
            break
        t = time.perf_counter()
        logits = backend.eval([token], n_logits=1)[0]
        tracker.step(seconds=time.perf_counter() - t)
        yield Progress(tracker.snapshot(len(out.tokens)))
    text = out.finish()
    yield Finished(tuple(out.tokens), text, tracker.snapshot(len(out.tokens), out.stop))
