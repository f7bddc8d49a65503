"""Several files on a remote backend (`-b openai`, `--jobs`, pedit/cli/parallel.py): each
file succeeds or fails alone. Against a scripted OpenAI-like server that answers one file
with a 400: the other files are written, the failure is one line naming its file, the exit
code is the highest of the files' codes, and `--json` has one record per file; and the
API key reaches the server from PEDIT_API_KEY or --api-key-file, never needing the
command line."""

from __future__ import annotations

import http.server
import json

import pytest
from servers import Served
from typer.testing import CliRunner

from pedit.cli.app import app
from pedit.models.progress import quietly

pytestmark = pytest.mark.timeout(120)
FILES = {  # name: (text, what the server's answer makes of it)
    "a.md": ("teh first file\n", "the first file\n"),
    "b.md": ("teh second file\n", "the second file\n"),
    "c.md": ("FAIL: teh third file\n", None),  # the server answers 400
    "d.md": ("teh fourth file\n", "the fourth file\n"),
}


class Echo(Served):
    """Lists one model ("m") and answers each chat request with its `prediction` (the file
    in its code block, as the model's own answer) with "teh" corrected and "BREAK" made a
    stray quote; a file that holds FAIL gets a 400, as from a server that cannot take that
    request. Records each request's Authorization header."""

    def __init__(self):
        owner = self
        self.keys: list[str | None] = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def _send(self, status: int, body: bytes, kind: str) -> None:
                self.send_response(status)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):
                owner.keys.append(self.headers.get("authorization"))
                models = {"object": "list", "data": [{"id": "m", "object": "model", "owned_by": "someone"}]}
                self._send(200, json.dumps(models).encode(), "application/json")

            def do_POST(self):
                request = json.loads(self.rfile.read(int(self.headers["content-length"])))
                text = request["prediction"]["content"]
                if "FAIL" in text:
                    error = {"error": {"message": "the prompt is too long", "type": "invalid_request_error",
                                       "param": None, "code": None}}  # fmt: skip
                    self._send(400, json.dumps(error).encode(), "application/json")
                    return
                answer = text.replace("teh", "the").replace("BREAK", 'x"y')
                choice = {"index": 0, "delta": {"content": answer}, "finish_reason": "stop"}
                chunk = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m",
                         "choices": [choice]}  # fmt: skip
                self._send(
                    200, f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n".encode(), "text/event-stream"
                )

            def log_message(self, *args):
                pass

        self.url = self.serve(Handler)


@pytest.fixture
def server():
    s = Echo()
    yield s
    s.stop()


@pytest.fixture
def files(tmp_path):
    paths = []
    for name, (text, _) in FILES.items():
        (tmp_path / name).write_text(text)
        paths.append(tmp_path / name)
    return paths


def invoke(*args):
    return CliRunner().invoke(app, list(map(str, args)))


def remote(url: str) -> tuple[str, ...]:
    return ("-b", "openai", "--base-url", url, "-m", "m")


def errors(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("pedit: error:")]


@pytest.mark.parametrize("jobs", ["1", "3"])
def test_a_failing_file_fails_alone(server, files, jobs):
    """Four files, the third failing on the server: the three others are written (in
    order), the third is untouched and named in one line, and the exit code is the
    server's failure (3)."""
    result = invoke("edit", *files, "fix typos", *remote(server.url), "-y", "--jobs", jobs)
    assert result.exit_code == 3, result.stderr
    assert errors(result.stderr) == [f"pedit: error: {files[2]}: {server.url}: 400: the prompt is too long"]
    for path, (text, answer) in zip(files, FILES.values(), strict=True):
        assert path.read_text() == (answer or text)
    written = [line for line in result.stderr.splitlines() if line.endswith(": written")]
    assert written == ["pedit: a.md: written", "pedit: b.md: written", "pedit: d.md: written"]


def test_json_has_one_record_per_file_failed_ones_included(server, files):
    result = invoke("edit", *files, "fix typos", *remote(server.url), "--json", "--jobs", "4")
    assert result.exit_code == 3, result.stderr
    records = json.loads(result.stdout)
    assert [r["file"] for r in records] == ["a.md", "b.md", str(files[2]), "d.md"]
    failed = records[2]
    assert failed == {
        "file": str(files[2]),
        "error": f"{files[2]}: {server.url}: 400: the prompt is too long",
        "exit_code": 3,
    }
    for record, (_, answer) in zip(records, FILES.values(), strict=True):
        if answer is not None:
            assert record["text"] == answer and record["changed"] and not record["written"]
    assert [p.read_text() for p in files] == [text for text, _ in FILES.values()]  # --json writes nothing


