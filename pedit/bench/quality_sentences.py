"""The quality report's section on the learner sentences (issue 70: `multi` tasks, a sentence a
line with three to six errors each, as learners' exam sentences have them): per
configuration and part, GLEU over the sentences as one corpus (each sentence a text, as a
learner benchmark scores them), recall and precision, and how many sentences came closer to
their correction, stayed, or moved further away (the token edit distance to the correction
before and after); then the default's recall and precision per kind, and its goals."""

from __future__ import annotations

from functools import cache

from . import gleu
from .corpus import KINDS, Task, load_tasks
from .quality import distance, tokens
from .quality_goals import GOALS, Row, by_kind, by_part, kind_table, pct, summarize
from .quality_run import QualityRun

SENTENCE_KINDS = (
    "spelling", "real word", "homophone", "missing word", "article", "agreement", "verb form", "tense",
    "number", "preposition", "capital", "punctuation", "word choice",
)  # fmt: skip


@cache
def _task(task_id: str) -> Task:
    return next(t for t in load_tasks() if t.id == task_id)


def lines_of(task_id: str, output: str) -> list[tuple[str, str, str]]:
    """(source, output, reference) per sentence of a task (a sentence a line); the output's
    lines as they are where it kept the file's lines, else the whole file as one."""
    task = _task(task_id)
    src, ref = task.text().splitlines(), task.reference().splitlines()
    out = output.splitlines()
    if len(out) != len(src):
        return [(task.text(), output, task.reference())]
    return list(zip(src, out, ref, strict=True))


def moved(triples: list[tuple[str, str, str]]) -> tuple[int, int, int]:
    """(closer, the same distance, further): each sentence's token edit distance to its
    correction, after against before."""
    closer = same = further = 0
    for s, o, r in triples:
        before, after = distance(tokens(s), tokens(r)), distance(tokens(o), tokens(r))
        closer, same, further = closer + (after < before), same + (after == before), further + (after > before)
    return closer, same, further


def sentences_section(runs: list[QualityRun], default: str | None, tasks: dict[str, dict]) -> list[str]:
    scored = [r for r in runs if r.fix and tasks.get(r.task, {}).get("multi")]
    if not any(r.config in (default, f"{default}+sentences") for r in scored):
        return []
    parts = [(title, {t for t, d in tasks.items() if d.get("multi") and bool(d.get("heldout")) == held})
             for title, held in (("training", False), ("held out", True))]  # fmt: skip
    lines = [
        "",
        "## Learner sentences",
        "",
        "The learner sentences (issue 70, SOURCES.md): 64 sentences written for the benchmark in the "
        "style of learners' exam sentences, three to six errors each, often side by side and misspelt; "
        "settings are chosen on the training part and judged on the held-out part. GLEU "
        "(`pedit/bench/gleu.py`) over the part's sentences as one corpus, one reference each, in %. "
        "Closer / same / further: sentences whose token edit distance to the correction went down, "
        "stayed, went up. Refused: sentences left as they were (an answer cut off, or one the guard "
        "refused; a file at once is refused whole). `+sentences`: each sentence fixed and judged as a "
        "file of its own, as the hidden set runs them; without it, each file of eight sentences at once. These files are in no other "
        "table of this report.",
        "",
        "| configuration | part | sentences | GLEU, unchanged | GLEU, fixed | recall | precision "
        "| closer / same / further | refused | s per sentence |",
        "|---|---|---:|---:|---:|---:|---:|---|---:|---:|",
    ]
    for config, title, got in by_part(scored, parts):
        s = summarize(got, config)
        triples = [x for r in got for x in lines_of(r.task, r.output)]
        before = 100 * gleu.corpus((src, src, ref) for src, _, ref in triples)
        after = 100 * gleu.corpus(triples)
        n = sum(len(_task(r.task).text().splitlines()) for r in got)
        c, same, f = moved(triples)
        refused = sum(r.pieces_refused or (len(_task(r.task).text().splitlines()) if r.refused else 0) for r in got)
        lines.append(f"| `{config}` | {title} | {n} | {before:.1f} | {after:.1f} | {pct(s.recall)} | "
                     f"{pct(s.precision)} | {c} / {same} / {f} | {refused} | {sum(r.seconds for r in got) / n:.2f} |")  # fmt: skip
    judged = judged_config(scored, default)
    mine = [r for r in scored if r.config == judged]
    totals = {title: by_kind([r for r in mine if r.task in ids]) for title, ids in parts}
    rest = (k for k in (*KINDS, "word", "variety", "layout", "other") if k not in SENTENCE_KINDS)
    kinds = [k for k in (*SENTENCE_KINDS, *rest) if any(k in t for t in totals.values())]
    return [*lines, "", f"Per kind: `{judged}`, each sentence a file, as a one-line file is fixed.", "",
            *kind_table(totals, kinds)]  # fmt: skip


def judged_config(runs: list[QualityRun], default: str) -> str:
    """The configuration the goals and the table per kind judge: the default with each
    sentence a file of its own (`+sentences`: a one-sentence file, as a user or a learner
    benchmark runs one), where it ran; else the default."""
    each = f"{default}+sentences"
    return each if any(r.config == each for r in runs) else default


def sentences_goals(runs: list[QualityRun], default: str, held: set[str]) -> list[Row]:
    """Issue 70's goals on the learner sentences' held-out part: precision on every kind,
    and few sentences moved further from their correction."""
    judged = judged_config([r for r in runs if r.task in held], default)
    mine = [r for r in runs if r.config == judged and r.task in held]
    if not mine:
        return []
    kinds = by_kind(mine)
    goal = GOALS["sentences_kind_precision"]
    precision = {k: fixed / (fixed + coll) for k, (_, fixed, coll) in by_kind(mine).items() if fixed + coll}
    low = sorted(k for k, p in precision.items() if p < goal)
    triples = [x for r in mine for x in lines_of(r.task, r.output)]
    _, _, further = moved(triples)
    return [
        (f"learner sentences, held out: precision ≥ {pct(goal)} on every kind",
         "below: " + ", ".join(f"{k} {pct(precision[k])}" for k in low) if low else "none below", not low),
        (f"learner sentences, held out: at most {pct(GOALS['sentences_further'])} of the sentences "
         "further from their correction", f"{further} of {len(triples)}",
         further <= GOALS["sentences_further"] * len(triples)),
    ]  # fmt: skip
