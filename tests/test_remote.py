"""The remote backend (`-b openai --base-url`): pedit as a client of an OpenAI-compatible
server. Against a real `pedit serve` (uvicorn on loopback, the reference backend), a
rewrite is the local run's, token for token; several files go at once and are written in
order; a server that is down, refuses the key, stays busy, breaks, answers what is not
OpenAI's shape, is too slow, trickles past the deadline or never stops is one line naming
it and exit 3, with the file untouched."""

from __future__ import annotations

import itertools
import json
import math
import time

import pytest
from click.testing import CliRunner
from servers import DONE, Fixed, Scripted, Streaming, Uvicorn, chunk

from pedit.backends.reference import ReferenceBackend
from pedit.cli.app import cli as app
from pedit.engine.costmodel import CostModel
from pedit.engine.prompt import FenceStream
from pedit.engine.remote import Preamble
from pedit.models.progress import quietly
from pedit.serve.app import ServeConfig, create_app

ESSAY = "Their is many reasons why peoples enjoys reading.\nA good book take you far.\n"
CHANGE = ("--temperature", "1", "--seed", "3")  # a sampled run: the answer differs from the file
FLAT = CostModel.table({1: 1.0, 64: 1.5}, 1e-3)
pytestmark = pytest.mark.timeout(180)


def invoke(*args):
    return CliRunner().invoke(app, list(map(str, args)))


def last_line(result) -> str:
    return result.stderr.strip().splitlines()[-1]


def limits(isolated_dirs, **values) -> None:
    """The user's config.toml holds these settings."""
    conf = isolated_dirs / "config" / "pedit" / "config.toml"
    conf.parent.mkdir(parents=True, exist_ok=True)
    conf.write_text("".join(f"{k} = {v}\n" for k, v in values.items()))


@pytest.fixture(scope="module")
def served():
    server = Uvicorn(create_app(ReferenceBackend(), FLAT, ServeConfig("reference", speculate="fixed")))
    yield server
    server.stop()


@pytest.fixture
def essay(tmp_path):
    path = tmp_path / "essay.md"
    path.write_text(ESSAY)
    return path


def remote(url: str) -> tuple[str, ...]:
    return ("-b", "openai", "--base-url", url, "--api-key", "none")


def test_a_rewrite_through_pedit_serve_is_the_local_one(served, essay, tmp_path):
    """The same messages, the same primed fence (continue_final_message) and the same seed:
    the server's answer is the local run's, and it reports the prediction tokens."""
    stats = tmp_path / "stats.json"
    local = invoke("edit", essay, "Make it shorter", "-b", "reference", "--stdout", *CHANGE)
    there = invoke("edit", essay, "Make it shorter", *remote(served.url), "--stdout", *CHANGE,
                   "--stats-json", stats)  # fmt: skip
    assert local.exit_code == there.exit_code == 0, local.output + there.output
    assert there.stdout == local.stdout != ESSAY
    figures = json.loads(stats.read_text())
    assert (figures["backend"], figures["model"]) == ("openai", "reference")
    assert figures["accepted_prediction_tokens"] > 0
    assert figures["stop_reason"] == "fence"


def test_a_summary_through_pedit_serve_is_the_local_one(served, essay):
    local = invoke("summarize", essay, "-b", "reference", *CHANGE)
    there = invoke("summarize", essay, *remote(served.url), *CHANGE)
    assert local.exit_code == there.exit_code == 0, local.output + there.output
    assert there.stdout == local.stdout


def test_several_files_go_at_once_and_are_written_in_order(served, tmp_path):
    names = [tmp_path / f"{c}.md" for c in "abc"]
    for i, path in enumerate(names):
        path.write_text(ESSAY.replace("reading", f"reading {i}"))
    want = {}
    for path in names:
        result = invoke("edit", path, "Make it shorter", "-b", "reference", "--stdout", *CHANGE)
        assert result.exit_code == 0, result.output
        want[path] = result.stdout
    result = invoke("edit", *names, "Make it shorter", *remote(served.url), "-y", "--jobs", "3", *CHANGE)
    assert result.exit_code == 0, result.output
    assert {p: p.read_text() for p in names} == want
    written = [line for line in result.stderr.splitlines() if line.endswith(": written")]
    assert written == [f"pedit: {p.name}: written" for p in names]


def test_a_grammar_needs_a_local_backend(served, essay):
    result = invoke("edit", essay, "x", *remote(served.url), "--regex", "[a-z]+", "--stdout")
    assert result.exit_code == 2
    assert "needs a local backend" in result.stderr.strip().splitlines()[-1]


def test_an_unknown_model_names_the_served_ones(served, essay):
    result = invoke("edit", essay, "x", *remote(served.url), "-m", "gpt-9", "--stdout")
    assert result.exit_code == 3
    assert result.stderr.strip().splitlines()[-1] == (
        f"pedit: error: {served.url} has no model 'gpt-9'; it serves: reference"
    )


