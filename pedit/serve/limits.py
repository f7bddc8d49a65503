"""What a connection may hold, below the ASGI app (which sees a request only once its
headers are in): uvicorn's h11 protocol with two bounds it lacks.

- At most `connections` open connections: one more is closed as it arrives (a client that
  opens a thousand never takes the process's file descriptors). A connection carries one
  request at a time, so this bounds the requests in flight too.
- A request's headers must arrive within `header_seconds` of the connection opening or
  of the previous response's end (a client sending them a byte at a time is cut off; the
  body's own deadline is the app's, app.read_body, whose 408 closes the connection).

And a request that is not HTTP (a bad chunk size, headers over h11's 16 kB, no Host) gets
its 400 in OpenAI's shape, as every other error, not uvicorn's plain text.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from . import api


@dataclass(frozen=True)
class Limits:
    connections: int = 256
    header_seconds: float = 10.0
    keep_alive_seconds: int = 5  # an idle connection between requests (uvicorn's timeout_keep_alive)


class Bounded(H11Protocol):
    limits = Limits()
    _timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > self.limits.connections:
            transport.close()
            return
        self._arm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._arm()  # the next request's headers: the same deadline

    def connection_lost(self, exc) -> None:
        if self._timer is not None:
            self._timer.cancel()
        super().connection_lost(exc)

    def send_400_response(self, msg: str) -> None:
        body = api.ApiError(400, f"not a valid HTTP request: {msg}").body()
        response = h11.Response(status_code=400, headers=[(b"content-type", b"application/json"),
                                                          (b"connection", b"close")])  # fmt: skip
        for event in (response, h11.Data(data=json.dumps(body).encode()), h11.EndOfMessage()):
            self.transport.write(self.conn.send(event))
        self.transport.close()

    def _arm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = asyncio.get_running_loop().call_later(self.limits.header_seconds, self._expire)

    def _expire(self) -> None:
        """The deadline passed: close the connection if its request's headers are not in."""
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.transport.close()


def uvicorn_config(app, host: str, port: int, limits: Limits, log_level: str = "info"):
    """uvicorn's Config for `pedit serve`: the h11 protocol with `limits`."""
    import uvicorn

    protocol = type("Bounded", (Bounded,), {"limits": limits})
    return uvicorn.Config(
        app, host=host, port=port, log_level=log_level, http=protocol,
        timeout_keep_alive=limits.keep_alive_seconds,
    )  # fmt: skip
