"""What the generation worker posts to the app (from its thread; post_message is thread-safe).
Each carries plain data; widgets render it."""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message

from ..app.loading import Loaded
from ..app.session import TurnResult
from ..events import Stats


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
