"""`pedit serve` under load and abuse: a real uvicorn server on the reference backend, real
HTTP clients (sockets, http.client, the openai client). The queue's bounds, a hundred
clients at once, a client gone while queued, a body over the cap whatever its framing, slow
headers and bodies, too many connections, a web page's request, and every bad request a
4xx in OpenAI's shape."""

from __future__ import annotations

import http.client
import json
import re
import socket
import threading
import time

import openai
import pytest
from test_serve import ASK, Server, SlowBackend, get, serve_process, settled

from pedit.backends.reference import ReferenceBackend
from pedit.engine.decode import DecodeOptions, generate
from pedit.engine.prompt import encode_chat
from pedit.engine.sampling import Sampling
from pedit.events import TokenGenerated
from pedit.serve.app import ServeConfig
from pedit.serve.limits import Limits

pytestmark = pytest.mark.timeout(180)  # a server that deadlocks fails here


class GatedBackend(ReferenceBackend):
    """The reference model, whose passes wait for `gate` (a run held as long as a test
    needs), counting them."""

    def __init__(self):
        super().__init__()
        self.gate, self.passes = threading.Event(), 0

    def eval(self, tokens, *, n_logits: int = 1):
        self.passes += 1
        self.gate.wait(60)
        return super().eval(tokens, n_logits=n_logits)


def body(max_tokens: int = 3, **extra) -> bytes:
    return json.dumps({"messages": ASK, "temperature": 0, "max_tokens": max_tokens, **extra}).encode()


def post(port: int, data: bytes, headers: dict | None = None, path: str = "/v1/chat/completions"):
    """(status, parsed JSON body) of one POST on a new connection."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        conn.request("POST", path, data, {"Content-Type": "application/json", **(headers or {})})
        r = conn.getresponse()
        return r.status, json.loads(r.read())
    finally:
        conn.close()


def until(check, deadline: float = 10.0) -> None:
    end = time.monotonic() + deadline
    while not check():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.02)


def in_background(fn, *args) -> tuple[threading.Thread, list]:
    out: list = []
    t = threading.Thread(target=lambda: out.append(fn(*args)), daemon=True)
    t.start()
    return t, out


@pytest.mark.parametrize("queue", [0, 2])
def test_queue_n_lets_n_wait_while_one_runs(queue):
    """One request holds the model (its passes gated); `queue` more wait; the next is 429
    at once; released, every admitted one is answered."""
    backend = GatedBackend()
    s = Server(ServeConfig("reference", queue=queue, speculate="off"), backend)
    try:
        running = [in_background(post, s.port, body())]
        until(lambda: backend.passes >= 1)
        waiting = [in_background(post, s.port, body()) for _ in range(queue)]
        until(lambda: s.app_model.waiting == queue)
        status, error = post(s.port, body())
        assert status == 429 and error["error"]["code"] == "rate_limit"
        backend.gate.set()
        for t, out in running + waiting:
            t.join(30)
            assert out[0][0] == 200 and out[0][1]["usage"]["completion_tokens"] == 3
    finally:
        backend.gate.set()
        s.stop()


def test_a_hundred_clients_at_once_neither_starve_health_nor_the_admitted():
    """The issue's deadlock: 100 concurrent clients (more than anyio's 40 threads) with
    --queue 60. /health answers within a second throughout, each admitted request is
    answered (the others get 429), and a request after them is answered."""
    backend = SlowBackend()  # 50 ms a pass: the queue drains in seconds, not at once
    s = Server(ServeConfig("reference", queue=60, speculate="off"), backend)
    try:
        clients = [in_background(post, s.port, body(2)) for _ in range(100)]
        slowest, alive = 0.0, True
        while alive:
            t = time.monotonic()
            assert get(s.url + "/health") == (200, {"status": "ok"})
            slowest = max(slowest, time.monotonic() - t)
            alive = any(t.is_alive() for t, _ in clients)
            time.sleep(0.1)
        statuses = [out[0][0] for _, out in clients]
        assert slowest < 1.0
        assert set(statuses) <= {200, 429} and statuses.count(200) >= 61  # one running, 60 waiting
        assert all(out[0][1]["usage"]["completion_tokens"] == 2 for _, out in clients if out[0][0] == 200)
        assert post(s.port, body(2))[0] == 200
    finally:
        s.stop()


def test_a_client_gone_while_queued_gives_up_its_place_and_never_runs():
    """--queue 1: A runs (gated), B waits and hangs up; C is admitted in B's place (not
    429), and once A is released only A and C run: B's 50 tokens are never decoded."""
    backend = GatedBackend()
    s = Server(ServeConfig("reference", queue=1, speculate="off"), backend)
    try:
        a = in_background(post, s.port, body(3))
        until(lambda: backend.passes >= 1)
        b = socket.create_connection(("127.0.0.1", s.port))
        data = body(50)
        head = f"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n"  # noqa: E501
        b.sendall(head.encode() + data)
        until(lambda: s.app_model.waiting == 1)
        b.close()
        until(lambda: s.app_model.waiting == 0)
        c = in_background(post, s.port, body(3))
        until(lambda: s.app_model.waiting == 1)
        backend.gate.set()
        for t, out in (a, c):
            t.join(30)
            assert out[0][0] == 200
        assert settled(lambda: backend.passes) <= 2 * 4  # A and C: a prefill and 2 passes each, at most
    finally:
        backend.gate.set()
        s.stop()


