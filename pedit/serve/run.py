"""One request at a time on the loaded model: the queue, the engine's run, and its answer
whole or streamed, the same for /v1/chat/completions and /v1/completions.

    admit / wait (the model's turn; 429 when the queue is full) -> start, on the model's
    worker (prompt tokens, the draft and its variants, the engine's events) -> Answer (text
    pieces through the stop strings, each with its source) -> one response, or server-sent
    events -> leave
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
from collections.abc import Iterator

import anyio
import anyio.to_thread

from ..engine.chat import chat_draft, chat_prompt, completion_events
from ..engine.costmodel import CostModel, repriced
from ..engine.decode import DecodeOptions
from ..events import Event, Finished, Prefilled, Progress, Stats, TokenGenerated, TokensAccepted
from . import api, tools

log = logging.getLogger("pedit.serve")


class Model:
    """The loaded backend, whose turn it is, and the one worker its passes run on.

    Every request waits for its turn on the event loop (an anyio semaphore: a waiter holds
    no thread), at most `queue` of them while one runs; the holder's work (tokenizing, the
    engine's passes) runs in a worker thread through a limiter of one, so the model never
    waits for a thread however many requests wait for the model."""

    def __init__(self, backend, cost: CostModel | None, queue: int, speculate: str):
        self.backend, self.cost, self.queue, self.speculate = backend, cost, queue, speculate
        self._turn = anyio.Semaphore(1)
        self._worker = anyio.CapacityLimiter(1)
        self.waiting = 0

    def admit(self) -> bool:
        """True: the model is this request's now. False: it must wait() (a place in the
        queue is free). A full queue: 429."""
        try:
            self._turn.acquire_nowait()
            return True
        except anyio.WouldBlock:
            pass
        if self.waiting >= self.queue:
            raise api.ApiError(429, "the server is busy: too many requests waiting", None, "rate_limit")
        return False

    async def wait(self) -> None:
        """Wait for the model's turn (cancellable: a cancelled waiter holds nothing)."""
        self.waiting += 1
        try:
            await self._turn.acquire()
        finally:
            self.waiting -= 1

    def leave(self) -> None:
        self._turn.release()

    @contextlib.contextmanager
    def held_from(self, token) -> Iterator[None]:
        """The model's turn for work on a thread outside the event loop (`token`'s): a
        command's request that the server answers as the resident model (resident/server.py,
        Beside). It waits as a request does, in line with the requests, and holds the model
        until the work ends."""
        anyio.from_thread.run(self._turn.acquire, token=token)
        try:
            yield
        finally:
            anyio.from_thread.run_sync(self._turn.release, token=token)

    async def run(self, fn, *args):
        """fn(*args) on the model's worker (the caller holds the model). Cancelled, it
        still waits for fn to return: the backend is never left mid-pass."""
        return await anyio.to_thread.run_sync(fn, *args, limiter=self._worker)

    def start(self, call: api.Call) -> Answer:
        """The answer to one call (the caller holds the model). A prompt the
        context cannot take is refused here, before any event. The prefix the prompt
        shares with what the cache holds (the previous request's) is not read again. The
        cost model is priced again by the passes the requests before it made."""
        self.cost = repriced(self.cost)
        tooled = tools.propose(call.messages, call.prediction) if call.messages and call.prediction else None
        if tooled is not None:
            call = dataclasses.replace(call, prediction=tooled.draft)
        prompt, draft = tokens(self.backend, call)
        variants = [chat_draft(self.backend, v) for v in tooled.variants] if tooled is not None else []
        n_ctx = self.backend.n_ctx
        if len(prompt) >= n_ctx:
            too_long = f"{call.param}: {len(prompt)} tokens; the context is {n_ctx}"
            raise api.ApiError(400, too_long, call.param)
        options = call.options
        if options.max_tokens > n_ctx - len(prompt):
            options = DecodeOptions(n_ctx - len(prompt), options.sampling)
        events = completion_events(
            self.backend,
            prompt,
            options,
            draft=draft,
            variants=variants,
            speculate=self.speculate,
            cost=self.cost,
        )
        return Answer(events, call.stop, tooled)


