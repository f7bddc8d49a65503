"""What the decoder yields. Shells render these; the decoder never prints."""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import TypeVar

R = TypeVar("R")


@dataclass(frozen=True, slots=True, kw_only=True)
class Stats:
    """One run, with OpenAI's usage names where they exist."""

    prompt_tokens: int
    completion_tokens: int
    forward_passes: int  # backend eval calls, the prefill included
    prefill_seconds: float
    decode_seconds: float  # from the end of the prefill to the last token
    stop_reason: str  # "eos", "fence", "max_tokens", "context" ("" while running)
    accepted_prediction_tokens: int = 0  # draft tokens the model accepted
    rejected_prediction_tokens: int = 0  # draft tokens verified and rejected
    accepted_by_drafter: dict[str, int] = field(default_factory=dict)
    plain_step_seconds: float | None = None  # a plain one-token step, measured in this run
    speedup: float | None = None  # completion_tokens * plain_step_seconds / decode_seconds
    coalesced_tokens: int = 0  # tokens a grammar forced, emitted without a forward pass of their own
    forced_tokens: int = 0  # tokens a grammar forced: no draw, whatever pass read them
    cached_tokens: int = 0  # prompt tokens found in the backend's cache, not read again
    # Where the answer's time goes:
    rows_read: int = 0  # rows the answer's passes read (not the prefill's): the model's own, drafts, forced
    passes_by_size: dict[int, int] = field(default_factory=dict)  # the answer's passes by the rows each read
    backend_seconds: float = 0.0  # of decode_seconds, inside the backend's eval (the rest: pedit's own work)
    rejections: int = 0  # the answer's passes that rejected part of their draft
    # what the rejected rows cost: each rejecting pass's seconds times its share of rows rejected
    rejected_seconds: float = 0.0
    tool_seconds: float = 0.0  # the tools' work before the run (scoring swaps, reading an intent)
    tool_passes: int = 0  # the model's eval calls in it (in forward_passes too)

    @property
    def prefill_tokens_per_second(self) -> float:
        """Prompt tokens read (the cached ones were not) per second of prefill."""
        read = self.prompt_tokens - self.cached_tokens
        return read / self.prefill_seconds if self.prefill_seconds else 0.0

    @property
    def decode_tokens_per_second(self) -> float:
        return self.completion_tokens / self.decode_seconds if self.decode_seconds else 0.0

    @property
    def outside_seconds(self) -> float:
        """Of the answer's time, what pedit spent outside the backend (drafting, planning,
        drawing tokens, events)."""
        return max(0.0, self.decode_seconds - self.backend_seconds)

    @property
    def reading_seconds(self) -> float | None:
        """The reading-rate ideal: the answer's tokens at the rate this run read its prompt,
        completion_tokens / prefill_tokens_per_second (what a perfect draft verified as fast
        as a prompt is read would take); None when the run read under 32 prompt tokens."""
        read = self.prompt_tokens - self.cached_tokens
        if read < 32 or not self.prefill_seconds:
            return None
        return self.completion_tokens * self.prefill_seconds / read

    @property
    def overall_speedup(self) -> float | None:
        """The speedup with the prompt counted: plain decoding reads the same prompt (the
        same caches) and then decodes in speedup * decode_seconds, so
            (prefill + speedup * decode) / (prefill + decode)
        (what the user waits for, the model's load and Python's start-up aside)."""
        if self.speedup is None or not self.decode_seconds:
            return None
        before = self.prefill_seconds + self.tool_seconds  # plain decoding reads and scores the same
        return (before + self.speedup * self.decode_seconds) / (before + self.decode_seconds)

    @staticmethod
    def total(runs: Sequence[Stats]) -> Stats:
        """Several runs of one file added up (one run: its own figures). The speedup of the
        whole is plain time over decode time, each summed:
            sum(plain_step_i * tokens_i) / sum(decode_i)"""
        if len(runs) == 1:
            return runs[0]
        by: dict[str, int] = {}
        sizes: dict[int, int] = {}
        for st in runs:
            for k, v in st.accepted_by_drafter.items():
                by[k] = by.get(k, 0) + v
            for n, c in st.passes_by_size.items():
                sizes[n] = sizes.get(n, 0) + c
        decode = sum(x.decode_seconds for x in runs)
        plain = sum(x.plain_step_seconds * x.completion_tokens for x in runs if x.plain_step_seconds)
        tokens = sum(x.completion_tokens for x in runs)
        return Stats(
            prompt_tokens=sum(x.prompt_tokens for x in runs),
            completion_tokens=tokens,
            forward_passes=sum(x.forward_passes for x in runs),
            prefill_seconds=sum(x.prefill_seconds for x in runs),
            decode_seconds=decode,
            stop_reason=runs[-1].stop_reason if runs else "",
            accepted_prediction_tokens=sum(x.accepted_prediction_tokens for x in runs),
            rejected_prediction_tokens=sum(x.rejected_prediction_tokens for x in runs),
            accepted_by_drafter=by,
            plain_step_seconds=plain / tokens if plain and tokens else None,
            speedup=plain / decode if plain and decode else None,
            coalesced_tokens=sum(x.coalesced_tokens for x in runs),
            forced_tokens=sum(x.forced_tokens for x in runs),
            cached_tokens=sum(x.cached_tokens for x in runs),
            rows_read=sum(x.rows_read for x in runs),
            passes_by_size=sizes,
            backend_seconds=sum(x.backend_seconds for x in runs),
            rejections=sum(x.rejections for x in runs),
            rejected_seconds=sum(x.rejected_seconds for x in runs),
            tool_seconds=sum(x.tool_seconds for x in runs),
            tool_passes=sum(x.tool_passes for x in runs),
        )

    def to_dict(self) -> dict:
        d = asdict(self)
        d["prefill_tokens_per_second"] = self.prefill_tokens_per_second
        d["decode_tokens_per_second"] = self.decode_tokens_per_second
        d["overall_speedup"] = self.overall_speedup
        d["outside_seconds"] = self.outside_seconds
        d["reading_seconds"] = self.reading_seconds
        return d