def test_a_stop_string_the_first_text_matches_still_reports_the_usage():
    """The answer's first piece of text is a stop string: no text, finish "stop", and the
    usage counts the prompt and the tokens drawn up to it (not zeros)."""
    prompt = encode_chat(ReferenceBackend(), ASK)
    drawn, text = 0, ""
    for event in generate(ReferenceBackend(), prompt, DecodeOptions(20, Sampling(temperature=0))):
        if isinstance(event, TokenGenerated):
            drawn, text = drawn + 1, text + event.text
            if text:
                break
    s = Server(ServeConfig("reference", speculate="off"))
    try:
        create = s.client().chat.completions.create
        cut = create(model="x", messages=ASK, temperature=0, max_tokens=20, stop=[text])
        assert (cut.choices[0].message.content, cut.choices[0].finish_reason) == ("", "stop")
        assert (cut.usage.prompt_tokens, cut.usage.completion_tokens) == (len(prompt), drawn)
    finally:
        s.stop()


class FailingBackend(ReferenceBackend):
    """The reference model, failing at its fourth pass (a bug, a backend error)."""

    def __init__(self):
        super().__init__()
        self.passes = 0

    def eval(self, tokens, *, n_logits: int = 1):
        self.passes += 1
        if self.passes == 4:
            raise RuntimeError("the backend failed")
        return super().eval(tokens, n_logits=n_logits)


def test_a_stream_that_fails_midway_ends_with_an_error_event_and_the_server_goes_on():
    backend = FailingBackend()
    s = Server(ServeConfig("reference", speculate="off"), backend)
    try:
        chunks = s.client().chat.completions.create(
            model="x", messages=ASK, temperature=0, max_tokens=20, stream=True
        )
        with pytest.raises(openai.APIError, match="failed midway"):
            list(chunks)
        whole = s.client().chat.completions.create(model="x", messages=ASK, temperature=0, max_tokens=5)
        assert whole.usage.completion_tokens == 5
    finally:
        s.stop()


def test_a_whole_answer_that_fails_is_a_500_in_openais_shape_and_frees_the_model():
    backend = FailingBackend()
    s = Server(ServeConfig("reference", speculate="off"), backend)
    try:
        status, error = post(s.port, body(20))
        assert status == 500 and error["error"]["type"] == "server_error"
        assert post(s.port, body(5))[0] == 200
    finally:
        s.stop()


