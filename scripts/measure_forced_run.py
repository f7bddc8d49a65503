"""Where to cut a draft that runs into a grammar's forced text (EditOptions.forced_run):
the default `fix` of Markdown files with links, code and tables, each run once per
setting, interleaved, on one loaded model; the answer's seconds (decode), forward passes,
rows read and rows forced, summed over the files and the repeats. Every setting must
write the same text (the cut moves tokens between passes, never changes one).

    python scripts/measure_forced_run.py [--runs 0,8,16,32] [--repeats 2] [--tasks skel-,...]

The default tasks are the skeleton set's tuning part (tasks.toml: skeleton, not held out).
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace

from pedit import models
from pedit.app.jobs import Job
from pedit.app.options import EngineOptions
from pedit.app.refactor import rewrite
from pedit.app.templates import BUILTIN
from pedit.bench.corpus import load_tasks
from pedit.events import drain
from pedit.engine.costmodel import measure
from pedit.machine.calibration import cpu_name
from pedit.machine.cpus import usable_cpus
from pedit.models.progress import quietly
from pedit.ui.runs import answer


def fix(backend, options: EngineOptions, text: str, name: str) -> tuple[str, list]:
    stats = []

    def show(events, label):
        finished = drain(events)
        stats.append(finished.stats)
        return finished

    job = Job(backend, BUILTIN["fix"], None, options)
    return answer(rewrite(job, text, name), show).text, stats


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-m", "--model", default=models.DEFAULT_MODEL)
    ap.add_argument("--runs", default="0,8,16,32", help="the forced_run settings compared")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--tasks", default="", help="task ids (substrings); default: the skeleton set's tuning part")
    a = ap.parse_args()
    tasks = load_tasks()
    if a.tasks:
        tasks = [t for t in tasks if any(w in t.id for w in a.tasks.split(","))]
    else:
        tasks = [t for t in tasks if t.skeleton and not t.heldout]
    backend = quietly(models.load(a.model))
    cost = measure(backend)
    settings = [int(x) for x in a.runs.split(",")]
    totals = {r: {"seconds": 0.0, "decode": 0.0, "passes": 0, "rows": 0, "forced": 0, "tokens": 0} for r in settings}
    texts: dict[tuple[str, int], str] = {}
    for _ in range(a.repeats):
        for task in tasks:
            for r in settings:
                options = replace(EngineOptions(), edit=replace(EngineOptions().edit, forced_run=r)).costed(cost)
                t = time.perf_counter()
                out, stats = fix(backend, options, task.text(), task.file)
                got = totals[r]
                got["seconds"] += time.perf_counter() - t
                for s in stats:
                    got["decode"] += s.decode_seconds
                    got["passes"] += s.forward_passes
                    got["rows"] += s.rows_read
                    got["forced"] += s.coalesced_tokens
                    got["tokens"] += s.completion_tokens
                texts.setdefault((task.id, r), out)
    same = all(texts[(t.id, r)] == texts[(t.id, settings[0])] for t in tasks for r in settings)
    print(f"{a.model} on llama.cpp, {cpu_name()}, {usable_cpus()} cores; {len(tasks)} files x {a.repeats}")
    print(f"the same text under every setting: {'yes' if same else 'NO'}")
    print("forced_run | seconds | answer s | passes | rows read | forced | tokens")
    for r in settings:
        g = totals[r]
        print(f"{r} | {g['seconds']:.1f} | {g['decode']:.1f} | {g['passes']} | {g['rows']} | {g['forced']} | {g['tokens']}")


if __name__ == "__main__":
    main()
