"""What one forward pass over n tokens costs on llama.cpp, with logits for every row (a
verification) and for the last one only (reading a prompt); the figures docs/engine.md
quotes for the cost model's grid (multiples of 64 run on faster kernels).

    python scripts/measure_pass_sizes.py [-m MODEL] [--at 800] [--sizes 63,64,65,128,256]
"""

from __future__ import annotations

import argparse
import statistics
import time

from pedit import models
from pedit.engine.costmodel import FILLER
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
    a = ap.parse_args()
    backend = quietly(models.load(a.model))
    tokens = backend.tokenize(FILLER * 80)
    backend.eval(tokens[: a.at])
    print(f"{a.model} on llama.cpp, {cpu_name()}, {usable_cpus()} cores, after {a.at} tokens")
    print("n | all rows s | tok/s | last row s | tok/s")
    for n in (int(x) for x in a.sizes.split(",")):
        every, last = timed(backend, tokens, a.at, n, n), timed(backend, tokens, a.at, n, 1)
        print(f"{n} | {every:.3f} | {n / every:.1f} | {last:.3f} | {n / last:.1f}")


if __name__ == "__main__":
    main()