@pytest.fixture(scope="module")
def server():
    s = Server(ServeConfig("reference", speculate="off", cors=("http://app.example",)))
    yield s
    s.stop()


NESTED = b'{"messages": [{"role": "user", "content": "hi"}], "metadata": ' + b"[" * 5000 + b"]" * 5000 + b"}"


@pytest.mark.parametrize(
    "data, param",
    [
        (body(stop=5), "stop"),
        (body(seed="1"), "seed"),
        (body(seed=-1), "seed"),
        (body(n=0), "n"),
        (body(stream="false"), "stream"),
        (body().replace(b'"temperature": 0', b'"temperature": NaN'), "temperature"),
        (body().replace(b'"temperature": 0', b'"temperature": Infinity'), "temperature"),
        (body(response_format={"type": "json_object"}), "response_format"),
        (body(logprobs=True), "logprobs"),
        (body(tools=[{"type": "function", "function": {"name": "f"}}]), "tools"),
        (body(presence_penalty=0.5), "presence_penalty"),
        (body(logit_bias={"1": 5}), "logit_bias"),
        (body(max_tokens=0), "max_tokens"),
        (body().replace(b'"hi"', b'"hi"').replace(b'"You edit code."', b'"\\ud800"'), None),
        (NESTED, None),
        (b'{"messages": [{"role": "tool", "content": "x"}]}', "messages"),
        (b"[]", None),
        (b"not json", None),
    ],
)
def test_a_bad_request_is_a_400_in_openais_shape_naming_the_parameter(server, data, param):
    status, error = post(server.port, data)
    assert status == 400
    assert set(error["error"]) == {"message", "type", "param", "code"}
    assert error["error"]["type"] == "invalid_request_error" and error["error"]["param"] == param


def test_parameters_openai_does_not_define_are_ignored_and_neutral_values_accepted(server):
    neutral = {
        "n": 1, "logprobs": False, "presence_penalty": 0, "tools": [], "tool_choice": "none",
        "response_format": {"type": "text"}, "user": "u", "metadata": {"a": "b"}, "x_extension": [1],
    }  # fmt: skip
    status, answer = post(server.port, body(**neutral))
    plain = post(server.port, body())[1]
    assert status == 200 and answer["choices"] == plain["choices"]
    assert answer["usage"]["completion_tokens"] == plain["usage"]["completion_tokens"] == 3


@pytest.mark.parametrize(
    "method, path, status",
    [("GET", "/nowhere", 404), ("GET", "/v1/chat/completions", 405), ("DELETE", "/v1/models", 405)],
)
def test_routes_and_methods_that_do_not_exist_answer_in_openais_shape(server, method, path, status):
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    conn.request(method, path)
    r = conn.getresponse()
    assert r.status == status and set(json.loads(r.read())["error"]) == {"message", "type", "param", "code"}


def test_a_web_page_cannot_make_the_server_run(server):
    """A "simple" cross-site POST (text/plain, which no browser preflights) and any request
    from an origin --cors does not allow: refused before the model is touched."""
    simple = post(server.port, body(), {"Content-Type": "text/plain"})
    assert simple[0] == 415 and "application/json" in simple[1]["error"]["message"]
    foreign = post(server.port, body(), {"Origin": "http://evil.example"})
    assert foreign[0] == 403 and "evil.example" in foreign[1]["error"]["message"]
    assert post(server.port, body(), {"Origin": "http://app.example"})[0] == 200  # the one --cors allows


def test_a_body_over_the_cap_is_413_whatever_its_framing():
    s = Server(ServeConfig("reference", speculate="off", max_body=1000))
    try:
        data = body(stop=["x" * 200] * 4) + b" " * 2000
        assert post(s.port, data)[0] == 413  # a Content-Length over the cap: refused before reading
        conn = http.client.HTTPConnection("127.0.0.1", s.port, timeout=10)
        conn.request("POST", "/v1/chat/completions", iter([data]), {"Content-Type": "application/json"},
                     encode_chunked=True)  # fmt: skip
        r = conn.getresponse()
        assert r.status == 413 and "1000 bytes" in json.loads(r.read())["error"]["message"]
    finally:
        s.stop()