def test_the_wrong_key_is_one_line_and_exit_3(essay):
    server = Uvicorn(create_app(ReferenceBackend(), FLAT, ServeConfig("reference", api_key="right")))
    try:
        result = invoke("edit", essay, "x", "-b", "openai", "--base-url", server.url, "--api-key", "wrong",
                        "-y")  # fmt: skip
    finally:
        server.stop()
    assert result.exit_code == 3
    assert "refused the API key (401" in result.stderr.strip().splitlines()[-1]
    assert essay.read_text() == ESSAY


def test_a_server_that_is_down_is_one_line_and_exit_3(essay):
    server = Fixed(500)
    url = server.url
    server.stop()  # nothing listens there now
    result = invoke("edit", essay, "x", *remote(url), "-y")
    assert result.exit_code == 3
    assert result.stderr.strip().splitlines()[-1].startswith(f"pedit: error: cannot reach {url}")
    assert essay.read_text() == ESSAY


@pytest.mark.parametrize(
    ("status", "says"),
    [(429, "the server is busy (429)"), (500, "server error 500"), (503, "server error 503")],
)
def test_busy_and_broken_servers_are_retried_then_one_line(essay, status, says):
    """The client retries 429 and 5xx with backoff (Retry-After honoured), 3 times, then
    gives up with one line."""
    server = Fixed(status, headers={"retry-after": "0"})
    try:
        result = invoke("edit", essay, "x", *remote(server.url), "-y")
    finally:
        server.stop()
    assert result.exit_code == 3
    assert says in result.stderr.strip().splitlines()[-1]
    assert server.requests == 4
    assert essay.read_text() == ESSAY


def test_a_server_too_slow_times_out(essay, isolated_dirs):
    limits(isolated_dirs, timeout=0.3)
    server = Fixed(200, delay=2.0)
    try:
        result = invoke("edit", essay, "x", *remote(server.url), "-y")
    finally:
        server.stop()
    assert result.exit_code == 3
    assert last_line(result).endswith(f"{server.url}: no answer in time (timed out)")
    assert essay.read_text() == ESSAY


def test_a_base_url_is_required(essay):
    result = invoke("edit", essay, "x", "-b", "openai", "-y")
    assert result.exit_code == 2
    assert "--base-url" in result.stderr.strip().splitlines()[-1]


@pytest.mark.parametrize(
    ("answer", "file"),
    [
        ("Sure! Here it is:\n\n```python\nx = 1\n```\nDone.", "x = 1\n"),
        ("```python\nx = 1\n```\n", "x = 1\n"),
        ("x = 1\n", ""),  # no fence at all: nothing (the answer is refused as incomplete)
    ],
)
def test_a_plain_answer_loses_what_precedes_its_fence(answer, file):
    """A server that does not continue the primed fence: the model opens its own."""
    for cut in range(1, len(answer)):  # however the text is split into deltas
        pre, stream = Preamble(), FenceStream("```", "x = 0\n")
        out = stream.feed(pre.feed(answer[:cut])) + stream.feed(pre.feed(answer[cut:])) + stream.close()
        assert out == file


def test_the_hook_sends_its_files_at_once_and_reports_them_as_a_local_run(served, tmp_path):
    """Three staged files, their model runs in flight together (jobs 3): the same verdicts
    and diffs, in the same order, as the reference backend gives locally."""
    import subprocess

    from pedit.app import config
    from pedit.hook.rules import HookConfig, Rule
    from pedit.hook.run import run_hook

    repo = tmp_path / "repo"
    repo.mkdir()
    for args in (["init", "-q", "-b", "main"], ["config", "user.name", "T"], ["config", "user.email", "t@x"]):
        subprocess.run(["git", *args], cwd=repo, check=True)
    for i in range(3):
        (repo / f"n{i}.md").write_text(ESSAY.replace("reading", f"reading {i}"))
    subprocess.run(["git", "add", "."], cwd=repo, check=True)
    hook = HookConfig(rules=(Rule(("*.md",), command="edit", instruction="Make it shorter"),), mode="check",
                      temperature=1.0, seed=3)  # fmt: skip

    def lines(settings, cache):
        out = run_hook(repo, hook, settings, cache_dir=tmp_path / cache)
        return [x for x in out.lines if not x.startswith("would fix")], [
            x.split(":")[0] for x in out.lines if x.startswith("would fix")
        ]

    there = config.resolve({"backend": "openai", "base_url": served.url, "jobs": 3}, project=None)
    local = config.resolve({"backend": "reference", "speculate": "off"}, project=None)
    assert lines(there, "remote") == lines(local, "local")
    assert lines(local, "local2")[1] == [f"would fix n{i}.md" for i in range(3)]


