"""Where confusables.THRESHOLD comes from: every confusion-set swap `fix` scores on the
report's fix tasks, with the model's Δ (pedit/engine/likelihood.py) and whether the swap was
the right correction, through the product's own path (Job.pieces, Job.request, Job.scored)
with the default model. A swap is *right* when the correct text (SOURCES.md) has the
replacement where the file has the word (a word-level alignment of file and correct text).

    python scripts/confusables.py            # the table and, per threshold, right/wrong swaps taken
    python scripts/confusables.py --all      # every swap read: also what each prefilter skips
    python scripts/confusables.py --windows 10,8,6,5,4   # per window K: swaps taken, the gap
    python scripts/confusables.py --guess    # per Δ: the swaps the default output makes
    python scripts/confusables.py --sure     # per Δ: the draft's suggestions the default output made
    python scripts/confusables.py --tasks lrs- --sentences   # those tasks, each sentence alone

The dropped articles and the real words (tools/options.py: ARTICLES off by default, REAL_WORDS on)
are scored too, each as its own kind: ARTICLE_THRESHOLD, ARTICLE_PREFILTER and
REAL_THRESHOLD come from their rows.

THRESHOLD is chosen on the tuning tasks (held-out ones shown apart): about the middle of
the gap between the highest-scoring wrong swap and the lowest-scoring right one there.
GUESS (--guess) is chosen on the same tasks from what the model did, not from what was
right: a swap below THRESHOLD goes into the speculative draft alone when the default
model's output in docs/quality.json makes it more often than not from that Δ up.
About 3 minutes on 2 cores.
"""

from __future__ import annotations

import difflib
import json
import re
import sys
from pathlib import Path

from pedit.app.jobs import Job
from pedit.app.options import EngineOptions
from pedit.app.templates import templates
from pedit.bench import levers
from pedit.bench.corpus import load_tasks
from pedit.bench.quality import distance, tokens
from pedit.engine import likelihood
from pedit.models import load
from pedit.models.progress import quietly
from pedit.tools import confusables, fix
from pedit.tools.options import ToolOptions

_WORD = re.compile(r"[A-Za-z]+(?:'[a-z]+)?")


ARTICLES = ("a", "an", "the")


def corrections(text: str, ref: str) -> dict[int, str]:
    """{offset of a word in text: the word the correct text has there}, one word for one;
    an article the correct text puts before a word: "the " (as confusables' Swap has it)
    at that word's offset."""
    a = [(m.start(), m.group()) for m in _WORD.finditer(text)]
    b = [m.group() for m in _WORD.finditer(ref)]
    out = {}
    ops = difflib.SequenceMatcher(None, [w for _, w in a], b, autojunk=False).get_opcodes()
    for tag, i1, i2, j1, j2 in ops:
        if tag == "replace" and i2 - i1 == j2 - j1:
            out.update({a[i][0]: b[j] for i, j in zip(range(i1, i2), range(j1, j2), strict=True)})
        elif tag == "insert" and j2 - j1 == 1 and b[j1].lower() in ARTICLES and i1 < len(a):
            out[a[i1][0]] = b[j1] + " "
    return out


KINDS = {
    "set": "confusion set",
    "number": "number",
    "article": "article",
    "real": "real word",
    "harper": "harper",
    "form": "verb form",
    "comma": "comma",
    "possessive": "possessive",
    "spell": "spelling in context",
    "missing": "missing word",
}


def scored_rows(job: Job, outputs: dict[str, str] | None = None) -> list[tuple]:
    """Every swap fix scores on the corpus's fix tasks: (set, task, word, replacement,
    Δ or None, right, kind, first-token gap, made: the task's output in `outputs` has the
    replacement there)."""
    rows = []
    wanted = _arg("--tasks")
    for t in load_tasks():
        if t.command != "fix" or wanted and not any(w in t.id for w in wanted.split(",")):
            continue
        text, fixes, at = t.text(), corrections(t.text(), t.reference()), 0
        made = corrections(text, outputs[t.id]) if outputs and t.id in outputs else {}
        split = levers.sentences if "--sentences" in sys.argv else lambda x: job.pieces(x, t.file, "rewrite")
        for piece in split(text):
            req = job.request(piece, t.file)
            swaps = fix.swaps_of(req, job.options.tools)
            _, got = job.scored(req)
            lefts = got.left if got else [None] * len(swaps)
            for w, d, lf in zip(swaps, got.deltas if got else [None] * len(swaps), lefts, strict=True):
                right = fixes.get(at + w.start) == w.replacement
                kind = KINDS[w.kind]
                group = "heldout" if t.heldout else "tuning"
                did = made.get(at + w.start) == w.replacement
                if w.kind in ("harper", "form", "comma", "possessive", "spell", "missing"):  # any edit (a doubled word taken out): judged by distance
                    right, did = _closer(text, at, w, t.reference(), (outputs or {}).get(t.id))
                rows.append((group, t.id, w.word, w.replacement, d, right, kind, lf, did))
            at += len(piece)
    return rows


