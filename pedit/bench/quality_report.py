"""The quality runs to figures, a terminal table, the goals, docs/quality.md and its chart.

Per configuration, over the `fix` tasks: mean score, recall and precision over all
errors (micro: errors fixed / all errors), mean F0.5, files made worse, answers refused;
over the refactor tasks: the share that passes every check; and the mean seconds per file.
Held-out tasks (not looked at while tuning) are summed apart as well.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from pathlib import Path

from .quality_run import BASELINE, QualityRun
from .report import rendered_note

DEMO = "md-essay-demo"  # the text of `make demo`
GOALS = {  # issue 26's goals for the default configuration (and issue 13's for the best model)
    "score": 0.7,
    "heldout": 0.6,
    "recall": 0.7,
    "precision": 0.9,
    "worse": 0,
    "refactor": 0.9,
    "best_score": 0.8,
}


@dataclass(frozen=True, kw_only=True)
class Summary:
    config: str
    files: int
    score: float | None
    recall: float | None
    precision: float | None
    f05: float | None
    worse: int
    refused: int
    stray: int
    refactors: int
    refactor_pass: float | None
    seconds: float  # mean per scored file
    wrong_written: int = 0  # refactors written (not refused) that fail a check of their task


def summarize(runs: list[QualityRun], config: str, tasks: set[str] | None = None) -> Summary:
    mine = [r for r in runs if r.config == config and (tasks is None or r.task in tasks)]
    fix = [r.fix for r in mine if r.fix]
    ref = [r for r in mine if r.checks]
    errors = sum(f["errors"] for f in fix)
    fixed = sum(f["fixed"] for f in fix)
    collateral = sum(f["collateral"] for f in fix)
    return Summary(
        config=config,
        files=len(mine),
        score=statistics.mean(f["score"] for f in fix) if fix else None,
        recall=fixed / errors if errors else None,
        precision=fixed / (fixed + collateral) if fix and fixed + collateral else (1.0 if fix else None),
        f05=statistics.mean(f["f05"] for f in fix) if fix else None,
        worse=sum(f["worse"] for f in fix),
        refused=sum(1 for r in mine if r.refused),
        stray=sum(1 for f in fix if f["stray_fence"]),
        refactors=len(ref),
        refactor_pass=sum(1 for r in ref if r.passed) / len(ref) if ref else None,
        seconds=statistics.mean(r.seconds for r in mine) if mine else 0.0,
        wrong_written=sum(1 for r in ref if not r.refused and not r.passed),
    )


def configs_of(runs: list[QualityRun]) -> list[str]:
    return list(dict.fromkeys(r.config for r in runs))


def _f(x: float | None, digits: int = 2) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.0f}%"


def goals(runs: list[QualityRun], default: str, heldout: set[str]) -> list[tuple[str, str, bool | None]]:
    """(goal, measured, met) for the default configuration and the best model."""
    if default not in configs_of(runs):
        return []
    s = summarize(runs, default)
    out = [
        (
            f"default ({default}): mean fix score ≥ {GOALS['score']}",
            _f(s.score),
            _ge(s.score, GOALS["score"]),
        ),
        (f"default: recall ≥ {_pct(GOALS['recall'])}", _pct(s.recall), _ge(s.recall, GOALS["recall"])),
        (
            f"default: precision ≥ {_pct(GOALS['precision'])}",
            _pct(s.precision),
            _ge(s.precision, GOALS["precision"]),
        ),
        ("default: no file made worse", f"{s.worse} made worse", s.worse == 0),
        (
            f"default: ≥ {_pct(GOALS['refactor'])} of refactors pass every check",
            _pct(s.refactor_pass),
            _ge(s.refactor_pass, GOALS["refactor"]),
        ),
        (
            "default: no refactor written that fails a check (refused instead)",
            f"{s.wrong_written} written of {s.refactors}",
            s.wrong_written == 0 if s.refactors else None,
        ),
    ]
    demo = next((r.fix for r in runs if r.config == default and r.task == DEMO and r.fix), None)
    if demo:
        share, wrong = demo["fixed"] / demo["errors"], demo["collateral"]
        out.append(
            (
                "`make demo` (examples/essay.md, task md-essay-demo): ≥ 75% of its errors fixed "
                "(9 of 12 words), no wrong change",
                f"{demo['fixed']} of {demo['errors']}, {wrong} wrong",
                share >= 0.75 and wrong == 0,
            )
        )
    stray = sum(summarize(runs, c).stray for c in configs_of(runs))
    out.append(("no stray fence in any output", f"{stray} outputs", stray == 0))
    models = [c for c in configs_of(runs) if c != BASELINE]
    best = max(models, key=lambda c: summarize(runs, c).score or 0.0, default=None)
    if best:
        b = summarize(runs, best)
        out.append(
            (
                f"best model ({best}): mean fix score ≥ {GOALS['best_score']}",
                _f(b.score),
                _ge(b.score, GOALS["best_score"]),
            )
        )
    base = summarize(runs, BASELINE) if BASELINE in configs_of(runs) else None
    if base and base.score is not None:
        out.append(
            (
                f"default beats the spell checker ({_f(base.score)}) on mean score",
                _f(s.score),
                _ge(s.score, base.score + 1e-9),
            )
        )
    if heldout:
        h = summarize(runs, default, heldout)
        out.append(
            (
                f"default on held-out files: mean fix score ≥ {GOALS['heldout']}",
                _f(h.score),
                _ge(h.score, GOALS["heldout"]),
            )
        )
    return out


def _levers(runs: list[QualityRun], configs: list[str]) -> list[str]:
    out = []
    for c in configs:
        base, _, variant = c.partition("+")
        if not variant or base not in configs or variant == "plain":
            continue
        ran = {r.task for r in runs if r.config == c}  # a variant may run on a group of tasks
        a, b = summarize(runs, base, ran), summarize(runs, c, ran)
        outputs = {(r.config, r.task): r.output for r in runs if r.checks}  # refactor tasks
        moved = sum(outputs[(c, t)] != o for (k, t), o in outputs.items() if k == base and (c, t) in outputs)
        out.append(
            f"| `+{variant}` on `{base}` | {_f(a.score)} → {_f(b.score)} "
            f"| {_pct(a.recall)} → {_pct(b.recall)} "
            f"| {_pct(a.precision)} → {_pct(b.precision)} | {a.worse} → {b.worse} "
            f"| {_pct(a.refactor_pass)} → {_pct(b.refactor_pass)} | {moved} "
            f"| {_f(a.seconds, 1)} → {_f(b.seconds, 1)} |"
        )
    return out


def _ratio(pairs: list[tuple[QualityRun, QualityRun]]) -> str:
    plain, fast = sum(a.seconds for a, _ in pairs), sum(b.seconds for _, b in pairs)
    return f"{plain / fast:.2f}x" if fast else "–"


def _ge(x: float | None, bound: float) -> bool | None:
    return None if x is None else x >= bound


def rich_table(runs: list[QualityRun]):
    from rich.table import Table

    table = Table(title="pedit bench --quality")
    for col in (
        "config",
        "score",
        "recall",
        "precision",
        "F0.5",
        "worse",
        "refused",
        "refactors ok",
        "s/file",
    ):
        table.add_column(col, justify="left" if col == "config" else "right")
    for c in configs_of(runs):
        s = summarize(runs, c)
        table.add_row(c, _f(s.score), _pct(s.recall), _pct(s.precision), _f(s.f05), str(s.worse),
                      str(s.refused), _pct(s.refactor_pass), _f(s.seconds, 1))  # fmt: skip
    return table


def markdown(data: dict, chart: str | None) -> str:
    runs = [QualityRun(**r) for r in data["runs"]]
    tasks = {t["id"]: t for t in data["tasks"]}
    heldout = {t for t, d in tasks.items() if d.get("heldout")}
    configs = configs_of(runs)
    m = data["machine"]
    lines = [
        "# Edit quality",
        "",
        "<!-- generated by `pedit bench --quality --markdown docs/quality.md`; do not edit by hand -->",
        "",
        f"Measured on {m['cpu']}, {m['cores']} cores, Python {m['python']}, started {data['started']}, "
        f"with `{data['command']}`{rendered_note(data)}. "
        "Scoring: `pedit/bench/quality.py` (fix tasks, against the texts "
        "SOURCES.md restores) and `pedit/bench/checks.py` (refactor tasks); how to read it: "
        "[below](#how-it-is-scored).",
        "",
        "## Per configuration",
        "",
        "| configuration | fix score | recall | precision | F0.5 | made worse | refused | refactors passing "
        "| refactors written failing | s per file |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for c in configs:
        s = summarize(runs, c)
        refactors = f"{_pct(s.refactor_pass)} of {s.refactors}" if s.refactors else "–"
        lines.append(
            f"| `{c}` | {_f(s.score)} | {_pct(s.recall)} | {_pct(s.precision)} | {_f(s.f05)} | {s.worse} of "
            f"{s.files - s.refactors} | {s.refused} | {refactors} "
            f"| {s.wrong_written if s.refactors else '–'} | {_f(s.seconds, 1)} |"
        )
    by = {(r.task, r.config): r for r in runs}
    for c in configs:
        base = c.replace("+plain", "")
        if "+plain" in c and base in configs:
            pairs = [(by[(t, c)], by[(t, base)]) for t in tasks if (t, c) in by and (t, base) in by]
            same = sum(a.output == b.output for a, b in pairs)
            lines += [
                "",
                f"`{c}` (no speculation) wrote the same output as `{base}` on {same} of {len(pairs)} tasks, "
                f"in {_ratio(pairs)} the time (the lossless check on a real backend).",
            ]
    if chart:
        lines += ["", f"![quality against seconds per file]({chart})"]
    if heldout:
        lines += ["", "Held-out files only (" + ", ".join(sorted(heldout)) + "):", ""]
        lines += [
            "| configuration | fix score | recall | precision | made worse |",
            "|---|---:|---:|---:|---:|",
        ]
        for c in configs:
            s = summarize(runs, c, heldout)
            lines.append(f"| `{c}` | {_f(s.score)} | {_pct(s.recall)} | {_pct(s.precision)} | {s.worse} |")
    default = data.get("default")
    lines += ["", "## Goals", "", "| goal | measured | met |", "|---|---:|:---:|"]
    for goal, measured, met in goals(runs, default, heldout):
        lines.append(f"| {goal} | {measured} | {'yes' if met else 'no' if met is False else '–'} |")
    levers = _levers(runs, configs)
    if levers:
        lines += ["", "## Levers tried", "", "Each variant against the same model without it, over the tasks "
                  "the variant ran (what a variant is: [below](#how-it-is-scored)). `nospell`, `noharper`, "
                  "`noconfusables` and `whole` change nothing in a refactor, so where one of "
                  "them changed a refactor's answer (\"refactors changed\") it was not the lever: "
                  "each run measured its own cost model, drafted and "
                  "batched differently, and llama.cpp's batched float numerics flipped a near-tie "
                  "(how often that happens: [benchmarks.md](benchmarks.md)).", "",
                  "| lever | fix score | recall | precision | made worse | refactors passing "
                  "| refactors changed | s per file |",
                  "|---|---|---|---|---|---|---:|---|", *levers]  # fmt: skip
    header = " | ".join(f"`{c}`" for c in configs)
    lines += [
        "",
        "## Fix tasks: score per file",
        "",
        f"| task | {header} |",
        "|---|" + "---:|" * len(configs),
    ]
    for t in tasks:
        if not any(by.get((t, c)) and by[(t, c)].fix for c in configs):
            continue
        cells = []
        for c in configs:
            r = by.get((t, c))
            if r is None or not r.fix:
                cells.append("")
                continue
            f = r.fix
            cell = f"{f['score']:.2f} ({f['fixed']}/{f['errors']}, +{f['collateral']})"
            cells.append(cell + (" refused" if r.refused else ""))
        lines.append(f"| {t}{' (held out)' if t in heldout else ''} | " + " | ".join(cells) + " |")
    models = [c for c in configs if c != BASELINE]
    lines += ["", "Each cell: score (errors fixed / errors, + collateral tokens changed).", ""]
    lines += ["## Refactor tasks: checks", "", "| task | " + " | ".join(f"`{c}`" for c in models) + " |"]
    lines += ["|---|" + "---|" * len(models)]
    for t in tasks:
        if not any(by.get((t, c)) and by[(t, c)].checks for c in configs):
            continue
        cells = []
        for c in configs:
            if c == BASELINE:
                continue
            r = by.get((t, c))
            if r is None:
                cells.append("")
            elif r.passed:
                cells.append("all pass")
            else:
                failed = [
                    f"{k['name']}" + (f" ({k['detail']})" if k["detail"] else "")
                    for k in r.checks
                    if not k["passed"]
                ]
                cells.append("; ".join(failed).replace("|", "\\|") + (" (refused)" if r.refused else ""))
        lines.append(f"| {t} | " + " | ".join(cells) + " |")
    lines += ["", _HOW, ""]
    return "\n".join(lines)


_HOW = """## How it is scored

