"""`pedit serve`: a real uvicorn server on 127.0.0.1 (port 0) in this process, driven by
the real `openai` client, on the reference backend: the same text with and without a
prediction at temperature 0, OpenAI's usage fields, streaming with the usage chunk,
OpenAI's errors for what a prediction cannot be combined with, the API key, the queue."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator

import openai
import pytest
from servers import Uvicorn

from pedit.backends.reference import ReferenceBackend
from pedit.engine.chat import chat_draft, completion_events
from pedit.engine.costmodel import CostModel
from pedit.engine.decode import DecodeOptions, common_prefix, generate
from pedit.engine.prompt import encode_chat
from pedit.engine.sampling import Sampling
from pedit.events import TokenGenerated, TokensAccepted, drain
from pedit.serve.app import ServeConfig, create_app
from pedit.serve.limits import Limits, uvicorn_config

FILE = "def total(x):\n    s = 0\n    for i in x:\n        s = s + i\n    return s\n"
ASK = [
    {"role": "system", "content": "You edit code."},
    {"role": "user", "content": f"Rename s to acc.\n\n{FILE}"},
]
FLAT = CostModel.table({1: 1.0, 64: 1.5}, 1e-3)
pytestmark = pytest.mark.timeout(120)  # a server that deadlocks fails here, not after 30 minutes


class Server(Uvicorn):
    """`pedit serve`'s app on the reference backend (or `backend`); `url` is its root."""

    def __init__(self, config: ServeConfig, backend=None, limits: Limits | None = None):
        app = create_app(backend or ReferenceBackend(), FLAT, config)
        super().__init__(app, uvicorn_config(app, "127.0.0.1", 0, limits or Limits(), "warning"))
        self.url, self.app_model = self.root, app.state.model

    def client(self, key: str = "none") -> openai.OpenAI:
        return openai.OpenAI(base_url=self.root + "/v1", api_key=key, max_retries=0)


@pytest.fixture(scope="module")
def server():
    s = Server(ServeConfig("reference", speculate="fixed"))
    yield s
    s.stop()


def get(url: str, headers: dict | None = None) -> tuple[int, dict]:
    req = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def ask(client, **kw):
    create = client.chat.completions.create
    return create(model="reference", messages=ASK, temperature=0, max_tokens=120, **kw)


CONTINUED = [*ASK, {"role": "assistant", "content": "def total(x):\n    acc = 0\n"}]
GO_ON = {"continue_final_message": True, "add_generation_prompt": False}


def local_answer(prompt: list[int], max_tokens: int = 120) -> str:
    """What pedit's own engine writes after these prompt tokens: plain greedy decoding."""
    greedy = DecodeOptions(max_tokens, Sampling(temperature=0))
    return drain(generate(ReferenceBackend(), prompt, greedy)).text


