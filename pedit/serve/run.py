"""One request at a time on the loaded model: the queue, the engine's run, and its answer
whole or streamed, the same for /v1/chat/completions and /v1/completions.

    enter (wait in the queue: 429 when full) -> start (prompt tokens, draft, the engine's
    events) -> Answer (text pieces through the stop strings, each with its source)
    -> one response, or server-sent events -> leave
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator

from ..engine.chat import chat_draft, chat_prompt, completion_events
from ..engine.costmodel import CostModel
from ..engine.decode import DecodeOptions
from ..events import Event, Finished, Progress, Stats, TokenGenerated, TokensAccepted
from . import api


class Model:
    """The loaded backend, its lock and its queue."""

    def __init__(self, backend, cost: CostModel | None, queue: int, speculate: str):
        self.backend, self.cost, self.queue, self.speculate = backend, cost, queue, speculate
        self._lock = threading.Lock()
        self._count = threading.Lock()
        self._waiting = 0

    def enter(self) -> None:
        with self._count:
            if self._waiting >= self.queue:
                raise api.ApiError(429, "the server is busy: too many requests waiting", None, "rate_limit")
            self._waiting += 1
        self._lock.acquire()

    def leave(self) -> None:
        self._lock.release()
        with self._count:
            self._waiting -= 1

    def start(self, call: api.Call) -> Iterator[Event]:
        """The engine's events for one call (the caller holds the model). A prompt the
        context cannot take is refused here, before any event. The prefix the prompt
        shares with what the cache holds (the previous request's) is not read again."""
        prompt, draft = tokens(self.backend, call)
        n_ctx = self.backend.n_ctx
        if len(prompt) >= n_ctx:
            too_long = f"{call.param}: {len(prompt)} tokens; the context is {n_ctx}"
            raise api.ApiError(400, too_long, call.param)
        options = call.options
        if options.max_tokens > n_ctx - len(prompt):
            options = DecodeOptions(n_ctx - len(prompt), options.sampling)
        return completion_events(
            self.backend, prompt, options, draft=draft, speculate=self.speculate, cost=self.cost
        )


def tokens(backend, call: api.Call) -> tuple[list[int], list[int]]:
    """The prompt's tokens and the answer's predicted tokens (empty: no prediction)."""
    if call.messages is None:  # /v1/completions: plain text, no chat template, no end of turn
        draft = backend.tokenize(call.prediction, special=False) if call.prediction else []
        return backend.tokenize(call.text, special=False), draft
    prompt = chat_prompt(backend, call.messages, continue_final=call.continue_final)
    return prompt, chat_draft(backend, call.prediction) if call.prediction else []


class Answer:
    """One run's text through the stop strings, as (text, source) pieces; then its figures
    (the figures so far if a stop string ended it early) and finish reason."""

    def __init__(self, events: Iterator[Event], stops: tuple[str, ...]):
        self.events, self.stop, self.stats = events, api.StopText(stops), Stats(0, 0, 0, 0.0, 0.0, "eos")

    def pieces(self) -> Iterator[tuple[str, str]]:
        origin = "model"
        try:
            for event in self.events:
                if isinstance(event, TokenGenerated | TokensAccepted):
                    text, origin = self.stop.feed(event.text), api.source(event)
                    if text:
                        yield text, origin
                    if self.stop.stopped:
                        break
                elif isinstance(event, Progress | Finished):
                    self.stats = event.stats
        finally:
            self.events.close()
        tail = self.stop.close()
        if tail:  # held back for the stop strings: the last event's text
            yield tail, origin

    @property
    def finish_reason(self) -> str:
        return api.finish_reason(self.stats, self.stop.stopped)


def complete(model: Model, call: api.Call, shape: api.Shape) -> dict:
    """The whole answer (the caller holds the model)."""
    answer = Answer(model.start(call), call.stop)
    text = "".join(piece for piece, _ in answer.pieces())
    return shape.response(text, answer.stats, answer.stop.stopped)


def stream(answer: Answer, shape: api.Shape, include_usage: bool) -> Iterator[str]:
    """Server-sent events: the opening chunks, a content chunk per piece, the finish chunk,
    the usage chunk if asked, [DONE]. Closing it closes the run."""
    for obj in shape.opening():
        yield sse(obj)
    pieces = answer.pieces()
    try:
        for text, origin in pieces:
            yield sse(shape.content(text, origin))
    finally:
        pieces.close()
    yield sse(shape.finish(answer.finish_reason))
    if include_usage:
        yield sse(shape.usage_chunk(answer.stats))
    yield "data: [DONE]\n\n"


def sse(obj: dict) -> str:
    return f"data: {json.dumps(obj)}\n\n"
