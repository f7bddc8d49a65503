"""What one forward pass over n tokens costs on llama.cpp, with logits for every row (a
verification) and for the last one only (reading a prompt); the figures docs/engine.md
quotes for the cost model's grid (multiples of 64 run on faster kernels).

    python scripts/measure_pass_sizes.py [-m MODEL] [--at 800] [--sizes 63,64,65,128,256]
    python scripts/measure_pass_sizes.py --llama-bench ~/.cache/pedit/llama-server/llama-bench

With --llama-bench, pedit's prompt-reading rate (a pass of --read tokens, the last row's
logits, after --at tokens, pedit's own backend) is set beside llama.cpp's own llama-bench
on the same GGUF, threads and depth (`-p READ -n 0 -d AT`; scripts/build_llama_server.sh
builds it natively), run after pedit's model is closed: the figure docs/models.md quotes,
with both builds' instruction sets.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import time
from pathlib import Path

from pedit import models
from pedit.bench.servers import peer_build
from pedit.engine.costmodel import FILLER
from pedit.machine import build
from pedit.machine.calibration import cpu_name
from pedit.machine.cpus import usable_cpus
from pedit.models.progress import quietly


def timed(backend, tokens, at: int, n: int, n_logits: int, repeats: int = 3) -> float:
    backend.eval(tokens[at : at + n], n_logits=n_logits)  # warm-up: a new batch shape allocates
    backend.truncate(at)
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        backend.eval(tokens[at : at + n], n_logits=n_logits)
        times.append(time.perf_counter() - t)
        backend.truncate(at)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-m", "--model", default=models.DEFAULT_MODEL)
    ap.add_argument("--at", type=int, default=800, help="tokens of context before each pass")
    ap.add_argument("--sizes", default="1,16,32,48,63,64,65,96,127,128,129,192,255,256,512")
    ap.add_argument("--llama-bench", type=Path, help="llama.cpp's llama-bench: compare reading rates")
    ap.add_argument("--read", type=int, default=512, help="the prompt pass compared with llama-bench")
    a = ap.parse_args()
    backend = quietly(models.load(a.model))
    tokens = backend.tokenize(FILLER * 80)
    if a.at:
        backend.eval(tokens[: a.at])
    print(f"{a.model} on llama.cpp, {cpu_name()}, {usable_cpus()} cores, after {a.at} tokens")
    print(f"pedit's llama.cpp: {build.variant()}")
    if a.llama_bench:
        mine = a.read / timed(backend, tokens, a.at, a.read, 1, repeats=5)
        gguf, threads = str(backend.path), str(backend.n_threads)
        backend.close()
        theirs = llama_bench(a.llama_bench, gguf, threads, a.read, a.at)
        print(f"llama-bench: {peer_build(a.llama_bench) or 'instruction sets not recorded'}")
        print(
            f"reading {a.read} tokens after {a.at}: pedit {mine:.1f} tok/s, llama-bench {theirs:.1f} tok/s, "
            f"pedit / llama-bench {mine / theirs:.2f}x"
        )
        return
    print("n | all rows s | tok/s | last row s | tok/s")
    for n in (int(x) for x in a.sizes.split(",")):
        every, last = timed(backend, tokens, a.at, n, n), timed(backend, tokens, a.at, n, 1)
        print(f"{n} | {every:.3f} | {n / every:.1f} | {last:.3f} | {n / last:.1f}")


def llama_bench(binary: Path, gguf: str, threads: str, n: int, at: int, repeats: int = 5) -> float:
    """llama-bench's prompt rate (tok/s, its mean over `repeats`) for n tokens after `at`."""
    args = [str(binary), "-m", gguf, "-t", threads, "-p", str(n), "-n", "0", "-d", str(at),
            "-r", str(repeats), "-o", "json"]  # fmt: skip
    done = subprocess.run(args, capture_output=True, text=True, check=True)
    return float(json.loads(done.stdout)[0]["avg_ts"])


if __name__ == "__main__":
    main()
