"""What the fix's scoring reads, and what its prefilters may skip without changing a
decision (issue 71): every fix task's pieces, cut and asked as `pedit fix` does (Job.pieces,
Job.request, fix.swaps_of, the default model), each swap the scoring reads with its kind,
its first token's gain over the file's (`left`, what a prefilter reads), its Δ, the least Δ
its swap is acted on at (confusables.least) and its window's rows (what reading it costs).

    python scripts/scoring_rows.py train > train.jsonl   # the training tasks (about 25 min, 2 cores)
    python scripts/scoring_rows.py held > held.jsonl     # the held-out tasks
    python scripts/scoring_rows.py --summary train.jsonl held.jsonl

The summary gives, per kind, the swaps read, their rows, how many were acted on, and the
lowest `left` among those: a prefilter that keeps every swap from that `left` up skips
only swaps that change nothing (COMMA_PREFILTER's comment in pedit/tools/confusables.py).
"""

from __future__ import annotations

import collections
import json
import sys
import time


def records(part: str) -> None:
    from pedit.app import wholefile
    from pedit.app.jobs import Job
    from pedit.app.options import EngineOptions
    from pedit.app.templates import templates
    from pedit.bench.corpus import load_tasks
    from pedit.engine import likelihood
    from pedit.engine.prompt import prompt_tokens
    from pedit.models import DEFAULT_MODEL, load
    from pedit.models.progress import quietly
    from pedit.tools import confusables, fix, skeleton

    backend = quietly(load(DEFAULT_MODEL))
    job = Job(backend, templates({}, DEFAULT_MODEL)["fix"], None, EngineOptions())
    for task in (t for t in load_tasks() if t.command == "fix" and t.heldout == (part == "held")):
        text = task.text()
        mine = wholefile._english_of(job, text)
        sk = wholefile._skeleton(mine, text, task.file)
        for piece in mine.pieces(text, task.file, "rewrite", skeleton.joined_lines(sk) if sk else frozenset()):
            req = mine.request(piece, task.file)
            swaps = fix.swaps_of(req, mine.options.tools)
            if not swaps:
                continue
            base = prompt_tokens(backend, req)
            tokens = fix._variants(backend, req, base, swaps, True)
            t0 = time.perf_counter()
            got = likelihood.score(backend, base, tokens, prefilter=[w.prefilter for w in swaps])
            read = []
            for w, v, d, left in zip(swaps, tokens, got.deltas, got.left, strict=True):
                if d is not None:
                    p, qb, qv = likelihood._span(base, v)
                    rows = max(0, qv + min(likelihood.WINDOW, len(base) - qb) - 1 - p)
                    read.append({"kind": w.kind, "word": w.word, "replacement": w.replacement, "left": left,
                                 "delta": d, "least": confusables.least(w), "rows": rows})  # fmt: skip
            print(json.dumps({"task": task.id, "heldout": task.heldout, "swaps": len(swaps), "read": read,
                              "window_seconds": time.perf_counter() - t0 - got.base_seconds}), flush=True)  # fmt: skip


def acted(x: dict) -> bool:
    """Does fix.scored act on this swap? Harper's at SURE_THRESHOLD, the others above `least`."""
    return x["delta"] >= x["least"] if x["kind"] == "harper" else x["delta"] > x["least"]


def summary(paths: list[str]) -> None:
    for path in paths:
        pieces = [json.loads(line) for line in open(path, encoding="utf-8")]
        swaps = [x for p in pieces for x in p["read"]]
        rows = sum(x["rows"] for x in swaps)
        print(f"{path}: {len(pieces)} pieces, {len(swaps)} swaps read, {rows} window rows")
        kinds = collections.defaultdict(list)
        for x in swaps:
            kinds[x["kind"]].append(x)
        for kind, xs in sorted(kinds.items(), key=lambda kv: -sum(x["rows"] for x in kv[1])):
            taken = [x["left"] for x in xs if acted(x)]
            low = f"{min(taken):.2f}" if taken else "-"
            print(f"  {kind:10} read {len(xs):4}  rows {sum(x['rows'] for x in xs):5}  acted on {len(taken):3}  "
                  f"lowest left acted on {low}")  # fmt: skip


if __name__ == "__main__":
    if sys.argv[1] == "--summary":
        summary(sys.argv[2:])
    else:
        records(sys.argv[1])
