"""How often the setting `reuse = "longest"` changes an answer on llama.cpp (issue 71): every
fix task's pieces, cut as `pedit fix` cuts them, each fixed as a file, then edited (one word's
last letter doubled, two thirds into the piece: a typo as the e2e bench's "says" -> "sayss")
and fixed again twice on the same model: with "longest" right after the first fix (the
model holds its prompt and answer, as a resident does after a request), and with "exact"
(the prompt after its shared start read again, as a fresh reading). A flip is a piece
whose two answers differ; the prompt tokens each read are what "longest" saves.

    python scripts/reuse_flips.py train > reuse_train.jsonl   # the training tasks
    python scripts/reuse_flips.py held > reuse_held.jsonl     # the held-out tasks
    python scripts/reuse_flips.py train nospell > reuse_train_nospell.jsonl
    python scripts/reuse_flips.py --summary reuse_train.jsonl reuse_held.jsonl
    python scripts/reuse_flips.py --markdown docs/reuse-flips/*.jsonl   # docs/resident.md's table

`nospell`: no tools' suggestions and no scoring (the answer's path alone, as `pedit edit`
runs): a fix's scoring reads the prompt again from its first scored swap, whatever the
model holds, so with it "longest" keeps only what comes before that swap.
"""

from __future__ import annotations

import json
import re
import sys
import time
from dataclasses import replace

WORD = re.compile(r"[A-Za-z]{4,}")


def edited(text: str) -> str | None:
    """`text` with the last letter of the word two thirds into it doubled; None: no word."""
    words = list(WORD.finditer(text))
    if not words:
        return None
    w = words[(2 * len(words)) // 3 if len(words) > 1 else 0]
    return text[: w.end()] + text[w.end() - 1] + text[w.end() :]


def records(part: str, spelling: bool) -> None:
    from pedit.app import wholefile
    from pedit.app.jobs import Job
    from pedit.app.options import EngineOptions
    from pedit.app.templates import templates
    from pedit.bench.corpus import load_tasks
    from pedit.events import Finished, Prefilled
    from pedit.machine import calibration
    from pedit.models import DEFAULT_MODEL, load
    from pedit.models.progress import quietly
    from pedit.tools import skeleton
    from pedit.ui.runs import answer

    backend = quietly(load(DEFAULT_MODEL))
    options = EngineOptions().costed(calibration.cached_cost(backend) or calibration.measure_cost(backend))
    if not spelling:
        options = replace(options, tools=replace(options.tools, spelling=False))
    job = Job(backend, templates({}, DEFAULT_MODEL)["fix"], None, options)  # as the CLI's: costed
    longest, exact = (replace(job, options=replace(job.options, reuse=r)) for r in ("longest", "exact"))

    def fix(j: Job, text: str, name: str) -> dict:
        seen: list[Prefilled] = []

        def render(events, label):
            evs = list(events)
            seen.extend(e for e in evs if isinstance(e, Prefilled))
            return evs[-1] if isinstance(evs[-1], Finished) else None

        t0 = time.perf_counter()
        try:
            out = answer(wholefile.rewrite(j, text, name), render).text
        except Exception as exc:  # a refusal: the same on both ways, or a flip
            out = f"<{type(exc).__name__}: {exc}>"
        return {"text": out, "seconds": time.perf_counter() - t0,
                "read": sum(p.prompt_tokens - p.reused for p in seen), "runs": len(seen)}  # fmt: skip

    for task in (t for t in load_tasks() if t.command == "fix" and t.heldout == (part == "held")):
        text = task.text()
        mine = wholefile._english_of(job, text)
        sk = wholefile._skeleton(mine, text, task.file)
        joined = skeleton.joined_lines(sk) if sk else frozenset()
        for i, piece in enumerate(mine.pieces(text, task.file, "rewrite", joined)):
            changed = edited(piece)
            if changed is None:
                continue
            fix(longest, piece, task.file)  # what the model holds: this piece's prompt and answer
            got = fix(longest, changed, task.file)
            want = fix(exact, changed, task.file)
            flip = got["text"] != want["text"]
            print(json.dumps({"task": task.id, "piece": i, "flip": flip,
                              "longest": {k: v for k, v in got.items() if k != "text"},
                              "exact": {k: v for k, v in want.items() if k != "text"},
                              **({"answers": [got["text"], want["text"]]} if flip else {})}),
                  flush=True)  # fmt: skip


def markdown(paths: list[str]) -> None:
    """The table docs/resident.md shows: one row per file of records."""
    print("| records | edited pieces (tasks) | answers `longest` changed | prompt tokens read, longest / exact |")
    print("|---|---:|---:|---:|")
    for path in paths:
        rows = [json.loads(line) for line in open(path, encoding="utf-8")]
        flips = sum(r["flip"] for r in rows)
        read = [sum(r[k]["read"] for r in rows) for k in ("longest", "exact")]
        print(f"| `{path}` | {len(rows)} ({len({r['task'] for r in rows})}) | {flips} ({flips / len(rows):.1%}) "
              f"| {read[0]} / {read[1]} ({read[0] / read[1]:.2f}x) |")


def summary(paths: list[str]) -> None:
    for path in paths:
        rows = [json.loads(line) for line in open(path, encoding="utf-8")]
        flips = sum(r["flip"] for r in rows)
        read = {k: sum(r[k]["read"] for r in rows) for k in ("longest", "exact")}
        secs = {k: sum(r[k]["seconds"] for r in rows) for k in ("longest", "exact")}
        tasks = len({r["task"] for r in rows})
        rate = flips / max(1, len(rows))
        print(f"{path}: {len(rows)} edited pieces of {tasks} tasks; flips {flips} ({rate:.1%});"
              f" prompt tokens read: longest {read['longest']}, exact {read['exact']}"
              f" ({read['longest'] / max(1, read['exact']):.2f}x); seconds: longest {secs['longest']:.1f},"
              f" exact {secs['exact']:.1f}")  # fmt: skip


if __name__ == "__main__":
    if sys.argv[1:2] == ["--summary"]:
        summary(sys.argv[2:])
    elif sys.argv[1:2] == ["--markdown"]:
        markdown(sys.argv[2:])
    elif sys.argv[1:2] in (["train"], ["held"]) and sys.argv[2:] in ([], ["nospell"]):
        records(sys.argv[1], spelling=sys.argv[2:] != ["nospell"])
    else:
        sys.exit(__doc__)
