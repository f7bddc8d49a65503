"""What the generation worker posts to the app (from its thread; post_message is thread-safe).
Each carries plain data; widgets render it."""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from textual.message import Message

from ..app.loading import Loaded
from ..app.session import TurnResult
from ..events import Event, Progress, Stats, TextReceived, TokenGenerated, TokensAccepted

BATCH_SECONDS = 0.05  # the worker posts streamed text at most this often


@dataclass
class Streamed(Message):
    """New text since the last batch: (text, provenance) pieces, provenance being
    "predicted", "lookup", "ngram" (accepted draft tokens) or "generated"."""

    pieces: list[tuple[str, str]]
    stats: Stats | None
    tokens: int
    elapsed: float


@dataclass
class TurnDone(Message):
    result: TurnResult


@dataclass
class TurnStopped(Message):
    """The turn ended without an answer: cancelled, or an error (one line)."""

    reason: str
    error: bool = False


@dataclass
class ModelReady(Message):
    """A model loaded (the app takes it over on its own thread), or the error that stopped it."""

    name: str
    error: str = ""
    loaded: Loaded | None = None


def batched(events: Iterable[Event]) -> Iterator[Streamed]:
    """A turn's events as Streamed messages, one every BATCH_SECONDS at most, and the last."""
    t0 = time.perf_counter()
    batch: list[tuple[str, str]] = []
    stats, tokens, last = None, 0, 0.0
    for event in events:
        if isinstance(event, TokensAccepted):
            batch.append((event.text, event.source))
            tokens += len(event.tokens)
        elif isinstance(event, TokenGenerated):
            batch.append((event.text, "generated"))
            tokens += 1
        elif isinstance(event, TextReceived):  # a server's text
            batch.append((event.text, event.source or "remote"))
            tokens += 1
        elif isinstance(event, Progress):
            stats = event.stats
        now = time.perf_counter()
        if now - last >= BATCH_SECONDS:
            yield Streamed(batch, stats, tokens, now - t0)
            batch, last = [], now
    yield Streamed(batch, stats, tokens, time.perf_counter() - t0)