def test_slow_headers_and_slow_bodies_do_not_hold_a_connection():
    s = Server(ServeConfig("reference", speculate="off", body_seconds=1.0), limits=Limits(8, 1.0, 5))
    try:
        slow = socket.create_connection(("127.0.0.1", s.port))
        slow.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # and no more
        slow.settimeout(5)
        t = time.monotonic()
        assert slow.recv(100) == b""  # closed by the server
        assert 0.9 < time.monotonic() - t < 3
        trickle = socket.create_connection(("127.0.0.1", s.port))
        trickle.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                        b"Content-Type: application/json\r\nContent-Length: 500\r\n\r\n{")  # fmt: skip
        trickle.settimeout(5)
        assert trickle.recv(100).startswith(b"HTTP/1.1 408")
        trickle.settimeout(0.2)
        closed = False  # and the connection is closed: a client still sending is cut off, not read on
        for _ in range(25):
            try:
                trickle.sendall(b" ")
                closed = trickle.recv(4096) == b""
            except TimeoutError:  # open, and nothing to read: not closed
                pass
            except OSError:  # reset
                closed = True
            if closed:
                break
        assert closed
    finally:
        s.stop()


def test_what_is_not_http_is_a_400_in_openais_shape(server):
    for request in (b"GARBAGE\r\n\r\n", b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: -1\r\n\r\n"):
        sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
        sock.sendall(request)
        reply = b""
        while chunk := sock.recv(4096):
            reply += chunk
        head, _, payload = reply.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 400") and b"application/json" in head
        assert set(json.loads(payload)["error"]) == {"message", "type", "param", "code"}


def test_connections_over_the_limit_are_closed_as_they_arrive_and_the_server_recovers():
    s = Server(ServeConfig("reference", speculate="off"), limits=Limits(4, 1.0, 5))
    try:
        idle = [socket.create_connection(("127.0.0.1", s.port)) for _ in range(4)]
        extra = socket.create_connection(("127.0.0.1", s.port))
        extra.settimeout(5)
        assert extra.recv(100) == b""  # one too many: closed at once
        for sock in idle:
            sock.settimeout(5)
            assert sock.recv(100) == b""  # no request within the header deadline
        assert get(s.url + "/health") == (200, {"status": "ok"})
    finally:
        s.stop()


def rss(pid: int, field: str) -> int:
    """A memory figure of a process from /proc, in bytes."""
    with open(f"/proc/{pid}/status") as f:
        status = f.read()
    return int(re.search(rf"^{field}:\s+(\d+) kB", status, re.M).group(1)) * 1024


def test_a_gigabyte_body_does_not_grow_the_real_server():
    """The real `pedit serve` in a subprocess: a client tries to send a 1 GB chunked body;
    the server's peak memory (VmHWM, reset after a warm-up request) stays within 20 MB of
    its idle size, and it goes on answering."""
    with serve_process() as (proc, url):
        port = int(url.rsplit(":", 1)[1])
        assert post(port, body(2))[0] == 200  # warm: every module a request needs is loaded
        idle = rss(proc.pid, "VmRSS")
        with open(f"/proc/{proc.pid}/clear_refs", "w") as f:
            f.write("5")  # reset the peak (VmHWM) to the present size
        sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                     b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")  # fmt: skip
        piece = b"%x\r\n" % (1 << 20) + b" " * (1 << 20) + b"\r\n"
        try:
            for _ in range(1024):
                sock.sendall(piece)
        except OSError:
            pass  # the server answered 413 and closed the connection
        sock.close()
        assert rss(proc.pid, "VmHWM") - idle < 20 * 1024 * 1024
        assert post(port, body(2))[0] == 200