- Texts are compared as tokens: a word, or one punctuation mark; whitespace is ignored.
- **fix score** = 1 − d(output, correct) / d(input, correct), d the token edit distance:
  1 is a perfect fix, 0 no change, below 0 **made worse**. The mean is over the files.
- **recall**: the introduced errors (SOURCES.md) fixed, over all errors. An error is fixed
  when the output reads as the correct text between the nearest unchanged tokens around it.
- **precision**: errors fixed / (errors fixed + tokens changed that fix no error).
- **F0.5** weighs precision twice as much as recall (grammatical error correction practice);
  the table gives the mean over the files.
- **refused**: pedit would not write the answer (it is not a whole rewrite, or the write
  guard said no); the file stays as it was, and so it is scored.
- **refactors passing**: the share of refactor tasks whose result passes every check of
  `[task.check]` in tasks.toml: it parses, the rename is complete and renames nothing else,
  the type hints are all there, the behaviour is the same on the listed calls, and no line
  outside the requested change is touched. A refused refactor leaves the file as it was,
  which fails its checks. **refactors written failing**: those pedit would have written
  (not refused) that fail a check: the goal is none.
- **s per file**: wall time of the rewrite (model loading excluded, speculation's cost
  model measured once per configuration), mean over the scored files. `+plain` is the same
  model without speculation: its outputs must be the same (the lossless check), only slower.