def tokens(backend, call: api.Call) -> tuple[list[int], list[int]]:
    """The prompt's tokens and the answer's predicted tokens (empty: no prediction)."""
    if call.messages is None:  # /v1/completions: plain text, no chat template, no end of turn
        draft = backend.tokenize(call.prediction, special=False) if call.prediction else []
        return backend.tokenize(call.text, special=False), draft
    prompt = chat_prompt(backend, call.messages, continue_final=call.continue_final)
    return prompt, chat_draft(backend, call.prediction) if call.prediction else []


# an answer's figures before its prompt is read
NO_RUN = Stats(
    prompt_tokens=0,
    completion_tokens=0,
    forward_passes=0,
    prefill_seconds=0.0,
    decode_seconds=0.0,
    stop_reason="eos",
)


class Answer:
    """One run's text through the stop strings, as (text, source) pieces; then its figures
    and finish reason. A stop string ends the run between the engine's figures: the
    figures are then those of the last pass, with the tokens counted up to the stop."""

    def __init__(self, events: Iterator[Event], stops: tuple[str, ...], tooled: tools.Tooled | None = None):
        self.events, self.stop, self.stats = events, api.StopText(stops), NO_RUN
        self.tokens = 0  # the answer's tokens so far
        self.tooled = tooled  # the tool that drafted, and the check of the answer (tools.py)

    def tools(self, text: str) -> dict:
        """The extension field's word on the tools: which drafted, and the check's verdict."""
        if self.tooled is None or not self.tooled.tool:
            return {}
        verdict = self.tooled.verdict(text)
        return {"tool": self.tooled.tool, **({"check": verdict} if verdict else {})}

    def pieces(self) -> Iterator[tuple[str, str]]:
        origin = "model"
        try:
            for event in self.events:
                if isinstance(event, TokenGenerated | TokensAccepted):
                    self.tokens += 1 if isinstance(event, TokenGenerated) else len(event.tokens)
                    text, origin = self.stop.feed(event.text), api.source(event)
                    if text:
                        yield text, origin
                    if self.stop.stopped:
                        break
                elif isinstance(event, Prefilled):  # the prompt read: one pass
                    n, seconds = event.prompt_tokens, event.seconds
                    self.stats = dataclasses.replace(
                        NO_RUN, prompt_tokens=n, forward_passes=1, prefill_seconds=seconds,
                        stop_reason="", cached_tokens=event.reused,
                    )  # fmt: skip
                elif isinstance(event, Progress | Finished):
                    self.stats = event.stats
        finally:
            self.events.close()
        if self.stop.stopped:
            self.stats = dataclasses.replace(self.stats, completion_tokens=self.tokens)
        tail = self.stop.close()
        if tail:  # held back for the stop strings: the last event's text
            yield tail, origin

    @property
    def finish_reason(self) -> str:
        return api.finish_reason(self.stats, self.stop.stopped)


def complete(answer: Answer, shape: api.Shape) -> dict:
    """The whole answer (the caller holds the model)."""
    text = "".join(piece for piece, _ in answer.pieces())
    shape.tools = answer.tools(text)
    return shape.response(text, answer.stats, answer.stop.stopped)


def stream(answer: Answer, shape: api.Shape, include_usage: bool) -> Iterator[str]:
    """Server-sent events: the opening chunks, a content chunk per piece, the finish chunk,
    the usage chunk if asked, [DONE]. Closing it closes the run. A run that fails midway
    ends with an error event in OpenAI's shape (clients raise it), not a silent stop."""
    for obj in shape.opening():
        yield sse(obj)
    pieces, texts = answer.pieces(), []
    try:
        for text, origin in pieces:
            texts.append(text)
            yield sse(shape.content(text, origin))
    except Exception:
        log.exception("a streamed answer failed")
        yield sse(api.ApiError(500, "the answer failed midway (the server's log has the cause)").body())
        return
    finally:
        pieces.close()
    yield sse(shape.finish(answer.finish_reason))
    if include_usage:
        shape.tools = answer.tools("".join(texts))
        yield sse(shape.usage_chunk(answer.stats))
    yield "data: [DONE]\n\n"


def sse(obj: dict) -> str:
    return f"data: {json.dumps(obj)}\n\n"
