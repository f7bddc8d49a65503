"""The quality report's section on the learner corpus (issue 57: `learner` tasks, the errors
English learners make): GLEU (gleu.py) beside recall and precision, per configuration and
part (training, held out), then the default's recall and precision per kind of error. The
learner files are in no other table of the report."""

from __future__ import annotations

from . import gleu
from .corpus import KINDS
from .quality_goals import by_kind, by_part, kind_table, pct, summarize
from .quality_run import QualityRun

LEARNER_KINDS = ("agreement", "capital", "verb form", "punctuation", "word choice")


def learner_section(runs: list[QualityRun], default: str | None, tasks: dict[str, dict]) -> list[str]:
    """The learner corpus (issue 57), per part (training, held out): GLEU of the sources as
    they are and of the default's outputs, recall, precision, files made worse, seconds per
    file; then per kind of error, recall and precision."""
    scored = [r for r in runs if r.fix and "gleu" in r.fix and not tasks.get(r.task, {}).get("multi")]
    mine = [r for r in scored if r.config == default]
    if not mine:
        return []
    parts = [(title, {t for t, d in tasks.items()
                      if d.get("learner") and not d.get("multi") and bool(d.get("heldout")) == held})
             for title, held in (("training", False), ("held out", True))]  # fmt: skip
    lines = [
        "",
        "## Learner errors",
        "",
        f"`{default}` on the learner corpus (issue 57): short texts written for the benchmark in the "
        "style of an English learner's, their errors of the kinds learners make (SOURCES.md); settings "
        "are chosen on the training part and judged on the held-out part. GLEU (`pedit/bench/gleu.py`, "
        "the field's n-gram score against the correction, which penalizes an error left as it was; "
        "one reference: the text SOURCES.md restores) is over the part's files as one corpus, in %. "
        "`+sentences`: each sentence fixed as a file of its own, as a learner benchmark runs them. "
        "`+agreement`: the instruction names the learner's errors (`templates.FIX_LEARNER`, the "
        "default model's own since the training parts chose it; `+noagreement`: without it); "
        "`+examples`: the system prompt shows six corrections (`pedit/bench/levers.py`). "
        "Prompt tokens: per file, every run's prompt together "
        "(read or found in the cache; – for a run that did not record them). "
        f"Per kind: `{default}`. These files are in no other table of this report.",
        "",
        "| configuration | part | files | GLEU, unchanged | GLEU, fixed | recall | precision | made worse "
        "| s per file | prompt tokens per file |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for config, title, got in by_part(scored, parts):
        s = summarize(got, config)
        before, after = (
            100 * gleu.score(gleu.total(r.fix[k] for r in got)) for k in ("gleu_source", "gleu")
        )
        tokens = (
            sum(r.prompt_tokens for r in got) / len(got) if all(r.prompt_tokens for r in got) else None
        )
        lines.append(f"| `{config}` | {title} | {len(got)} | {before:.1f} | {after:.1f} | "
                     f"{pct(s.recall)} | {pct(s.precision)} | {s.worse} | {s.seconds:.1f} | "
                     f"{'–' if tokens is None else f'{tokens:.0f}'} |")  # fmt: skip
    totals = {title: by_kind([r for r in mine if r.task in ids]) for title, ids in parts}
    rest = (k for k in (*KINDS, "word", "variety", "layout", "other") if k not in LEARNER_KINDS)
    shapes = (*LEARNER_KINDS, *rest)
    kinds = [k for k in shapes if any(k in t for t in totals.values())]
    return [*lines, "", *kind_table(totals, kinds)]