async def test_the_session_runs_its_turns_on_the_server_as_locally(served, tmp_path):
    """Two turns in the interactive session (Pilot): the second one's prompt is the
    conversation so far; each answer is the local session's."""
    from test_tui import EDITING, TEXT, ask, ready

    from pedit.app import config
    from pedit.app.loading import Loaded, load_with_cost
    from pedit.tui.app import PeditApp

    there = config.resolve({"backend": "openai", "base_url": served.url}, project=None)
    remote_load = lambda spec: quietly(load_with_cost(there, api_key="none", model=spec))  # noqa: E731
    answers = {}
    for where, load in (("remote", remote_load), ("local", lambda spec: Loaded(backend=ReferenceBackend()))):
        path = tmp_path / where / "notes.txt"
        path.parent.mkdir()
        path.write_text(TEXT)
        app = PeditApp(path, load=load, model="reference", options=EDITING)
        async with app.run_test(size=(100, 30)) as pilot:
            await ready(pilot, app)
            first = await ask(pilot, app, "Fix the grammar.")
            await pilot.press("a")
            second = await ask(pilot, app, "Make it shorter.")
            answers[where] = (first.answer, second.answer)
    assert answers["remote"] == answers["local"]
    assert answers["local"][0] != TEXT


@pytest.mark.parametrize("force", [[], ["--force"]])
def test_a_stream_cut_short_is_never_written(essay, force):
    """A stream that ends without a finish_reason and without `data: [DONE]` (a proxy's
    timeout, a crashed server) is not an answer: the server failed (exit 3, one line naming
    it), forced or not; the file as it was."""
    half = "```markdown\nThere are many reasons why people"
    server = Streaming([half[:12], half[12:]], finish=None, done=False)
    try:
        result = invoke("edit", essay, "x", *remote(server.url), "-m", "m", "-y", *force)
    finally:
        server.stop()
    assert result.exit_code == 3, result.stderr
    assert last_line(result).endswith(
        f"{server.url}: the stream ended before the answer did (no finish_reason)"
    )
    assert essay.read_text() == ESSAY


def test_a_stream_that_finishes_without_its_fence_is_refused_unless_forced(essay):
    """The same text with a finish_reason: the model stopped (an answer, if not a whole
    rewrite): refused, and written only with --force (as before)."""
    whole = "```markdown\nThere are many reasons why people enjoy reading.\nA good book takes you far.\n"
    server = Streaming([whole], finish="stop", done=True)
    try:
        refused = invoke("edit", essay, "x", *remote(server.url), "-m", "m", "-y")
        forced = invoke("edit", essay, "x", *remote(server.url), "-m", "m", "-y", "--force")
    finally:
        server.stop()
    assert refused.exit_code == 5 and "--force" in refused.stderr
    assert forced.exit_code == 0 and essay.read_text() == whole.split("\n", 1)[1]


OPEN = chunk("```markdown\n")  # the model's opening fence: an answer under way

GARBAGE = {
    "an event that is not JSON": (
        lambda: Scripted([OPEN, b"data: {not json\n\n", DONE]),
        "{url}: sent a stream event that is not JSON: '{{not json'",
    ),
    "a chunk of another shape": (
        lambda: Scripted([OPEN, b'data: {"choices": 5}\n\n', DONE]),
        """{url}: sent a stream chunk that is not OpenAI's shape: '{{"choices":5}}'""",
    ),
    "a delta that is not text": (
        lambda: Scripted([OPEN, b'data: {"choices": [{"delta": {"content": 7}}]}\n\n', DONE]),
        "{url}: sent a stream chunk that is not OpenAI's shape",
    ),
    "a /v1/models that is not JSON": (
        lambda: Scripted([], models="<html>Welcome to nginx!</html>"),
        "{url}/models is not a list of models: '<html>Welcome to nginx!</html>'",
    ),
    "a /v1/models of another shape": (
        lambda: Scripted([], models='{"data": 5}'),
        """{url}/models is not a list of models: '{{"data": 5}}'""",
    ),
    "a 200 that is not an event stream": (
        lambda: Scripted([b"<html>502 Bad Gateway</html>"], kind="text/html"),
        "{url}: answered with text/html, not an event stream",
    ),
}


@pytest.mark.parametrize("force", [[], ["--force"]])
@pytest.mark.parametrize("case", list(GARBAGE))
def test_what_is_not_openais_shape_is_the_servers_failure(essay, case, force):
    """Garbage from the server (issue 28, item 7) is its failure, not pedit's (70) nor a
    refused answer (5): exit 3, one line naming the server and quoting what it sent; the
    file as it was, forced or not."""
    start, says = GARBAGE[case]
    server = start()
    try:
        result = invoke("edit", essay, "x", *remote(server.url), "-m", "m", "-y", *force)
    finally:
        server.stop()
    assert result.exit_code == 3, result.stderr
    assert last_line(result).startswith("pedit: error: ")
    assert says.format(url=server.url) in last_line(result)
    assert essay.read_bytes() == ESSAY.encode()


