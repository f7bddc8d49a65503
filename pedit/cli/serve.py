"""`pedit serve`: the OpenAI-compatible server (pedit/serve/), run by uvicorn."""

from __future__ import annotations

import ipaddress
from typing import Annotated

import typer

from ..errors import UsageError
from . import options as o

SERVED_AGAIN = "pedit serve runs a local model: -b openai (a server) cannot be served again"


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


Host = Annotated[str, typer.Option(help="Address to bind.")]
Port = Annotated[int, typer.Option(min=0, max=65535, help="Port (0: any free one).")]
ApiKey = Annotated[
    str | None,
    typer.Option(
        envvar="PEDIT_API_KEY",
        help="Require `Authorization: Bearer KEY` (off loopback too). Prefer setting PEDIT_API_KEY: "
        "a command line is visible to every user (ps).",
    ),
]
Queue = Annotated[
    int, typer.Option(min=0, help="Requests that may wait while one runs (more: 429; 0: none wait).")
]
MaxBody = Annotated[int, typer.Option(min=1, help="Largest request body, in MB (more: 413).")]
MaxConnections = Annotated[
    int, typer.Option(min=1, help="Open connections at most (one more is closed as it arrives).")
]
HeaderTimeout = Annotated[
    float, typer.Option(min=0.1, help="Seconds a request's headers may take to arrive.")
]
BodyTimeout = Annotated[float, typer.Option(min=0.1, help="Seconds its body may take (more: 408).")]
# the HTTP connection's (not the resident model's `keep_alive` setting: a name of its own)
KeepAlive = Annotated[int, typer.Option("--keep-alive", min=1, help="Seconds an idle connection stays open.")]
CorsOrigin = Annotated[
    list[str] | None,
    typer.Option(help="Let a web page from this origin call the API (repeatable; none: no CORS)."),
]


def serve_command(
    model: o.Model = None,
    backend: o.Backend = None,
    n_ctx: o.NCtx = None,
    threads: o.Threads = None,
    host: Host = "127.0.0.1",
    port: Port = 8000,
    api_key: ApiKey = None,
    queue: Queue = 16,
    max_body: MaxBody = 1,
    max_connections: MaxConnections = 256,
    header_timeout: HeaderTimeout = 10.0,
    body_timeout: BodyTimeout = 30.0,
    http_keep_alive: KeepAlive = 5,
    cors_origin: CorsOrigin = None,
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
    While it runs, pedit's commands with the same model and settings use its model, and
    load none (keep_alive 0: they do not).
    """
    _refuse(backend, host, api_key)
    import uvicorn
    from rich.console import Console

    from ..app import config
    from ..app.loading import load_with_cost
    from ..serve.app import ServeConfig, create_app
    from ..serve.limits import Limits, uvicorn_config
    from ..tools import grammarcheck
    from ..ui.render import shown

    given = {"model": model, "backend": backend, "n_ctx": n_ctx, "threads": threads, "speculate": speculate}
    settings = config.resolve(given)
    # a fix request's tools (serve/tools.py), built while the model loads, not on the first
    err = Console(stderr=True)
    loaded = shown(load_with_cost(settings, beside=grammarcheck.warm), err)
    try:
        if loaded.remote:  # backend = "openai" in a config file
            raise UsageError(SERVED_AGAIN)
        serving = ServeConfig(
            model=settings.model, api_key=api_key, queue=queue, max_body=max_body * 1024 * 1024,
            body_seconds=body_timeout, loopback=is_loopback(host), speculate=settings.speculate,
            cors=tuple(cors_origin or ()),
        )  # fmt: skip
        limits = Limits(
            connections=max_connections, header_seconds=header_timeout, keep_alive_seconds=http_keep_alive
        )
        app = create_app(loaded.backend, loaded.cost, serving, _resident(settings, loaded, err))
        uvicorn.Server(uvicorn_config(app, host, port, limits)).run()
    finally:
        loaded.close()


def _resident(settings, loaded, err):
    """What starts the commands' resident model beside the server (resident/server.beside):
    `pedit fix` and the others with the same model and load settings use the server's
    model while it runs, and load none of their own. None with keep_alive 0."""
    from ..resident.client import resident_for

    load = resident_for(settings)
    if load is None:
        return None

    def start(turn):
        from ..resident.server import beside

        got = beside(loaded, load, turn, "pedit serve", say=err.print)
        if got is not None:
            err.print("pedit commands with these settings use this server's model (pedit daemon status)")
        return got

    return start


def _refuse(backend: str | None, host: str, api_key: str | None) -> None:
    """What cannot be served, said before anything loads."""
    if backend == "openai":
        raise UsageError(SERVED_AGAIN)
    from ..backends.openai import key_problem

    if api_key and (problem := key_problem(api_key)):
        raise UsageError(f"--api-key: {problem}")
    if not is_loopback(host) and not api_key:
        raise UsageError(f"--host {host} is not a loopback address: give --api-key (or PEDIT_API_KEY) too")
