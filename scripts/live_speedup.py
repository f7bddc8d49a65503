"""How true is the live speedup? For each task: plain decoding's measured decode time, and
pedit's estimate of it (the baseline of the speedup it shows), two ways:
  priced   the calibrated one-token price at each token's context, summed (what pedit shows)
  scaled   the same, times the run's drift: its passes' measured time over their price
           (the way this was tried first; the passes after a batch of another size are
           slower than plain steps, so it overstates plain decoding)

    python scripts/live_speedup.py [--model M] [--backend B] TASK_ID...

Prints one line per task; numbers are this machine's, at the time of the run.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from pedit import models  # noqa: E402
from pedit.bench.corpus import load_tasks  # noqa: E402
from pedit.engine import decode  # noqa: E402
from pedit.engine.costmodel import measure  # noqa: E402
from pedit.engine.edit import EditOptions, edit_events  # noqa: E402
from pedit.events import drain  # noqa: E402
from pedit.models.progress import quietly  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("tasks", nargs="+")
    ap.add_argument("--model", default=models.DEFAULT_MODEL)
    ap.add_argument("--backend", default="llama.cpp")
    args = ap.parse_args()
    backend = quietly(models.load(args.model, args.backend, n_ctx=4096))
    t0 = time.perf_counter()
    cost = measure(backend)
    print(f"{args.model} on {args.backend}: calibration {time.perf_counter() - t0:.1f} s")
    passes = {"spent": 0.0, "paid": 0.0}  # the speculative run's passes: measured and priced
    step = decode.Tracker.step

    def spy(self, **kw):
        if self.cost is not None:
            passes["spent"] += kw["seconds"]
            passes["paid"] += self.cost.cost(kw.get("rows", 1), kw.get("at", 0))
        step(self, **kw)

    decode.Tracker.step = spy
    tasks = {t.id: t for t in load_tasks()}
    for tid in args.tasks:
        task = tasks[tid]
        req = task.request(args.model)
        plain = drain(edit_events(backend, req, EditOptions(speculate="off", max_tokens=task.max_tokens)))
        passes.update(spent=0.0, paid=0.0)
        t_run = drain(
            edit_events(backend, req, EditOptions(speculate="auto", cost=cost, max_tokens=task.max_tokens))
        )
        priced = t_run.stats.plain_step_seconds * t_run.stats.completion_tokens
        drift = passes["spent"] / passes["paid"]
        real = plain.stats.decode_seconds
        print(
            f"{tid}: plain {real:.2f} s; priced {priced:.2f} s ({priced / real - 1:+.1%}); "
            f"scaled by the drift {drift:.2f}: {priced * drift:.2f} s ({priced * drift / real - 1:+.1%}); "
            f"pedit {t_run.stats.decode_seconds:.2f} s, speedup shown {t_run.stats.speedup:.2f}x, "
            f"measured {real / t_run.stats.decode_seconds:.2f}x"
        )
    backend.close()


if __name__ == "__main__":
    main()