SLOW = {
    # a token every 0.6 s (each read well within `timeout`): 30 of them would take 18 s
    "a trickle": lambda: Scripted([OPEN, *[chunk("word ")] * 30, DONE], every=0.6),
    # a token, then silence past the deadline (a read that waits when the deadline comes)
    "a long pause": lambda: Scripted([OPEN, chunk("word "), chunk("word "), DONE], every=3.5),
    # keep-alive comments, no token ever: bytes arrive, so no read times out
    "keep-alives only": lambda: Scripted(itertools.repeat(b": ping\n\n"), every=0.1),
}


@pytest.mark.parametrize("force", [[], ["--force"]])
@pytest.mark.parametrize("case", list(SLOW))
def test_an_answer_past_the_deadline_is_abandoned(essay, isolated_dirs, case, force):
    """`timeout` bounds each read; `deadline` the whole answer (issue 28, item 8): a server
    that trickles, pauses or only keeps the connection alive is abandoned at the deadline
    (exit 3, one line naming the limit and the server), the file untouched."""
    limits(isolated_dirs, timeout=5, deadline=1.5)
    server = SLOW[case]()
    try:
        began = time.monotonic()
        result = invoke("edit", essay, "x", *remote(server.url), "-m", "m", "-y", *force)
        took = time.monotonic() - began
    finally:
        server.stop()
    assert result.exit_code == 3, result.stderr
    assert last_line(result).endswith(
        f"{server.url}: no whole answer within the deadline (1.5 s, the `deadline` setting); abandoned"
    )
    assert 1.5 <= took < 3  # the deadline, not the next token (3.5 s) nor the reads' timeout (5 s)
    assert essay.read_bytes() == ESSAY.encode()


ENDLESS = {
    "tokens": (lambda: Scripted(itertools.chain([OPEN], itertools.repeat(chunk("word "))))),
    "long deltas": (lambda: Scripted(itertools.chain([OPEN], itertools.repeat(chunk("word " * 800))))),
}


@pytest.mark.parametrize("force", [[], ["--force"]])
@pytest.mark.parametrize(("case", "max_tokens"), [("tokens", None), ("long deltas", None), ("tokens", 50)])
def test_an_answer_that_never_stops_is_abandoned_at_max_tokens(essay, case, max_tokens, force):
    """A server that ignores max_tokens and never stops is abandoned once it has certainly
    sent more (each delta at least a token, every 16 bytes at least one): the default cap
    is 2 x the file's tokens + 1024, an explicit --max-tokens is honoured; exit 3, one line
    naming the limit and the server, the file untouched."""
    server = ENDLESS[case]()
    given = ["--max-tokens", str(max_tokens)] if max_tokens else []
    cap = max_tokens or 2 * math.ceil(len(ESSAY.encode()) / 3) + 1024
    try:
        result = invoke("edit", essay, "x", *remote(server.url), "-m", "m", "-y", *given, *force)
    finally:
        server.stop()
    assert result.exit_code == 3, result.stderr
    assert last_line(result).endswith(
        f"{server.url}: the answer went on past max_tokens ({cap}) without stopping; abandoned"
    )
    assert essay.read_bytes() == ESSAY.encode()


def test_an_answer_within_the_limits_is_written(essay, isolated_dirs):
    """Tokens that come slowly, but within the deadline and max_tokens, are an answer."""
    limits(isolated_dirs, timeout=3, deadline=5)
    whole = ["```markdown\n", "There are many reasons why people enjoy reading.\n", "A good book ",
             "takes you far.\n", "```"]  # fmt: skip
    server = Scripted([*(chunk(t) for t in whole[:-1]), chunk(whole[-1], "stop"), DONE], every=0.2)
    try:
        result = invoke("edit", essay, "x", *remote(server.url), "-m", "m", "-y", "--max-tokens", "8")
    finally:
        server.stop()
    assert result.exit_code == 0, result.stderr
    assert essay.read_text() == "".join(whole[1:-1])


def test_a_server_is_a_remote_backend_and_each_local_one_a_local_backend(served):
    """Two protocols, two loops (engine/edit.local picks): a server's backend has no
    tokens, logits or cache of its own, and a local one all of them."""
    from pedit.backends import LocalBackend, RemoteBackend, open_remote
    from pedit.engine.edit import local

    server = open_remote(None, served.url, "none")
    try:
        assert isinstance(server, RemoteBackend) and not isinstance(server, LocalBackend)
        assert not local(server)
    finally:
        server.close()
    here = ReferenceBackend()
    assert isinstance(here, LocalBackend) and local(here)
