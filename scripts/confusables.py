"""Where confusables.THRESHOLD comes from: every confusion-set swap `fix` scores on the
report's fix tasks, with the model's Δ (pedit/engine/likelihood.py) and whether the swap was
the right correction, through the product's own path (Job.pieces, Job.request, Job.scored)
with the default model. A swap is *right* when the correct text (SOURCES.md) has the
replacement where the file has the word (a word-level alignment of file and correct text).

    python scripts/confusables.py            # the table and, per threshold, right/wrong swaps taken

THRESHOLD is chosen on the tuning tasks (held-out ones shown apart): the lowest Δ above
which no wrong swap is taken there. About 2-4 minutes on 2 cores.
"""

from __future__ import annotations

import difflib
import re
import sys

from pedit.app import confusables
from pedit.app.jobs import EngineOptions, Job
from pedit.app.templates import BUILTIN
from pedit.bench.corpus import load_tasks
from pedit.engine import likelihood
from pedit.models import load

_WORD = re.compile(r"[A-Za-z]+(?:'[a-z]+)?")


def corrections(text: str, ref: str) -> dict[int, str]:
    """{offset of a word in text: the word the correct text has there}, one word for one."""
    a = [(m.start(), m.group()) for m in _WORD.finditer(text)]
    b = [m.group() for m in _WORD.finditer(ref)]
    out = {}
    ops = difflib.SequenceMatcher(None, [w for _, w in a], b, autojunk=False).get_opcodes()
    for tag, i1, i2, j1, j2 in ops:
        if tag == "replace" and i2 - i1 == j2 - j1:
            out.update({a[i][0]: b[j] for i, j in zip(range(i1, i2), range(j1, j2), strict=True)})
    return out


def main() -> None:
    backend = load("qwen2.5-coder-1.5b")
    likelihood.PREFILTER = float("inf") if "--all" in sys.argv else likelihood.PREFILTER
    job = Job(backend, BUILTIN["fix"], None, EngineOptions())
    rows = []  # (set, task, word, replacement, Δ or None, right)
    for t in load_tasks():
        if t.command != "fix":
            continue
        text, fixes, at = t.text(), corrections(t.text(), t.reference()), 0
        for piece in job.pieces(text, t.file, "rewrite"):
            req = job.request(piece, t.file)
            swaps = confusables.candidates(piece, t.file)
            _, _, got = job.scored(req)
            for w, d in zip(swaps, got.deltas if got else [None] * len(swaps), strict=True):
                right = fixes.get(at + w.start) == w.replacement
                rows.append(("heldout" if t.heldout else "tuning", t.id, w.word, w.replacement, d, right))
            at += len(piece)
    print("| set | task | word | swap | Δ (nats) | right |\n|---|---|---|---|---:|:---:|")
    for r in sorted(rows, key=lambda r: -(r[4] if r[4] is not None else -1e9)):
        if r[4] is not None and (r[4] > -2 or r[5]) or r[5]:
            print(f"| {r[0]} | {r[1]} | {r[2]} | {r[3]} | {'skipped' if r[4] is None else f'{r[4]:.2f}'} | "
                  f"{'yes' if r[5] else ''} |")  # fmt: skip
    print(
        f"\n{len(rows)} swaps; skipped by the prefilter: {sum(r[4] is None for r in rows)} "
        f"({sum(r[4] is None and r[5] for r in rows)} of them right)\n"
    )
    print("| threshold | tuning: right taken | tuning: wrong | held out: right taken | held out: wrong |")
    print("|---:|---:|---:|---:|---:|")
    for th in (0.0, 1.0, 2.0, 3.0, 4.0, 5.0):
        cells = []
        for s in ("tuning", "heldout"):
            mine = [r for r in rows if r[0] == s]
            taken = [r for r in mine if r[4] is not None and r[4] > th]
            cells += [
                f"{sum(r[5] for r in taken)} / {sum(r[5] for r in mine)}",
                str(sum(not r[5] for r in taken)),
            ]
        print(f"| {th:.1f} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