@dataclass(frozen=True, slots=True)
class Prefilled:
    prompt_tokens: int
    seconds: float
    reused: int = 0  # prompt tokens already in the backend's cache (not evaluated again)


@dataclass(frozen=True, slots=True)
class TokenGenerated:
    """A token the model produced itself (plain decoding: every token; speculative: the
    token after a rejected draft, or the free extra token after an accepted one)."""

    token: int
    text: str  # the new complete text it adds (may be "" mid-character)


@dataclass(frozen=True, slots=True)
class TokensAccepted:
    """Tokens emitted without a draw of their own: draft tokens the model verified and
    accepted, all proposed by one drafter (source: its name), or tokens a grammar forced
    (source "grammar", engine/constrained.py)."""

    tokens: tuple[int, ...]
    text: str
    source: str  # "predicted", "lookup", "ngram", "grammar"


@dataclass(frozen=True, slots=True)
class TextReceived:
    """Text from a remote server (engine/remote.py): which of its tokens were drafted is
    the server's business; `source` is the drafter when the server says (`pedit serve`),
    else None."""

    text: str
    source: str | None = None


@dataclass(frozen=True, slots=True)
class Progress:
    """After every forward pass: the run so far (stop_reason is "")."""

    stats: Stats


@dataclass(frozen=True, slots=True)
class Finished:
    tokens: tuple[int, ...]  # every generated token, stop token excluded
    text: str  # their text
    stats: Stats


Event = Prefilled | TokenGenerated | TokensAccepted | TextReceived | Progress | Finished


def finish(stream: Generator[object, None, R]) -> R:
    """A generator run to its end, what it yields unseen (a tool's own read of the model, a
    model's load with no one to show it); its return value."""
    try:
        while True:
            next(stream)
    except StopIteration as done:
        return done.value
    finally:
        stream.close()


def drain(events: Iterable[Event], each: Callable[[Event], object] | None = None) -> Finished:
    """Run a decoder to its end and return its Finished event; every event before it goes
    to `each` (which may raise to stop the run: the generator is closed either way)."""
    try:
        for event in events:
            if isinstance(event, Finished):
                return event
            if each is not None:
                each(event)
    finally:
        close = getattr(events, "close", None)
        if close is not None:
            close()
    raise RuntimeError("the decoder ended without a Finished event")
