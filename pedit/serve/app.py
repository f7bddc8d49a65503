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
from collections.abc import Callable, Iterator
from dataclasses import dataclass

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
    if not call.stream:
        try:
            return await run_in_threadpool(complete, model, call, shape(config.model))
        except api.ApiError as exc:
            return fail(exc)
        finally:
            model.leave()
    try:
        events = await run_in_threadpool(model.start, call)
    except api.ApiError as exc:
        model.leave()
        return fail(exc)
    lines = stream(Answer(events, call.stop), shape(config.model), call.include_usage)
    return StreamingResponse(_held(lines, model), media_type="text/event-stream")


def _held(lines: Iterator[str], model: Model) -> Iterator[str]:
    """The stream, releasing the model when it ends (or is closed: a client gone away)."""
    try:
        yield from lines
    finally:
        lines.close()
        model.leave()
