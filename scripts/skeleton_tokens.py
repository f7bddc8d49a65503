"""What bounds the share of a fix's tokens that the skeleton's grammar can force: per fix
task, the file's tokens (the default model's tokenizer) by where they lie, as `fix` cuts
the file into runs (app/wholefile.py, tools/skeleton):

    no run      in a piece with no prose: no model run at all
    prose       in a run, touching a hole (drawn: the model writes it)
    soft        a paragraph's line break in a run: "\\n" or " ", the model's choice (drawn)
    skeleton    in a run, wholly in the skeleton; of them, `starts`: the first token of each
                stretch of skeleton, where the model decides that the prose before it ends
                (drawn, or a draft verified), and the rest, which the grammar forces

    at most forced or skipped = (no run + skeleton - starts) / tokens  vs  the skeleton's
    share, (no run's skeleton + soft + skeleton) / tokens

    python scripts/skeleton_tokens.py [--tasks md-click-fix,...]

Default tasks: the e2e suite's fixes (pedit/bench/e2e.py TASKS). No model run: the
model is loaded for its tokenizer only.
"""

from __future__ import annotations

import argparse

from pedit import models
from pedit.app import wholefile
from pedit.app.jobs import Job
from pedit.app.options import EngineOptions
from pedit.app.templates import BUILTIN
from pedit.bench import e2e
from pedit.bench.corpus import load_tasks
from pedit.machine.calibration import cpu_name
from pedit.models.progress import quietly
from pedit.tools import skeleton
from pedit.tools.skeleton import grammar


def where(backend, text: str, name: str) -> dict[str, int]:
    sk = skeleton.of(text, name)
    job = Job(backend, BUILTIN["fix"], None, EngineOptions())
    pieces = job.pieces(text, name, "rewrite", skeleton.joined_lines(sk))
    runs, at = [], 0  # (start, end, runs a model)
    for p in pieces:
        runs.append((at, at + len(p), wholefile._forced(sk, at, at + len(p)) is not False))
        at += len(p)
    holes = sk.holes()
    soft = set()
    for (_, b0), (a1, _) in zip(holes, holes[1:], strict=False):
        if grammar.SOFT.fullmatch(text, b0, a1):
            soft.update(range(b0, a1))
    inside = set()
    for s in sk.spans:
        inside.update(range(s.start, s.end))
    offset, n = [], 0  # the character each byte belongs to
    for i, c in enumerate(text):
        offset += [i] * len(c.encode())
    got = {"tokens": 0, "no run": 0, "no run, skeleton": 0, "prose": 0, "soft": 0, "skeleton": 0, "starts": 0}
    last = "prose"
    for t in backend.tokenize(text):
        size = len(backend.token_bytes(t))
        chars = sorted({offset[b] for b in range(n, min(n + size, len(offset)))})
        n += size
        got["tokens"] += 1
        if not chars:
            continue
        ran = next(r for a, b, r in runs if a <= chars[0] < b)
        kind = (
            "soft"
            if all(c in soft for c in chars)
            else "skeleton"
            if all(c in inside for c in chars)
            else "prose"
        )
        if not ran:
            got["no run"] += 1
            got["no run, skeleton"] += kind != "prose"
        else:
            got[kind] += 1
            got["starts"] += kind == "skeleton" and last != "skeleton"
        last = kind
    return got


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", default="", help="task ids (substrings); default: the e2e suite's fixes")
    a = ap.parse_args()
    ids = a.tasks.split(",") if a.tasks else e2e.TASKS.split(",")
    tasks = [t for t in load_tasks() if t.command == "fix" and any(w in t.id for w in ids)]
    backend = quietly(models.load(models.DEFAULT_MODEL))
    print(f"{models.DEFAULT_MODEL}'s tokenizer ({cpu_name()}); the fix's runs as `pedit fix` cuts the file")
    print(
        "task | tokens | no run | prose | soft | skeleton (starts) | at most forced or no run | "
        "skeleton share"
    )
    for task in tasks:
        g = where(backend, task.text(), task.file)
        t = g["tokens"]
        bound = (g["no run"] + g["skeleton"] - g["starts"]) / t
        share = (g["no run, skeleton"] + g["soft"] + g["skeleton"]) / t
        where_ = f"{g['no run']} | {g['prose']} | {g['soft']} | {g['skeleton']} ({g['starts']})"
        print(f"{task.id} | {t} | {where_} | {bound:.0%} | {share:.0%}")


if __name__ == "__main__":
    main()
