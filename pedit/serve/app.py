"""`pedit serve`: an OpenAI-compatible server (FastAPI) in front of one loaded model.

One model, one request at a time (run.py): requests wait their turn on the event loop (at
most `queue` of them; the next gets 429 with Retry-After; a waiter whose client hangs up
leaves the queue), never share the KV cache mid-run, and a running stream is never
interrupted. The cache keeps the last request's tokens, so a request that shares their
prefix (the same system prompt, a conversation's next turn) skips that prefill.

Secure defaults (docs/serve.md, "Limits and failure modes"): loopback only unless an API
key is set (cli/serve.py), constant-time key comparison, a Host allowlist on loopback (DNS
rebinding), a POST must be `application/json` and a browser's Origin must be one --cors
allows (a web page cannot make the server run), the body read in pieces up to its cap
(413 whatever its framing) within a deadline (408), a bounded number of connections, each
given a deadline for its request's headers (limits.py). Every error, the framework's own
(404, 405) included, is in OpenAI's shape.
"""

from __future__ import annotations

import contextlib
import hmac
import logging
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass

import anyio
import anyio.lowlevel
import anyio.to_thread
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, StreamingResponse
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect

from ..engine.costmodel import CostModel
from . import api, schema
from .run import Answer, Model, complete, stream

LOOPBACK_NAMES = {"127.0.0.1", "localhost", "::1", "[::1]"}
log = logging.getLogger("pedit.serve")


@dataclass(frozen=True)
class ServeConfig:
    model: str  # the name /v1/models lists and responses carry
    api_key: str | None = None
    queue: int = 16  # requests that may wait for the model while one runs
    max_body: int = 1024 * 1024  # bytes: a 32k-token context's prompt and prediction fit thrice
    body_seconds: float = 30.0  # to send the whole body, once the headers are in
    loopback: bool = True  # bound to a loopback address: check the Host header
    speculate: str = "auto"
    cors: tuple[str, ...] = ()  # origins a browser page may call from (none: no CORS headers)


def fail(exc: api.ApiError, *, close: bool = False) -> JSONResponse:
    """The error in OpenAI's shape; `close` (or an error whose body was not read whole): the
    connection is closed after it."""
    headers = {"Retry-After": "1"} if exc.status == 429 else {}
    if close or exc.closes:
        headers["Connection"] = "close"
    return JSONResponse(exc.body(), status_code=exc.status, headers=headers)


def refusal(config: ServeConfig, method: str, path: str, headers: Headers) -> api.ApiError | None:
    """Why a request is refused before it reaches an endpoint (None: it is not)."""
    host = (headers.get("host") or "").rsplit(":", 1)[0]
    if config.loopback and host not in LOOPBACK_NAMES:
        return api.ApiError(400, f"Host {host!r} is not this server (loopback only)")
    origin = headers.get("origin")
    if origin is not None and origin not in config.cors:  # a browser page, not one --cors allows
        return api.ApiError(403, f"requests from the web page {origin!r} are not allowed (see --cors-origin)")
    if path != "/health" and config.api_key is not None:
        given = headers.get("authorization", "")
        if not hmac.compare_digest(given.encode(), f"Bearer {config.api_key}".encode()):
            return api.ApiError(401, "invalid API key", None, "invalid_api_key")
    if method == "POST":
        kind = headers.get("content-type", "").split(";")[0].strip().lower()
        if kind != "application/json":
            return api.ApiError(415, "the request body must be sent as Content-Type: application/json")
        size = headers.get("content-length")
        if size and size.isdigit() and int(size) > config.max_body:
            return api.ApiError(413, f"the request body is over {config.max_body} bytes")
    return None


class Guard:
    """ASGI middleware: refusal() before any endpoint runs (nothing of the body is read)."""

    def __init__(self, app, config: ServeConfig):
        self.app, self.config = app, config

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            why = refusal(self.config, scope["method"], scope["path"], Headers(scope=scope))
            if why is not None:  # the body (if any) unread: the connection ends with the answer
                return await fail(why, close=True)(scope, receive, send)
        await self.app(scope, receive, send)