def test_a_prediction_changes_the_speed_not_the_text(server):
    client = server.client()
    plain = ask(client)
    answer = plain.choices[0].message.content
    for guess in (FILE, answer, answer[: len(answer) // 2] + "something else"):
        got = ask(client, prediction={"type": "content", "content": guess})
        assert got.choices[0].message.content == answer
    predicted = ask(client, prediction={"type": "content", "content": answer})  # a right prediction
    details = predicted.usage.completion_tokens_details
    assert details.accepted_prediction_tokens > 0
    assert predicted.usage.completion_tokens == plain.usage.completion_tokens
    assert predicted.usage.total_tokens == predicted.usage.prompt_tokens + predicted.usage.completion_tokens
    assert "predicted" in predicted.model_extra["pedit"]["accepted_by_drafter"]  # the prediction drafted
    assert "predicted" not in plain.model_extra["pedit"]["accepted_by_drafter"]  # lookup, n-grams only


# aider's whole-file format: the files in a user message of their own (`path`, then the
# fenced file), then the instruction; its answer is the same block with the edits
AIDER = [
    {"role": "system", "content": "Act as an expert software developer."},
    {"role": "user", "content": "I have *added these files to the chat* so you can go ahead and edit "
                                f"them.\n\ntotal.py\n```\n{FILE}```\n"},
    {"role": "assistant", "content": "Ok, any changes I propose will be to those files."},
    {"role": "user", "content": "Rename s to acc."},
]  # fmt: skip


def test_a_chat_that_holds_one_fenced_file_gets_it_as_its_draft(server):
    """Issue 38: no `prediction`, and the latest user message with a fenced block holds one
    file: that block drafts (pedit.draft says so), and the text is plain decoding's."""
    create = server.client().chat.completions.create
    got = create(model="reference", messages=AIDER, temperature=0, max_tokens=120)
    assert got.model_extra["pedit"]["draft"] == "fenced file"
    assert got.model_extra["pedit"]["tool"] == "rename"  # and the rename tool drafted in it
    assert got.choices[0].message.content == local_answer(encode_chat(ReferenceBackend(), AIDER))
    explicit = create(model="reference", messages=AIDER, temperature=0, max_tokens=120,
                      prediction={"type": "content", "content": f"total.py\n```\n{FILE}```\n"})  # fmt: skip
    assert explicit.model_extra["pedit"]["draft"] == "prediction"
    assert (
        explicit.model_extra["pedit"]["accepted_by_drafter"]
        == got.model_extra["pedit"]["accepted_by_drafter"]
    )
    two = [*AIDER[:1], {"role": "user", "content": f"a.py\n```\n{FILE}```\nb.py\n```\n{FILE}```\n"}]
    assert ask(server.client()).model_extra["pedit"]["draft"] == "none"  # the file, but not fenced
    assert create(model="reference", messages=two, max_tokens=8).model_extra["pedit"]["draft"] == "none"


@pytest.mark.parametrize("stream", [False, True])
def test_a_rename_request_gets_the_clis_tool_and_check_and_the_models_text(server, stream):
    """pedit's own remote request for a rename, with its prediction: the exact rename
    drafts, the answer is plain decoding's, and the CLI's check of it is in `pedit`."""
    from pedit.checks.intentcheck import check
    from pedit.engine.remote import remote_prompt
    from pedit.request import EditRequest
    from pedit.serve.tools import split
    from pedit.tools.intent import parse
    from pedit.tools.rename import rename

    msgs, _, _, prediction = remote_prompt(
        EditRequest(FILE, "Rename s to acc.", "total.py"), "rewrite", False
    )
    kw = {"model": "reference", "messages": msgs, "temperature": 0, "max_tokens": 120,
          "prediction": {"type": "content", "content": prediction}}  # fmt: skip
    if stream:
        chunks = list(
            server.client().chat.completions.create(**kw, stream=True, stream_options={"include_usage": True})
        )
        text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        extra = chunks[-1].model_extra["pedit"]
    else:
        got = server.client().chat.completions.create(**kw)
        text, extra = got.choices[0].message.content, got.model_extra["pedit"]
    assert text == local_answer(encode_chat(ReferenceBackend(), msgs))
    verdict = check(
        parse("Rename s to acc."), "total.py", FILE, split(text)[1], rename(FILE, "total.py", {"s": "acc"})
    )
    assert (extra["draft"], extra["tool"], extra["check"]) == ("prediction", "rename", verdict.to_dict())


def test_streaming_sends_the_same_text_and_the_usage_last(server):
    client = server.client()
    whole = ask(client, prediction={"type": "content", "content": FILE})
    stream = ask(client, prediction={"type": "content", "content": FILE}, stream=True,
                 stream_options={"include_usage": True})  # fmt: skip
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == whole.choices[0].message.content
    assert chunks[-1].choices == [] and chunks[-1].usage.completion_tokens == whole.usage.completion_tokens
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == whole.choices[0].finish_reason


def by_source(pairs) -> dict[str, str]:
    """{source: its text, concatenated} from (source, text) pairs."""
    out: dict[str, str] = {}
    for name, text in pairs:
        out[name] = out.get(name, "") + text
    return out


def test_each_streamed_chunk_says_where_its_tokens_came_from(server):
    """With a right prediction, the chunks' sources are the engine's own events' (the same
    run, here on a fresh backend), and most of the text is the prediction's."""
    b = ReferenceBackend()
    prompt = encode_chat(b, CONTINUED[:-1]) + b.tokenize(CONTINUED[-1]["content"])
    answer = local_answer(prompt)
    chunks = server.client().chat.completions.create(
        model="reference", messages=CONTINUED, temperature=0, max_tokens=120, extra_body=GO_ON,
        prediction={"type": "content", "content": answer}, stream=True,
    )  # fmt: skip
    content = [c for c in chunks if c.choices and c.choices[0].delta.content]
    streamed = by_source((c.model_extra["pedit"]["source"], c.choices[0].delta.content) for c in content)
    greedy = DecodeOptions(120, Sampling(temperature=0))
    events = completion_events(b, prompt, greedy, draft=chat_draft(b, answer), speculate="fixed")
    own = [e for e in events if isinstance(e, TokenGenerated | TokensAccepted) and e.text]
    assert streamed == by_source(
        (e.source if isinstance(e, TokensAccepted) else "model", e.text) for e in own
    )
    assert len(streamed["predicted"]) > len(answer) / 2
    assert "".join(c.choices[0].delta.content for c in content) == answer


@pytest.mark.parametrize(
    "extra, param",
    [({"n": 2}, "n"), ({"logprobs": True}, "logprobs"), ({"presence_penalty": 0.5}, "presence_penalty")],
)
def test_what_a_prediction_cannot_be_combined_with_is_openais_400(server, extra, param):
    with pytest.raises(openai.BadRequestError) as e:
        ask(server.client(), prediction={"type": "content", "content": FILE}, **extra)
    error = e.value.body
    assert error["param"] == param and error["type"] == "invalid_request_error" and error["message"]


def test_stop_strings_end_the_answer(server):
    full = ask(server.client()).choices[0].message.content
    word = full.split()[2]
    cut = ask(server.client(), stop=[word])
    assert cut.choices[0].message.content == full[: full.index(word)]
    assert cut.choices[0].finish_reason == "stop"


@pytest.mark.parametrize("predict", [False, True])
def test_continue_final_message_continues_the_turn_as_pedits_primed_prompt(server, predict):
    """The prompt is pedit's own rewrite prompt's shape: the template's generation prompt,
    then the assistant's text tokenized as plain text; the answer is only the new text."""
    b = ReferenceBackend()
    prompt = encode_chat(b, CONTINUED[:-1]) + b.tokenize(CONTINUED[-1]["content"])
    expected = local_answer(prompt)
    kw = {"prediction": {"type": "content", "content": expected}} if predict else {}
    got = server.client().chat.completions.create(
        model="reference", messages=CONTINUED, temperature=0, max_tokens=120, extra_body=GO_ON, **kw
    )
    assert got.choices[0].message.content == expected
    assert got.usage.prompt_tokens == len(prompt)
    assert ("predicted" in got.model_extra["pedit"]["accepted_by_drafter"]) == predict  # it drafted


@pytest.mark.parametrize(
    "messages, extra, param",
    [(ASK, GO_ON, "messages"), (CONTINUED, {"continue_final_message": True}, "add_generation_prompt")],
)
def test_continue_final_message_is_refused_as_vllm_refuses_it(server, messages, extra, param):
    """A last message that is not the assistant's; add_generation_prompt left true."""
    with pytest.raises(openai.BadRequestError) as e:
        server.client().chat.completions.create(model="reference", messages=messages, extra_body=extra)
    assert e.value.body["param"] == param


AGAIN = FILE + "\ndef total(x):\n    s = 0\n"  # a plain-text prompt the model goes on copying


def test_completions_continue_plain_text_as_the_engine_does(server):
    """/v1/completions: the prompt tokenized as plain text, no chat template; OpenAI's
    default of 16 tokens; a prediction (pedit's extension) drafts without changing the text."""
    create = server.client().completions.create
    b = ReferenceBackend()
    expected = local_answer(b.tokenize(AGAIN), 16)
    got = create(model="reference", prompt=AGAIN, temperature=0)
    assert (got.object, got.choices[0].finish_reason) == ("text_completion", "length")
    assert got.choices[0].text == expected
    assert (got.usage.prompt_tokens, got.usage.completion_tokens) == (len(b.tokenize(AGAIN)), 16)
    predicted = create(model="reference", prompt=[AGAIN], temperature=0, extra_body={"prediction": {
        "type": "content", "content": expected}})  # fmt: skip
    assert predicted.choices[0].text == expected
    # the prefill's token, then one pass verifying 14 predicted tokens and drawing the 16th
    figures = predicted.model_extra["pedit"]
    assert (figures["forward_passes"], figures["accepted_by_drafter"]) == (2, {"predicted": 14})
    assert (figures["draft"], got.model_extra["pedit"]["draft"]) == ("prediction", "none")


def test_completions_stream_the_same_text_and_the_usage_last(server):
    create = server.client().completions.create
    whole = create(model="reference", prompt=AGAIN, temperature=0, max_tokens=40)
    chunks = list(create(model="reference", prompt=AGAIN, temperature=0, max_tokens=40, stream=True,
                         stream_options={"include_usage": True}))  # fmt: skip
    assert {c.object for c in chunks} == {"text_completion"}
    assert "".join(c.choices[0].text for c in chunks if c.choices) == whole.choices[0].text
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "length"
    assert chunks[-1].choices == [] and chunks[-1].usage.completion_tokens == 40


@pytest.mark.parametrize(
    "extra, param",
    [({"prompt": ["one", "two"]}, "prompt"), ({"echo": True}, "echo"), ({"suffix": "x"}, "suffix"),
     ({"best_of": 2}, "best_of"), ({"n": 2}, "n"), ({"logprobs": 1}, "logprobs")],
)  # fmt: skip
def test_what_completions_do_not_serve_is_openais_400(server, extra, param):
    with pytest.raises(openai.BadRequestError) as e:
        server.client().completions.create(**{"model": "reference", "prompt": AGAIN, **extra})
    assert (e.value.status_code, e.value.body["param"]) == (400, param)


def test_a_run_a_stop_string_ends_leaves_the_cache_known():
    """After a run cut short (here by a stop string), the next request must not reuse the
    tokens of the run before it: the cache now holds the cut run's."""
    s = Server(ServeConfig("reference", speculate="fixed"))
    try:
        first = ask(s.client()).choices[0].message.content
        other = [{"role": "system", "content": "You write poems."}, *ASK[1:]]
        cut = s.client().chat.completions.create(
            model="reference", messages=other, temperature=0, stop=["\n"]
        )
        assert cut.choices[0].finish_reason == "stop"
        assert ask(s.client()).choices[0].message.content == first
    finally:
        s.stop()


def test_a_request_reuses_the_prompt_it_shares_with_the_one_before_and_says_so():
    """Requests with one system prompt: the second reads only what follows the shared
    start (OpenAI's usage.prompt_tokens_details.cached_tokens), and answers as a server
    that read all of it."""
    system = {"role": "system", "content": "You edit code carefully. " * 8}
    other = [system, {"role": "user", "content": f"Rename i to item.\n\n{FILE}"}]
    mine = [system, ASK[1]]
    s, fresh = Server(ServeConfig("reference", speculate="fixed")), Server(ServeConfig("reference"))
    try:
        create = s.client().chat.completions.create
        first = create(model="reference", messages=other, temperature=0, max_tokens=40)
        assert first.usage.prompt_tokens_details.cached_tokens == 0  # nothing before it
        second = create(model="reference", messages=mine, temperature=0, max_tokens=40)
        want = fresh.client().chat.completions.create(
            model="reference", messages=mine, temperature=0, max_tokens=40
        )
        b = ReferenceBackend()
        shared = common_prefix(encode_chat(b, other), encode_chat(b, mine))  # the system turn and more
        assert shared > len(b.tokenize(system["content"]))
        assert second.usage.prompt_tokens_details.cached_tokens == shared
        assert want.usage.prompt_tokens_details.cached_tokens == 0
        assert second.choices[0].message.content == want.choices[0].message.content
    finally:
        s.stop()
        fresh.stop()


def test_models_and_health(server):
    assert [m.id for m in server.client().models.list()] == ["reference"]
    assert server.client().models.list().data[0].model_extra["max_model_len"] == ReferenceBackend().n_ctx
    assert get(server.url + "/health") == (200, {"status": "ok"})


def test_a_key_is_required_when_set_and_other_hosts_are_refused():
    s = Server(ServeConfig("reference", api_key="sekrit", speculate="off"))
    try:
        with pytest.raises(openai.AuthenticationError):
            ask(s.client("wrong"))
        assert ask(s.client("sekrit")).choices[0].message.content
        rebinding = get(s.url + "/v1/models", {"Host": "evil.example", "Authorization": "Bearer sekrit"})
        assert rebinding[0] == 400 and "loopback" in rebinding[1]["error"]["message"]
    finally:
        s.stop()


def preflight(url: str) -> dict:
    req = urllib.request.Request(url + "/v1/chat/completions", method="OPTIONS", headers={
        "Origin": "http://app.example", "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization, content-type",
    })  # fmt: skip
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return {k.lower(): v for k, v in r.headers.items()}
    except urllib.error.HTTPError as e:
        return {k.lower(): v for k, v in e.headers.items()}


def test_cors_is_off_unless_an_origin_is_given(server):
    assert "access-control-allow-origin" not in preflight(server.url)
    s = Server(ServeConfig("reference", api_key="sekrit", speculate="off", cors=("http://app.example",)))
    try:
        allowed = preflight(s.url)  # a browser's preflight carries no key: answered all the same
        assert allowed["access-control-allow-origin"] == "http://app.example"
        assert "POST" in allowed["access-control-allow-methods"]
        with pytest.raises(openai.AuthenticationError):  # the request itself still needs the key
            ask(s.client("wrong"))
    finally:
        s.stop()


def test_concurrent_clients_get_the_serial_answers_or_429():
    """8 clients at once, half of them streaming: each answer is the one it gets alone, or a 429."""
    s = Server(ServeConfig("reference", queue=3, speculate="fixed"))
    try:
        serial = ask(s.client()).choices[0].message.content
        results: list = []

        def one():
            try:
                results.append(ask(s.client()).choices[0].message.content)
            except openai.RateLimitError:
                results.append(429)

        def streamed():
            try:
                chunks = ask(s.client(), stream=True)
                results.append("".join(c.choices[0].delta.content or "" for c in chunks if c.choices))
            except openai.RateLimitError:
                results.append(429)

        threads = [threading.Thread(target=f) for f in [one, streamed] * 4]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert len(results) == 8
        assert all(r == serial or r == 429 for r in results)  # each completes as alone, or is turned away
        assert results.count(serial) >= 3
    finally:
        s.stop()


class SlowBackend(ReferenceBackend):
    """The reference model at 50 ms a forward pass, counting its passes: a run long enough
    to leave in the middle of (the one test double here)."""

    def __init__(self):
        super().__init__()
        self.passes = 0

    def eval(self, tokens, *, n_logits: int = 1):
        self.passes += 1
        time.sleep(0.05)
        return super().eval(tokens, n_logits=n_logits)


def settled(count, seconds: float = 0.5, deadline: float = 10.0) -> int:
    """count() once it has not changed for `seconds`."""
    end, last = time.monotonic() + deadline, count()
    while time.monotonic() < end:
        time.sleep(seconds)
        now = count()
        if now == last:
            return now
        last = now
    raise AssertionError("still counting")


def test_a_client_gone_mid_stream_stops_its_run_and_frees_the_model():
    """Plain decoding, one pass a token, 2000 tokens asked (100 s): the client reads three
    chunks and hangs up; the run stops within a pass or two and the next request is served."""
    backend = SlowBackend()
    s = Server(ServeConfig("reference", speculate="off"), backend)
    try:
        conn = http.client.HTTPConnection("127.0.0.1", s.port, timeout=10)
        body = {"model": "reference", "messages": ASK, "temperature": 0, "max_tokens": 2000, "stream": True}
        conn.request("POST", "/v1/chat/completions", json.dumps(body), {"Content-Type": "application/json"})
        response = conn.getresponse()
        lines = [response.readline() for _ in range(6)]  # the role chunk and two content chunks
        assert lines[4].startswith(b"data: ") and b'"source": "model"' in lines[4]
        response.close()
        conn.close()
        passes = settled(lambda: backend.passes)
        assert passes < 100
        after = s.client().chat.completions.create(
            model="reference", messages=ASK, temperature=0, max_tokens=5
        )
        assert after.usage.completion_tokens == 5
        assert backend.passes == passes + 5  # the prompt's last token again, then one pass a token
    finally:
        s.stop()


def test_serve_refuses_a_public_address_without_a_key():
    from typer.testing import CliRunner

    from pedit.cli.app import app

    result = CliRunner().invoke(app, ["serve", "-b", "reference", "--host", "0.0.0.0"])
    assert result.exit_code == 2
    assert "not a loopback address: give --api-key" in result.stderr


def test_serve_refuses_a_key_no_http_header_can_carry():
    from typer.testing import CliRunner

    from pedit.cli.app import app

    result = CliRunner().invoke(app, ["serve", "-b", "reference", "--api-key", "clé"])
    assert result.exit_code == 2
    assert "--api-key: an API key must be visible ASCII characters without spaces" in result.stderr


@contextlib.contextmanager
def serve_process() -> Iterator[tuple[subprocess.Popen, str]]:
    """The real `pedit serve -b reference` in a subprocess on a free port: (the process,
    its root URL as it prints it), terminated afterwards."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    args = [sys.executable, "-m", "pedit", "serve", "-b", "reference", "--port", "0", "--speculate", "off"]
    proc = subprocess.Popen(args, stderr=subprocess.PIPE, text=True, env=env)
    try:
        url, deadline = None, time.monotonic() + 60
        while url is None and time.monotonic() < deadline:
            found = re.search(r"Uvicorn running on (http://127\.0\.0\.1:\d+)", proc.stderr.readline())
            url = found.group(1) if found else None
        assert url, "the server did not say where it runs"
        yield proc, url
    finally:
        proc.terminate()
        proc.wait(10)


def test_a_stopped_server_says_it_stopped_not_that_a_file_was_not_written():
    """SIGTERM (systemd's stop, `kill`) ends `pedit serve` with 143 and a line about the
    server: it rewrites no file, so the rewrite commands' sentence was untrue (issue 37)."""
    with serve_process() as (proc, _):
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 143, err
    assert err.strip().splitlines()[-1] == "pedit: error: terminated; the server stopped"


def test_the_pedit_serve_command_serves(tmp_path):
    """The real command in a subprocess: it loads the model, binds a free port, answers."""
    with serve_process() as (_, url):
        client = openai.OpenAI(base_url=url + "/v1", api_key="none", max_retries=0)
        assert [m.id for m in client.models.list()]
        reply = client.chat.completions.create(model="x", messages=ASK, temperature=0, max_tokens=8)
        assert reply.usage.completion_tokens >= 1
