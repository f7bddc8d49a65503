"""The remote backend against real servers on a real model (qwen2.5-coder-0.5b), each in
its own process on loopback: `pedit serve`, whose rewrite is the local one token for token
(plain decoding on both sides, so that no batch shape differs), and llama.cpp's server as
llama-cpp-python packages it (`python -m llama_cpp.server`), which drops `prediction` and
does not continue a primed answer: pedit asks it plainly and keeps what is inside the
model's fence."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest
from servers import started

from pedit.bench.servers import free_port

pytestmark = pytest.mark.slow
CALC = Path(__file__).parents[1] / "examples" / "calc.py"
ASK = "rename values to numbers"


def env(cache: Path) -> dict:
    return {**os.environ, "HF_HUB_OFFLINE": "1", "XDG_CACHE_HOME": str(cache)}


def pedit(*args: str, cache: Path) -> subprocess.CompletedProcess:
    exe = Path(sys.executable).with_name("pedit")
    return subprocess.run([exe, *args], env=env(cache), capture_output=True, text=True, timeout=900)


@pytest.fixture(scope="module")
def gguf(real_cache) -> Path:
    code = (
        "from pedit.models import prepare; from pedit.models.progress import quietly; "
        "print(quietly(prepare('qwen2.5-coder-0.5b', 'llama.cpp')).path)"
    )
    out = subprocess.run([sys.executable, "-c", code], env=env(real_cache), capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return Path(out.stdout.strip())


def test_through_pedit_serve_the_rewrite_is_the_local_one(real_cache, tmp_path):
    port = free_port()
    exe = str(Path(sys.executable).with_name("pedit"))
    server = started([exe, "serve", "-m", "qwen2.5-coder-0.5b", "--port", str(port), "--speculate", "off"],
                     port, real_cache)  # fmt: skip
    try:
        url = f"http://127.0.0.1:{port}/v1"
        there = pedit("refactor", str(CALC), ASK, "-b", "openai", "--base-url", url, "--stdout",
                      cache=real_cache)  # fmt: skip
    finally:
        server.terminate()
        server.wait(30)
    local = pedit("refactor", str(CALC), ASK, "-m", "qwen2.5-coder-0.5b", "--speculate", "off", "--stdout",
                  cache=real_cache)  # fmt: skip
    assert there.returncode == local.returncode == 0, there.stderr + local.stderr
    assert there.stdout == local.stdout != CALC.read_text()


def test_llama_cpp_server_drops_the_prediction_and_the_file_is_still_rewritten(gguf, real_cache, tmp_path):
    port = free_port()
    args = [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--model_alias", "qwen",
            "--port", str(port), "--n_ctx", "4096", "--verbose", "false"]  # fmt: skip
    server = started(args, port, real_cache)
    path = tmp_path / "calc.py"
    path.write_text(CALC.read_text())
    try:
        url = f"http://127.0.0.1:{port}/v1"
        result = pedit("refactor", str(path), ASK, "-b", "openai", "--base-url", url, "-m", "qwen", "-y",
                       cache=real_cache)  # fmt: skip
    finally:
        server.terminate()
        server.wait(30)
    assert result.returncode == 0, result.stderr
    assert "it ignores `prediction`" in result.stderr
    new = path.read_text()
    ast.parse(new)  # what was inside the model's fence: Python, no preamble
    assert new != CALC.read_text()  # (what the 0.5B model makes of the instruction is its own affair)
