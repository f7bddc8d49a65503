"""`pedit serve`: the OpenAI-compatible server (pedit/serve/), run by uvicorn."""

from __future__ import annotations

import ipaddress
from typing import Annotated

import typer

from ..errors import UsageError
from . import options as o


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def serve_command(
    model: o.Model = None,
    backend: o.Backend = None,
    n_ctx: o.NCtx = None,
    threads: o.Threads = None,
    host: Annotated[str, typer.Option(help="Address to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port (0: any free one).")] = 8000,
    api_key: Annotated[
        str | None,
        typer.Option(
            envvar="PEDIT_API_KEY",
            help="Require `Authorization: Bearer KEY` (off loopback too). Prefer setting PEDIT_API_KEY: "
            "a command line is visible to every user (ps).",
        ),
    ] = None,
    queue: Annotated[
        int, typer.Option(min=0, help="Requests that may wait while one runs (more: 429; 0: none wait).")
    ] = 16,
    max_body: Annotated[int, typer.Option(min=1, help="Largest request body, in MB (more: 413).")] = 1,
    max_connections: Annotated[
        int, typer.Option(min=1, help="Open connections at most (one more is closed as it arrives).")
    ] = 256,
    header_timeout: Annotated[
        float, typer.Option(min=0.1, help="Seconds a request's headers may take to arrive.")
    ] = 10.0,
    body_timeout: Annotated[
        float, typer.Option(min=0.1, help="Seconds its body may take (more: 408).")
    ] = 30.0,
    keep_alive: Annotated[int, typer.Option(min=1, help="Seconds an idle connection stays open.")] = 5,
    cors_origin: Annotated[
        list[str] | None,
        typer.Option(help="Let a web page from this origin call the API (repeatable; none: no CORS)."),
    ] = None,
    speculate: o.Speculate = None,
):
    """Serve the model over OpenAI's API: /v1/chat/completions, /v1/completions, /v1/models.

    A request's `prediction` (OpenAI's Predicted Outputs) is the draft pedit verifies, as
    a file is for `pedit edit`; usage reports accepted and rejected prediction tokens.
    A chat may continue its last assistant message (vLLM's continue_final_message);
    streamed chunks say where their tokens came from ("pedit": {"source": ...}).
    One request at a time; a client that hangs up stops its run (or leaves the queue).
    Binds 127.0.0.1; any other address needs --api-key; a web page's request is refused
    unless --cors-origin names its origin. Every bound and what a client sees when it is
    reached: docs/serve.md, "Limits and failure modes".
    """
    if backend == "openai":
        raise UsageError("pedit serve runs a local model: -b openai (a server) cannot be served again")
    from ..backends.openai import key_problem

    if api_key and (problem := key_problem(api_key)):
        raise UsageError(f"--api-key: {problem}")
    if not is_loopback(host) and not api_key:
        raise UsageError(f"--host {host} is not a loopback address: give --api-key (or PEDIT_API_KEY) too")
    import uvicorn
    from rich.console import Console

    from .. import models
    from ..app import calibration, config
    from ..serve.app import ServeConfig, create_app
    from ..serve.limits import Limits, uvicorn_config
    from ..ui.render import RichReporter

    settings = config.resolve(
        {"model": model, "backend": backend, "n_ctx": n_ctx, "threads": threads, "speculate": speculate,
         "draft_max": None, "keep_bias": None, "spelling": None}
    )  # fmt: skip
    reporter = RichReporter(Console(stderr=True))
    loaded = models.load(
        settings.get("model"), settings.get("backend"), reporter,
        n_ctx=settings.get("n_ctx"), n_threads=settings.get("threads"),
    )  # fmt: skip
    try:
        cost = calibration.measure_cost(loaded) if settings.get("speculate") == "auto" else None
        name, mode = settings.get("model"), settings.get("speculate")
        serving = ServeConfig(
            name, api_key, queue, max_body * 1024 * 1024, body_timeout,
            loopback=is_loopback(host), speculate=mode, cors=tuple(cors_origin or ()),
        )  # fmt: skip
        limits = Limits(max_connections, header_timeout, keep_alive)
        uvicorn.Server(uvicorn_config(create_app(loaded, cost, serving), host, port, limits)).run()
    finally:
        loaded.close()