def _arg(name: str) -> str | None:
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else None


def _closer(text: str, at: int, w: confusables.Swap, ref: str, output: str | None) -> tuple[bool, bool]:
    """(right, made) for an edit of any shape: right when, made alone, it brings the file
    closer to the correct text (token edit distance, as scripts/harper_rules.py judges);
    made when `output` is closer to the file with it made than without."""
    swapped = text[:at] + confusables.apply(text[at:], [w])
    right = distance(tokens(swapped), tokens(ref)) < distance(tokens(text), tokens(ref))
    if output is None:
        return right, False
    return right, distance(tokens(output), tokens(swapped)) < distance(tokens(output), tokens(text))


def windows(job: Job, sizes: list[int]) -> None:
    """Per window K (likelihood.WINDOW: the tokens after a swap scored with it, each a row
    every scored swap reads): the swaps THRESHOLD takes, right and wrong, and the gap
    between the lowest-scoring right swap taken and the highest-scoring wrong one. WINDOW
    is the smallest K whose gap on the tuning tasks is no smaller than the largest K's."""
    print("| K | tuning: right taken | tuning: wrong | tuning: gap (nats) | held out: right taken "
          "| held out: wrong | held out: gap (nats) |")  # fmt: skip
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for k in sizes:
        likelihood.WINDOW = k
        rows, cells = scored_rows(job), []
        for group in ("tuning", "heldout"):
            mine = [r for r in rows if r[0] == group and r[4] is not None]
            taken = [r for r in mine if r[4] > confusables.THRESHOLD]
            right = [r[4] for r in taken if r[5]]
            wrong = [r[4] for r in mine if not r[5]]
            gap = min(right) - max(wrong) if right and wrong else float("nan")
            cells += [f"{len(right)} / {sum(r[5] for r in mine)}", str(len(taken) - len(right)), f"{gap:.2f}"]
        print(f"| {k} | " + " | ".join(cells) + " |", flush=True)


def main() -> None:
    backend = quietly(load("qwen2.5-coder-1.5b"))
    likelihood.PREFILTER = float("inf") if "--all" in sys.argv else likelihood.PREFILTER  # --all: none
    # the dropped articles and the real words are off by default: measured here
    job = Job(
        backend,
        templates({}, "qwen2.5-coder-1.5b")["fix"],
        None,
        EngineOptions(tools=ToolOptions(articles=True, real_words=True, sure=True)),
    )
    if "--sure" in sys.argv:
        sure(scored_rows(job, default_outputs()))
        return
    if "--guess" in sys.argv:
        guesses(scored_rows(job, default_outputs()))
        return
    if "--windows" in sys.argv:
        windows(job, [int(k) for k in sys.argv[sys.argv.index("--windows") + 1].split(",")])
        return
    rows = scored_rows(job)
    print("| set | task | word | swap | kind | first token (nats) | Δ (nats) | right |")
    print("|---|---|---|---|---|---:|---:|:---:|")
    for r in sorted(rows, key=lambda r: -(r[4] if r[4] is not None else -1e9)):
        if r[4] is not None and (r[4] > -2 or r[5]) or r[5]:
            delta = "skipped" if r[4] is None else f"{r[4]:.2f}"
            first = "" if r[7] is None else f"{r[7]:.2f}"
            right = "yes" if r[5] else ""
            print(f"| {r[0]} | {r[1]} | {r[2]} | {r[3]} | {r[6]} | {first} | {delta} | {right} |")
    print(
        f"\n{len(rows)} swaps; skipped by the prefilter: {sum(r[4] is None for r in rows)} "
        f"({sum(r[4] is None and r[5] for r in rows)} of them right)\n"
    )
    for title, kind in (("all swaps", None), *((k, k) for k in KINDS.values())):
        print(f"\n{title}:\n")
        thresholds([r for r in rows if kind is None or r[6] == kind])
    if "--all" in sys.argv:
        print("\nconfusion sets, per prefilter (with --all: every swap read):\n")
        prefilters([r for r in rows if r[6] == "confusion set"])


