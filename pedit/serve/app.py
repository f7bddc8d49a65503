"""`pedit serve`: an OpenAI-compatible server (FastAPI) in front of one loaded model.

One model, one request at a time: requests wait their turn (at most `queue` of them; the
next gets 429 with Retry-After), never share the KV cache mid-run, and a running stream is
never interrupted. The cache keeps the last request's tokens, so a request that shares
their prefix (the same system prompt, a conversation's next turn) skips that prefill.
Secure defaults: loopback only unless an API key is set (cli/serve.py), constant-time key
comparison, a body size cap (413), a Host allowlist on loopback (DNS rebinding).
"""

from __future__ import annotations

import hmac
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, StreamingResponse
from starlette.concurrency import run_in_threadpool

from ..engine.chat import chat_draft, chat_prompt, completion_events
from ..engine.costmodel import CostModel
from ..events import Finished, Progress, Stats, TokenGenerated, TokensAccepted
from . import api

LOOPBACK_NAMES = {"127.0.0.1", "localhost", "::1", "[::1]"}


@dataclass(frozen=True)
class ServeConfig:
    model: str  # the name /v1/models lists and responses carry
    api_key: str | None = None
    queue: int = 16  # requests that may wait for the model
    max_body: int = 8 * 1024 * 1024  # bytes
    loopback: bool = True  # bound to a loopback address: check the Host header
    speculate: str = "auto"


class Model:
    """The loaded backend, its lock and its queue."""

    def __init__(self, backend, cost: CostModel | None, config: ServeConfig):
        self.backend, self.cost, self.config = backend, cost, config
        self._lock = threading.Lock()
        self._count = threading.Lock()
        self._waiting = 0
        self._cached: list[int] = []

    def enter(self) -> None:
        with self._count:
            if self._waiting >= self.config.queue:
                raise api.ApiError(429, "the server is busy: too many requests waiting", None, "rate_limit")
            self._waiting += 1
        self._lock.acquire()

    def leave(self) -> None:
        self._lock.release()
        with self._count:
            self._waiting -= 1

    def run(self, call: api.ChatCall) -> Iterator:
        """The engine's events for one call (the caller holds the model)."""
        prompt = chat_prompt(self.backend, call.messages, continue_final=call.continue_final)
        n_ctx = self.backend.n_ctx
        if len(prompt) >= n_ctx:
            too_long = f"the messages take {len(prompt)} tokens; the context is {n_ctx}"
            raise api.ApiError(400, too_long, "messages")
        room = n_ctx - len(prompt)
        options = call.options
        if options.max_tokens > room:
            options = api.DecodeOptions(room, options.sampling)
        draft = chat_draft(self.backend, call.prediction) if call.prediction else []
        events = completion_events(
            self.backend, prompt, options, draft=draft,
            speculate=self.config.speculate, cost=self.cost, reuse=self._cached,
        )  # fmt: skip
        for event in events:
            if isinstance(event, Finished):
                self._cached = (prompt + list(event.tokens))[: self.backend.n_past]
            yield event


def create_app(backend, cost: CostModel | None, config: ServeConfig) -> FastAPI:
    app = FastAPI(title="pedit serve", docs_url=None, redoc_url=None, openapi_url=None)
    model = Model(backend, cost, config)

    def fail(exc: api.ApiError) -> JSONResponse:
        headers = {"Retry-After": "1"} if exc.status == 429 else None
        return JSONResponse(exc.body(), status_code=exc.status, headers=headers)

    @app.middleware("http")
    async def guard(request: Request, call_next):
        host = (request.headers.get("host") or "").rsplit(":", 1)[0]
        if config.loopback and host not in LOOPBACK_NAMES:
            return fail(api.ApiError(400, f"Host {host!r} is not this server (loopback only)"))
        if request.url.path != "/health" and config.api_key is not None:
            given = request.headers.get("authorization", "")
            if not hmac.compare_digest(given.encode(), f"Bearer {config.api_key}".encode()):
                return fail(api.ApiError(401, "invalid API key", None, "invalid_api_key"))
        size = request.headers.get("content-length")
        if size and size.isdigit() and int(size) > config.max_body:
            return fail(api.ApiError(413, f"the request body is over {config.max_body} bytes"))
        return await call_next(request)

    @app.get("/health")
    def health():
        return {"status": "ok"}

    @app.get("/v1/models")
    def models():
        entry = {"id": config.model, "object": "model", "created": 0, "owned_by": "pedit",
                 "max_model_len": backend.n_ctx}  # fmt: skip
        return {"object": "list", "data": [entry]}

    @app.post("/v1/chat/completions")
    async def chat(request: Request):
        raw = await request.body()
        if len(raw) > config.max_body:
            return fail(api.ApiError(413, f"the request body is over {config.max_body} bytes"))
        try:
            call = api.parse_chat(json.loads(raw or b"null"), backend.n_ctx)
        except api.ApiError as exc:
            return fail(exc)
        except ValueError:
            return fail(api.ApiError(400, "the request body is not JSON"))
        if call.stream:
            try:  # waiting for the model must not block the event loop that streams its answer
                await run_in_threadpool(model.enter)
            except api.ApiError as exc:
                return fail(exc)
            return StreamingResponse(_stream(model, call, config.model), media_type="text/event-stream")
        return await run_in_threadpool(_complete, model, call, config.model, fail)

    return app


def _complete(model: Model, call: api.ChatCall, name: str, fail):
    try:
        model.enter()
    except api.ApiError as exc:
        return fail(exc)
    try:
        stop = api.StopText(call.stop)
        pieces, stats = [], None
        events = model.run(call)
        try:
            for event in events:
                if isinstance(event, TokenGenerated | TokensAccepted):
                    pieces.append(stop.feed(event.text))
                    if stop.stopped:
                        break
                elif isinstance(event, Progress | Finished):
                    stats = event.stats  # a stop string ends the run early: its figures so far
        finally:
            events.close()
        text = "".join(pieces) + stop.close()
        return api.response(api.completion_id(), name, text, stats or _none(), stop.stopped)
    except api.ApiError as exc:
        return fail(exc)
    finally:
        model.leave()


def _none() -> Stats:
    return Stats(0, 0, 0, 0.0, 0.0, "eos")


def _stream(model: Model, call: api.ChatCall, name: str) -> Iterator[str]:
    """SSE: a role chunk, content deltas, the finish chunk, the usage chunk if asked, [DONE]."""
    cid = api.completion_id()

    def sse(obj) -> str:
        return f"data: {json.dumps(obj)}\n\n"

    try:
        yield sse(api.chunk(cid, name, {"role": "assistant", "content": ""}))
        stop = api.StopText(call.stop)
        events = model.run(call)
        stats, origin = _none(), "model"
        try:
            for event in events:
                if isinstance(event, TokenGenerated | TokensAccepted):
                    text, origin = stop.feed(event.text), api.source(event)
                    if text:
                        yield sse(api.with_source(api.chunk(cid, name, {"content": text}), origin))
                    if stop.stopped:
                        break
                elif isinstance(event, Progress | Finished):
                    stats = event.stats
        finally:
            events.close()  # a client gone away: GeneratorExit here, the run stops at this pass
        tail = stop.close()
        if tail:  # held back for the stop strings: the last event's text
            yield sse(api.with_source(api.chunk(cid, name, {"content": tail}), origin))
        yield sse(api.chunk(cid, name, {}, api.finish_reason(stats, stop.stopped)))
        if call.include_usage:
            yield sse(api.chunk(cid, name, {}, with_usage=api.usage(stats)))
        yield "data: [DONE]\n\n"
    finally:
        model.leave()