- Variants: `+plain` no speculation; `+kbB` a keep-bias of B on the file's own next token
  (`--keep-bias B`: B > 0 changes less, B < 0 dares more; `fix` runs with 1.5, the
  others with 0, or 1.5 towards a tool's draft); `+sbB` a β of B on the tokens a tool
  changed in the draft (a suggestion), the keep-bias elsewhere; `+nospell` no spelling
  or grammar suggestions in `fix`'s draft (`--no-spelling`); `+noharper` the spelling
  suggestions only, without Harper's grammar suggestions; `+noconfusables` without the
  confusion-set swaps the model scored likelier ("their" -> "there", "was" -> "were");
  `+notools` a refactor by the model alone, as before issue 26 (no intent read, no exact
  rename in the draft, no edit grammar, no check); `+noretry` one try, refused when its
  check fails (no second run, no exact rename written in its place); `+partnote` each
  run of a file cut in runs told which part it is (about 20 prompt tokens a run);
  `+whole` the file in as few runs as the context allows, where `fix` otherwise goes a paragraph or so (96
  tokens) at a time. Variants run in a separate group are timed in another process:
  compare their seconds with care.
- `spellcheck` is the baseline with no language model: pyspellchecker's top correction for
  every unknown word of the prose (`pedit/app/spelling.py`)."""


def chart(data: dict, path: Path) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import matplotlib.ticker
    except ImportError:
        return False
    runs = [QualityRun(**r) for r in data["runs"]]
    fig, ax = plt.subplots(figsize=(8, 4.2), dpi=110)
    markers = "osD^vP*Xh<>p"
    for i, c in enumerate(configs_of(runs)):
        s = summarize(runs, c)
        if s.score is None:
            continue
        ax.scatter([max(s.seconds, 0.01)], [s.score], s=55, marker=markers[i % len(markers)], label=c)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
    ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax.axhline(GOALS["score"], color="grey", linestyle="--", linewidth=0.8)
    ax.axhline(0, color="black", linewidth=0.6)
    ax.set_xlabel("seconds per file (log)")
    ax.set_ylabel("mean fix score")
    ax.set_title("Edit quality against time, fix tasks")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return True


def merge(datas: list[dict]) -> dict:
    """Several saved runs as one report (e.g. one per configuration group)."""
    out = dict(datas[0])
    seen = {(r["task"], r["config"]) for r in out["runs"]}
    runs = list(out["runs"])
    tasks = {t["id"]: t for t in out["tasks"]}
    for d in datas[1:]:
        for r in d["runs"]:
            if (r["task"], r["config"]) not in seen:
                runs.append(r)
                seen.add((r["task"], r["config"]))
        for t in d["tasks"]:
            tasks.setdefault(t["id"], t)
        if d["command"] not in out["command"]:
            out["command"] += "`, `" + d["command"]
    out["runs"], out["tasks"] = runs, list(tasks.values())
    return out