def default_outputs(path: str = "docs/quality.json") -> dict[str, str]:
    """{task: the default configuration's written output} from the quality report."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    runs = [r for r in data["runs"] if r["config"] == data["default"] and r.get("output") is not None]
    return {r["task"]: r["output"] for r in runs if not r.get("refused")}


def guesses(rows: list[tuple]) -> None:
    """Per Δ threshold g below THRESHOLD: the swaps scored in [g, THRESHOLD] that the
    default output makes and those it does not. In the speculative draft, a swap made saves
    a rejected pass and a swap not made costs one: GUESS is the g with the most made minus
    not made on the tuning tasks (the highest g among equals: the fewest guesses)."""
    print("| Δ from (nats) | tuning: made | tuning: not made | held out: made | held out: not made |")
    print("|---:|---:|---:|---:|---:|")
    best, score, top = confusables.THRESHOLD, 0, confusables.THRESHOLD
    for g in (2.5, 2.0, 1.5, 1.0, 0.5, 0.0, -1.0):
        cells = []
        for group in ("tuning", "heldout"):
            mine = [r for r in rows if r[0] == group and r[4] is not None and g <= r[4] <= top]
            made = sum(r[8] for r in mine)
            cells += [str(made), str(len(mine) - made)]
            if group == "tuning" and 2 * made - len(mine) > score:
                best, score = g, 2 * made - len(mine)
        print(f"| {g:.1f} | " + " | ".join(cells) + " |")
    print(f"\nGUESS = {best} (tuning: {score} more made than not)")


def sure(rows: list[tuple]) -> None:
    """Per threshold S: the suggestions in the default's draft (Harper's, and the swaps
    taken by default: not the articles) that score S or more, right or wrong, and whether
    the default output made them. A sure one leans on the keep-bias's sure β, so a right
    one not made is what `sure` may gain, a wrong one not made what it may cost.
    SURE_THRESHOLD: the lowest S with no wrong one on the tuning tasks, and a margin."""
    need = {"number": confusables.THRESHOLD, "confusion set": confusables.THRESHOLD,
            "real word": max(confusables.THRESHOLD, confusables.REAL_THRESHOLD), "harper": -1e9}  # fmt: skip
    drafted = [r for r in rows if r[4] is not None and r[6] in need and r[4] > need[r[6]]]
    for r in sorted(drafted, key=lambda r: -r[4]):
        if r[6] == "harper" or not r[5] or not r[8]:
            made, right = "made" if r[8] else "not made", "right" if r[5] else "wrong"
            print(f"| {r[0]} | {r[1]} | {r[2]} -> {r[3]} | {r[6]} | {r[4]:.2f} | {right} | {made} |")
    print("\n| S (nats) | tuning: right made / not | wrong made / not | held out: right made / not | "
          "wrong made / not |")  # fmt: skip
    print("|---:|---|---|---|---|")
    for s in (2.0, 4.0, 6.0, 8.0, 10.0, 12.0):
        cells = []
        for group in ("tuning", "heldout"):
            mine = [r for r in drafted if r[0] == group and r[4] >= s]
            for right in (True, False):
                part = [r for r in mine if r[5] == right]
                cells.append(f"{sum(r[8] for r in part)} / {sum(not r[8] for r in part)}")
        print(f"| {s:.1f} | " + " | ".join(cells) + " |")


def prefilters(rows: list[tuple]) -> None:
    """Per prefilter P: the windows it lets be read (first token no more than P nats less
    likely than the file's) and the swaps THRESHOLD takes that it would skip (right, wrong)."""
    print("| prefilter (nats) | windows read | right taken skipped | wrong taken skipped |")
    print("|---:|---:|---:|---:|")
    for p in (0.5, 1.0, 2.0, 3.0, 4.0, 6.0):
        read = [r for r in rows if r[7] is not None and r[7] >= -p]
        lost = [r for r in rows if r[4] is not None and r[4] > confusables.THRESHOLD and r not in read]
        right, wrong = sum(r[5] for r in lost), sum(not r[5] for r in lost)
        print(f"| {p:.1f} | {len(read)} of {len(rows)} | {right} | {wrong} |")


def thresholds(rows: list[tuple]) -> None:
    """Per threshold: the right swaps it takes of all right ones, and the wrong it takes."""
    print("| threshold | tuning: right taken | tuning: wrong | held out: right taken | held out: wrong |")
    print("|---:|---:|---:|---:|---:|")
    for th in (0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0):
        cells = []
        for group in ("tuning", "heldout"):
            mine = [r for r in rows if r[0] == group]
            taken = [r for r in mine if r[4] is not None and r[4] > th]
            right, wrong = sum(r[5] for r in taken), sum(not r[5] for r in taken)
            cells += [f"{right} / {sum(r[5] for r in mine)}", str(wrong)]
        print(f"| {th:.1f} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
