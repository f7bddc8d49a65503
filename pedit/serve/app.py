"""`pedit serve`: an OpenAI-compatible server (FastAPI) in front of one loaded model.

One model, one request at a time (run.py): requests wait their turn (at most `queue` of
them; the next gets 429 with Retry-After), never share the KV cache mid-run, and a running
stream is never interrupted. The cache keeps the last request's tokens, so a request that
shares their prefix (the same system prompt, a conversation's next turn) skips that
prefill. Secure defaults: loopback only unless an API key is set (cli/serve.py),
constant-time key comparison, a body size cap (413), a Host allowlist on loopback (DNS
rebinding).
"""

from __future__ import annotations

import hmac
import json
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass

import anyio
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, StreamingResponse
from starlette.concurrency import run_in_threadpool

from ..engine.costmodel import CostModel
from . import api
from .run import Answer, Model, complete, stream

LOOPBACK_NAMES = {"127.0.0.1", "localhost", "::1", "[::1]"}


@dataclass(frozen=True)
class ServeConfig:
    model: str  # the name /v1/models lists and responses carry
    api_key: str | None = None
    queue: int = 16  # requests that may wait for the model
    max_body: int = 8 * 1024 * 1024  # bytes
    loopback: bool = True  # bound to a loopback address: check the Host header
    speculate: str = "auto"
    cors: tuple[str, ...] = ()  # origins a browser page may call from (none: no CORS headers)


def fail(exc: api.ApiError) -> JSONResponse:
    headers = {"Retry-After": "1"} if exc.status == 429 else None
    return JSONResponse(exc.body(), status_code=exc.status, headers=headers)


def create_app(backend, cost: CostModel | None, config: ServeConfig) -> FastAPI:
    app = FastAPI(title="pedit serve", docs_url=None, redoc_url=None, openapi_url=None)
    model = Model(backend, cost, config.queue, config.speculate)

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

    if config.cors:  # outside the guard: a browser's preflight carries no key
        from starlette.middleware.cors import CORSMiddleware

        app.add_middleware(CORSMiddleware, allow_origins=list(config.cors), allow_methods=["GET", "POST"],
                           allow_headers=["authorization", "content-type"])  # fmt: skip

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
        return await _serve(request, model, config, api.parse_chat, api.ChatShape)

    @app.post("/v1/completions")
    async def completions(request: Request):
        return await _serve(request, model, config, api.parse_completion, api.TextShape)

    return app


async def _serve(request: Request, model: Model, config: ServeConfig, parse: Callable, shape: type):
    """One POST: parse the body, wait for the model off the event loop (the loop must go on
    streaming the running answer), answer whole or streamed."""
    raw = await request.body()
    if len(raw) > config.max_body:
        return fail(api.ApiError(413, f"the request body is over {config.max_body} bytes"))
    try:
        call = parse(json.loads(raw or b"null"), model.backend.n_ctx)
    except api.ApiError as exc:
        return fail(exc)
    except ValueError:
        return fail(api.ApiError(400, "the request body is not JSON"))
    try:
        await run_in_threadpool(model.enter)
    except api.ApiError as exc:
        return fail(exc)
    return await _answer(model, call, shape(config.model))


async def _answer(model: Model, call: api.Call, shape: api.Shape):
    """The answer, the model held: whole (released here) or streamed (released by the
    stream's response, however it ends)."""
    try:
        if call.stream:
            events = await run_in_threadpool(model.start, call)
            lines = stream(Answer(events, call.stop), shape, call.include_usage)
            return HeldStream(lines, model.leave)
        body = await run_in_threadpool(complete, model, call, shape)
        model.leave()
        return body
    except BaseException as exc:  # a refusal, an error, or the request cancelled (the client gone)
        model.leave()
        if isinstance(exc, api.ApiError):
            return fail(exc)
        raise


class HeldStream(StreamingResponse):
    """Server-sent events from a generator that holds the model. However the response ends
    (its last event, an error, the client gone: starlette stops iterating when a send
    fails or the disconnect arrives), the generator is closed, which stops the run at the
    pass it is in, and the model is released, once. The generator runs in worker threads
    (a pass must not block the event loop); anyio waits for the thread of a cancelled call
    to finish, so the generator is never closed while it runs."""

    def __init__(self, lines: Iterator[str], release: Callable[[], None]):
        self._lines, self._release = lines, release
        super().__init__(self._pull(), media_type="text/event-stream")

    async def _pull(self) -> AsyncIterator[str]:
        while (line := await run_in_threadpool(next, self._lines, None)) is not None:
            yield line

    async def __call__(self, scope, receive, send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            with anyio.CancelScope(shield=True):  # cancelled or not, close the run before releasing
                await run_in_threadpool(self._lines.close)
            self._release()
