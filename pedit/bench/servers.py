"""Servers on this machine, for the benchmarks: llama.cpp's own `llama-server` (built by
scripts/build_llama_server.sh from the sources vendored in the pinned llama-cpp-python)
with its n-gram self-speculation, and `pedit serve`, each started for one request.

A measured request is the first of its prompt, as a user's new file would be: the server
is started for it (untimed), serves a one-token request of another prompt (warm, but
nothing of this prompt in any cache or n-gram table; ngram-mod keeps its table across
requests, and a repeated request would find the answer there), then the request is timed
from the `openai` client's call to its reply. The request is the chat request pedit's
remote backend sends for the task (the system prompt, the instruction, the fenced file),
temperature 0, not streamed; pedit serve gets the file as `prediction`, which
llama-server ignores.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from ..app.templates import templates
from ..engine.remote import remote_prompt
from ..machine.cpus import usable_cpus
from ..models import DEFAULT_MODEL, cache_root
from ..request import EditRequest
from .corpus import CORPUS, Task

# llama-server's configurations: its n-gram speculations (plain decoding without them)
PEERS = ("llama-server", "llama-server ngram-simple", "llama-server ngram-mod")
BINARY = cache_root() / "llama-server" / "llama-server"  # where build_llama_server.sh puts it


def peer_build(binary: Path = BINARY) -> str:
    """The peer build's instruction sets in words (build_llama_server.sh's instructions.txt,
    what -march=native enabled), or '' when it was not recorded."""
    from ..models.nativebuild import describe

    try:
        names = (binary.parent / "instructions.txt").read_text(encoding="utf-8").split()
    except OSError:
        return ""
    return f"{describe(names)} (native)" if names else ""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(args: list[str], port: int, env: dict[str, str] | None = None) -> subprocess.Popen:
    """A server process, once it answers /v1/models (SystemExit when it exits or hangs)."""
    env = {**(env or os.environ), "HF_HUB_OFFLINE": "1"}
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    try:
        return ready(proc, port)
    except RuntimeError as exc:
        raise SystemExit(str(exc)) from None


def ready(proc: subprocess.Popen, port: int, seconds: float = 600) -> subprocess.Popen:
    """`proc`, once the server it runs answers http://127.0.0.1:port/v1/models; RuntimeError
    when it exits first (with the tail of its stderr, when that is a pipe) or does not
    answer within `seconds` (then it is killed)."""
    name = " ".join(map(str, proc.args[:4]))
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            tail = proc.stderr.read().decode(errors="replace")[-2000:] if proc.stderr else ""
            raise RuntimeError(f"{name} exited with {proc.returncode}" + (f": {tail}" if tail else ""))
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2):
                return proc
        except OSError:
            time.sleep(0.5)
    proc.kill()
    raise RuntimeError(f"{name} did not start")


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    proc.wait(60)


def client_for(port: int):
    import openai

    return openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="none", max_retries=0, timeout=900)


def flush(client, model: str) -> None:
    """A one-token request whose prompt shares nothing with the tasks': the next one starts cold."""
    nonce = os.urandom(8).hex()
    client.chat.completions.create(model=model, max_tokens=1, temperature=0,
                                   messages=[{"role": "user", "content": f"{nonce} Say ok."}])  # fmt: skip


def request_for(task: Task) -> dict:
    """The chat request pedit's remote backend sends for the task, and its prediction."""
    t = templates({})[task.command]
    text = (CORPUS / task.file).read_text(encoding="utf-8")
    req = EditRequest(text, t.render(task.instruction or None), task.file, t.system)
    msgs, _, _, prediction = remote_prompt(req, "rewrite", False)
    return {"id": task.id, "messages": msgs, "prediction": prediction, "max_tokens": 2 * len(text) // 3 + 256}


def server_args(config: str, binary: Path, gguf: Path, port: int) -> list[str]:
    """`pedit serve` (the default model and settings) or llama-server on all usable cores."""
    if config == "pedit serve":
        return [sys.executable, "-m", "pedit", "serve", "-m", DEFAULT_MODEL, "--port", str(port)]
    cores = str(usable_cpus())
    args = [str(binary), "-m", str(gguf), "--port", str(port), "-c", "8192", "-t", cores, "-tb", cores,
            "--parallel", "1", "--no-webui", "--log-disable"]  # fmt: skip
    if " " in config:
        args += ["--spec-type", config.split()[1]]
    return args


def measure(config: str, r: dict, binary: Path, gguf: Path, env: dict[str, str] | None = None) -> dict:
    """One request (`request_for`) timed on a server started for it: seconds, the answer's
    tokens and text."""
    port = free_port()
    server = start(server_args(config, binary, gguf, port), port, env)
    try:
        client = client_for(port)
        flush(client, DEFAULT_MODEL)  # warm: the model has served a request, of another prompt
        kwargs = {"model": DEFAULT_MODEL, "temperature": 0, "max_tokens": r["max_tokens"],
                  "messages": r["messages"]}  # fmt: skip
        if config == "pedit serve":
            kwargs["prediction"] = {"type": "content", "content": r["prediction"]}
        t0 = time.perf_counter()
        reply = client.chat.completions.create(**kwargs)
        seconds = time.perf_counter() - t0
    finally:
        stop(server)
    return {"config": config, "id": r["id"], "seconds": seconds, "tokens": reply.usage.completion_tokens,
            "text": reply.choices[0].message.content, **split(reply)}  # fmt: skip


def split(reply) -> dict:
    """What the server says its request spent: prompt_seconds, answer_seconds (pedit
    serve's `pedit` figures, llama-server's `timings`; None where it says nothing), and
    the prompt's tokens, those it found cached among them."""
    extra = reply.model_extra or {}
    mine, theirs = extra.get("pedit") or {}, extra.get("timings") or {}
    if "decode_seconds" in mine:
        prompt, answer = mine["prefill_seconds"], mine["decode_seconds"]
    elif "predicted_ms" in theirs:
        prompt, answer = theirs["prompt_ms"] / 1000, theirs["predicted_ms"] / 1000
    else:
        prompt = answer = None
    details = reply.usage.prompt_tokens_details
    cached = (details.cached_tokens if details else None) or theirs.get("cache_n") or 0
    return {"prompt_seconds": prompt, "answer_seconds": answer, "prompt_tokens": reply.usage.prompt_tokens,
            "cached_tokens": cached}  # fmt: skip