def create_app(
    backend, cost: CostModel | None, config: ServeConfig, resident: Callable[[Callable], object] | None = None
) -> FastAPI:
    """`resident`: given the model's turn (a context manager for another thread's work), the
    commands' resident model started beside the server for as long as it runs (an object
    with close(), or None); cli/serve.py's, resident/server.beside."""

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI):
        token = anyio.lowlevel.current_token()
        opened = (
            await anyio.to_thread.run_sync(resident, lambda: model.held_from(token)) if resident else None
        )
        try:
            yield
        finally:
            if opened is not None:  # on a thread: its running request still takes turns on this loop
                await anyio.to_thread.run_sync(opened.close)

    app = FastAPI(title="pedit serve", docs_url=None, redoc_url=None, openapi_url=None, lifespan=lifespan)
    model = app.state.model = Model(backend, cost, config.queue, config.speculate)
    app.add_middleware(Guard, config=config)
    if config.cors:  # outside the guard: a browser's preflight carries no key
        from starlette.middleware.cors import CORSMiddleware

        app.add_middleware(CORSMiddleware, allow_origins=list(config.cors), allow_methods=["GET", "POST"],
                           allow_headers=["authorization", "content-type"])  # fmt: skip

    @app.exception_handler(api.ApiError)
    async def refused(request: Request, exc: api.ApiError):  # what the endpoints raise: 400, 408, 413, 429
        return fail(exc)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException):  # 404, 405, ... in OpenAI's shape
        return fail(api.ApiError(exc.status_code, f"{request.method} {request.url.path}: {exc.detail}"))

    @app.exception_handler(Exception)
    async def bug(request: Request, exc: Exception):  # pedit's fault: logged, and said so
        log.exception("%s %s failed", request.method, request.url.path)
        return fail(api.ApiError(500, "the server failed on this request (its log has the cause)"))

    @app.get("/health")
    async def health():
        return {"status": "ok"}

    @app.get("/v1/models")
    async def models():
        entry = {"id": config.model, "object": "model", "created": 0, "owned_by": "pedit",
                 "max_model_len": backend.n_ctx}  # fmt: skip
        return {"object": "list", "data": [entry]}

    @app.post("/v1/chat/completions")
    async def chat(request: Request):
        return await _serve(request, model, config, schema.parse_chat, api.ChatShape)

    @app.post("/v1/completions")
    async def completions(request: Request):
        return await _serve(request, model, config, schema.parse_completion, api.TextShape)

    return app


async def _serve(request: Request, model: Model, config: ServeConfig, parse: Callable, shape: type):
    """One POST: read and parse the body, wait for the model's turn, answer whole or
    streamed. An ApiError raised here is answered by the app's handler (create_app)."""
    call = parse(await read_body(request, config), model.backend.n_ctx)
    if not model.admit() and not await wait_while_connected(request, model):
        raise api.ApiError(499, "the client went away while it waited")  # no one reads it
    return await _answer(model, call, shape(config.model, call.draft_from))


async def read_body(request: Request, config: ServeConfig) -> bytes:
    """The body in pieces, whatever its framing (a length or chunks): 413 at the first
    byte over the cap, 408 if it takes longer than the deadline (a client sending a byte at
    a time holds a connection no longer). At most the cap and one piece in memory."""
    body = bytearray()
    with anyio.move_on_after(config.body_seconds) as deadline:
        try:
            async for piece in request.stream():
                body += piece
                if len(body) > config.max_body:
                    raise api.ApiError(413, f"the request body is over {config.max_body} bytes")
        except ClientDisconnect:
            raise api.ApiError(499, "the client went away while it sent the body") from None
    if deadline.cancelled_caught:
        raise api.ApiError(408, f"the request body took over {config.body_seconds:g} s to arrive")
    return bytes(body)


async def wait_while_connected(request: Request, model: Model) -> bool:
    """Wait for the model's turn while watching the connection: True once the model is
    this request's; False if the client hung up first (its place is given up, nothing held)."""
    gone = False
    async with anyio.create_task_group() as group:

        async def watch() -> None:
            nonlocal gone
            while (await request.receive())["type"] != "http.disconnect":
                pass
            gone = True
            group.cancel_scope.cancel()

        group.start_soon(watch)
        await model.wait()
        group.cancel_scope.cancel()
    return not gone


async def _answer(model: Model, call: api.Call, shape: api.Shape):
    """The answer, the model held: whole (released here) or streamed (released by the
    stream's response, however it ends)."""
    try:
        answer: Answer = await model.run(model.start, call)
        if call.stream:
            return HeldStream(stream(answer, shape, call.include_usage), model)
        body = await model.run(complete, answer, shape)
        model.leave()
        return body
    except BaseException:  # a refusal, an error, or the request cancelled (the client gone)
        model.leave()
        raise


class HeldStream(StreamingResponse):
    """Server-sent events from a generator that holds the model. However the response ends
    (its last event, an error, the client gone: starlette stops iterating when a send
    fails or the disconnect arrives), the generator is closed, which stops the run at the
    pass it is in, and the model is released, once. The generator runs on the model's
    worker (a pass must not block the event loop); a cancelled call still waits for its
    thread, so the generator is never closed while it runs. Each write has a deadline
    (PEDIT_STALL_SECONDS, 30 s): a client that stops reading does not hold the model."""

    def __init__(self, lines: Iterator[str], model: Model):
        self._lines, self._model = lines, model
        super().__init__(self._pull(), media_type="text/event-stream")

    async def _pull(self) -> AsyncIterator[str]:
        while (line := await self._model.run(next, self._lines, None)) is not None:
            yield line

    async def __call__(self, scope, receive, send) -> None:
        from ..app.config import stall_seconds

        deadline = stall_seconds()

        async def sent(message) -> None:  # a client that takes nothing for the deadline is dropped
            with anyio.fail_after(deadline):
                await send(message)

        try:
            await super().__call__(scope, receive, sent)
        except TimeoutError:
            pass  # its stream ends here: the run is closed and the model released below
        finally:
            with anyio.CancelScope(shield=True):  # cancelled or not, close the run before releasing
                await self._model.run(self._lines.close)
            self._model.leave()