def test_the_exit_code_is_the_highest_of_the_files(server, tmp_path, files):
    """A refused rewrite (5: the JSON no longer parses) beside a server failure (3):
    exit 5, each failure one line naming its file, the good files written."""
    data = tmp_path / "data.json"
    data.write_text('{"word": "BREAK"}\n')
    result = invoke("edit", data, *files, "fix typos", *remote(server.url), "-y", "--jobs", "4")
    assert result.exit_code == 5, result.stderr
    lines = errors(result.stderr)
    assert len(lines) == 2
    assert lines[0].startswith("pedit: error: data.json: the rewrite is not valid JSON")
    assert lines[1] == f"pedit: error: {files[2]}: {server.url}: 400: the prompt is too long"
    assert data.read_text() == '{"word": "BREAK"}\n'
    assert files[0].read_text() == "the first file\n" and files[3].read_text() == "the fourth file\n"


def test_the_api_key_comes_from_the_environment_or_a_file(server, files, tmp_path, monkeypatch):
    """--api-key on the command line is visible in `ps`; PEDIT_API_KEY (before
    OPENAI_API_KEY) and --api-key-file keep the key off it."""
    args = ("edit", files[0], "fix typos", *remote(server.url), "--diff")
    monkeypatch.setenv("OPENAI_API_KEY", "openai-key")
    assert invoke(*args).exit_code == 0
    monkeypatch.setenv("PEDIT_API_KEY", "pedit-key")
    assert invoke(*args).exit_code == 0
    key = tmp_path / "key.txt"
    key.write_text("file-key\n")
    assert invoke(*args, "--api-key-file", key).exit_code == 0
    assert server.keys == ["Bearer openai-key", "Bearer pedit-key", "Bearer file-key"]
    both = invoke(*args, "--api-key", "typed", "--api-key-file", key)
    assert both.exit_code == 2
    assert both.stderr.strip() == "pedit: error: choose one of --api-key, --api-key-file"
    key.write_text("\n")
    empty = invoke(*args, "--api-key-file", key)
    assert empty.exit_code == 2
    assert empty.stderr.strip() == f"pedit: error: --api-key-file {key}: its first line is empty"


@pytest.mark.parametrize("command", ["fix", "refactor", "summarize", "edit", "extract", "tui"])
def test_the_help_says_where_the_key_should_be(command):
    """--help (the option's own text, without the panels' borders) says where the key
    should be, and the option reads both variables."""
    from pedit.cli.app import cli

    option = next(p for p in cli.commands[command].params if p.name == "api_key")
    assert "visible to every user" in option.help and "prefer PEDIT_API_KEY or --api-key-file" in option.help
    assert option.envvar == ["PEDIT_API_KEY", "OPENAI_API_KEY"]
    assert any(p.name == "api_key_file" for p in cli.commands[command].params)


def test_the_hook_and_session_loader_reads_pedit_api_key_before_openai_api_key(server, monkeypatch):
    """models.load_remote, which the hook uses (it has no --api-key), takes the variables
    in the CLI's order."""
    from pedit import models

    monkeypatch.setenv("OPENAI_API_KEY", "openai-key")
    quietly(models.load_remote("m", base_url=server.url)).close()
    monkeypatch.setenv("PEDIT_API_KEY", "pedit-key")
    quietly(models.load_remote("m", base_url=server.url)).close()
    assert server.keys == ["Bearer openai-key", "Bearer pedit-key"]


@pytest.mark.parametrize("key", ["clé", "two words", "line\nbreak"])
def test_an_api_key_no_http_header_can_carry_is_a_usage_error(server, files, monkeypatch, key):
    """A key that is not visible ASCII without spaces was an internal error (exit 70)
    inside the HTTP client: now exit 2, one line, before any request."""
    monkeypatch.setenv("PEDIT_API_KEY", key)
    result = invoke("edit", files[0], "fix typos", *remote(server.url), "-y")
    assert result.exit_code == 2, result.stderr
    assert result.stderr.strip().splitlines()[-1] == (
        "pedit: error: an API key must be visible ASCII characters without spaces "
        "(an HTTP header carries no other)"
    )
    assert server.keys == [] and files[0].read_text() == FILES["a.md"][0]


def test_an_interrupt_stops_the_runs_in_flight_with_cancelled():
    """Ctrl-C while the first file is collected: every run in flight ends at its next event
    with errors.Cancelled (the Event run_many's check reads), and the interrupt goes on."""
    import threading
    import time

    from pedit.cli.parallel import run_many
    from pedit.errors import Cancelled
    from pedit.events import TextReceived

    ended: dict[str, type] = {}
    running = threading.Barrier(3)  # both runs and the collector

    class Endless:
        def outcome(self, job, name, show):
            def events():
                while True:
                    yield TextReceived("x")
                    time.sleep(0.01)

            running.wait(10)
            try:
                show(events(), name)
            except BaseException as exc:
                ended[name] = type(exc)
                raise

        def collect(self, job, name, ran):
            running.wait(10)
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_many(Endless(), None, ["a.md", "b.md"], 2)
    assert ended == {"a.md": Cancelled, "b.md": Cancelled}
