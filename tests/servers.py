"""Real HTTP servers on free loopback ports for the serve and remote-backend tests: uvicorn
running `pedit serve`'s app in a thread, a bare http.server that answers every request
with one status (a server that is down, busy or broken, as a client meets it), scripted
OpenAI-like servers whose answers are given bytes (a stream cut short, garbage, a trickle,
an endless stream), and a server command in its own process, waited for until it lists its
models."""

from __future__ import annotations

import contextlib
import http.server
import json
import os
import subprocess
import threading
import time
from pathlib import Path

from pedit.bench.servers import ready


class Uvicorn:
    """An ASGI app under uvicorn on 127.0.0.1, port 0 (any free one)."""

    def __init__(self, app, config=None):
        """`config`: a uvicorn.Config for `app` (default: uvicorn's own, on port 0)."""
        import uvicorn

        config = config or uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.02)
        self.port = self.server.servers[0].sockets[0].getsockname()[1]
        self.root = f"http://127.0.0.1:{self.port}"
        self.url = self.root + "/v1"

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)


class Served:
    """A stdlib HTTP server on a free loopback port, in a thread, until stop()."""

    def serve(self, handler) -> str:
        """Start serving with `handler`; the base URL of its /v1."""
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class Fixed(Served):
    """Answers every request with `status` and an OpenAI-shaped error body (after `delay`
    seconds); counts the requests."""

    def __init__(self, status: int, delay: float = 0.0, headers: dict | None = None):
        owner = self
        self.requests = 0

        class Handler(http.server.BaseHTTPRequestHandler):
            def _answer(self):
                owner.requests += 1
                self.rfile.read(int(self.headers.get("content-length") or 0))
                time.sleep(delay)
                body = json.dumps({"error": {"message": f"status {status}", "type": "x", "param": None,
                                             "code": None}}).encode()  # fmt: skip
                self.send_response(status)
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                with contextlib.suppress(OSError):  # the client gave up (a timeout test)
                    self.wfile.write(body)

            do_GET = do_POST = _answer

            def log_message(self, *args):
                pass

        self.url = self.serve(Handler)


def started(args: list[str], port: int, cache: Path) -> subprocess.Popen:
    """`args` (a server command on `port`) in its own process, offline, with `cache` as the
    user cache; returned once its /v1/models answers (bench/servers.ready)."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "XDG_CACHE_HOME": str(cache)}
    proc = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return ready(proc, port, 300)


def chunk(text: str, finish: str | None = None) -> bytes:
    """One server-sent event of an OpenAI chat stream: a delta of `text`, and the
    finish_reason `finish` (the last one's)."""
    choice = {"index": 0, "delta": {"content": text}, "finish_reason": finish}
    body = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m", "choices": [choice]}
    return f"data: {json.dumps(body)}\n\n".encode()


DONE = b"data: [DONE]\n\n"
MODELS = json.dumps({"object": "list", "data": [{"id": "m", "object": "model", "owned_by": "someone"}]})


class Scripted(Served):
    """An OpenAI-like server whose answers are scripted bytes: GET (/v1/models) answers
    `models` (one model, "m", by default); every POST (a chat request) answers 200 with
    `kind` and the pieces of `body` written one by one, `every` seconds apart, the
    connection closed after the last (no content-length). `body` may be endless (an
    itertools.repeat): the server writes until the client goes. `posts` counts the chat
    requests, `wrote` the pieces written."""

    def __init__(self, body, *, every: float = 0.0, kind: str = "text/event-stream", models: str = MODELS):
        owner = self
        self.posts = self.wrote = 0

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(models.encode())))
                self.end_headers()
                self.wfile.write(models.encode())

            def do_POST(self):
                owner.posts += 1
                self.rfile.read(int(self.headers.get("content-length") or 0))
                self.send_response(200)
                self.send_header("content-type", kind)
                self.end_headers()
                with contextlib.suppress(OSError):  # the client gave up (a limit test)
                    for i, piece in enumerate(body):
                        if every and i:
                            time.sleep(every)
                        self.wfile.write(piece)
                        owner.wrote += 1

            def log_message(self, *args):
                pass

        self.url = self.serve(Handler)


class Streaming(Scripted):
    """An OpenAI-shaped server that lists one model and answers every chat request with
    a stream of `deltas` (server-sent events); `finish` the last chunk's finish_reason,
    and `done` whether `data: [DONE]` ends it: without both, a stream a proxy or a crash
    cut short."""

    def __init__(self, deltas: list[str], *, finish: str | None = "stop", done: bool = True):
        last = len(deltas) - 1
        events = [chunk(text, finish if i == last else None) for i, text in enumerate(deltas)]
        super().__init__(events + ([DONE] if done else []))
