"""Real HTTP servers on free loopback ports, in threads, for the remote backend's tests:
uvicorn running `pedit serve`'s app, and a bare http.server that answers every request
with one status (a server that is down, busy or broken, as a client meets it)."""

from __future__ import annotations

import contextlib
import http.server
import json
import threading
import time


class Uvicorn:
    """An ASGI app under uvicorn on 127.0.0.1, port 0 (any free one)."""

    def __init__(self, app):
        import uvicorn

        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.02)
        port = self.server.servers[0].sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}/v1"

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)


class Fixed:
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

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
