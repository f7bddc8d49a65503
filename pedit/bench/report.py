"""From runs to ratios, and the ratios to a terminal table, JSON and docs/benchmarks.md.

For a task and configuration c, with medians over the repeats (interleaved, same process):
    decode speedup = median decode seconds of plain / median decode seconds of c
    end-to-end     = median (prefill + decode) of plain / median (prefill + decode) of c
min-max: each repeat of c against the plain median. The machine's limit is the decode
speedup perfect drafts would give, max over K of K*t(1)/t(K) (costmodel.CostModel.limit,
t measured in the same run), and each decode speedup is also shown as a share of it.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from pathlib import Path

from .run import SAMPLING, BackendResult, Run

COPY_HEAVY = ("prose", "markdown", "code")
PEDIT_NAMES = ("plain", "predicted", "lookup", "ngram", "pedit")


@dataclass(frozen=True)
class Cell:
    runs: tuple[Run, ...]
    decode: float  # speedup against plain
    total: float
    decode_range: tuple[float, float]

    @property
    def first(self) -> Run:
        return self.runs[0]

    @property
    def same(self) -> bool:
        return all(r.same for r in self.runs)


def cells(result: BackendResult) -> dict[str, dict[str, Cell]]:
    """{task: {config: Cell}} for one backend."""
    by: dict[str, dict[str, list[Run]]] = {}
    for r in result.runs:
        by.setdefault(r.task, {}).setdefault(r.config, []).append(r)
    out: dict[str, dict[str, Cell]] = {}
    for task, configs in by.items():
        plain = configs["plain"]
        p_dec = statistics.median(r.decode_seconds for r in plain)
        p_tot = statistics.median(r.total_seconds for r in plain)
        out[task] = {}
        for config, runs in configs.items():
            dec = statistics.median(r.decode_seconds for r in runs)
            tot = statistics.median(r.total_seconds for r in runs)
            each = [p_dec / r.decode_seconds for r in runs if r.decode_seconds > 0]
            out[task][config] = Cell(
                tuple(runs), p_dec / dec if dec else 0.0, p_tot / tot if tot else 0.0,
                (min(each), max(each)) if each else (0.0, 0.0),
            )  # fmt: skip
    return out


def config_names(result: BackendResult) -> list[str]:
    seen: list[str] = []
    for r in result.runs:
        if r.config not in seen:
            seen.append(r.config)
    return seen


def median_over(table, tasks, config: str, attr: str = "decode") -> float | None:
    values = [getattr(table[t][config], attr) for t in tasks if t in table and config in table[t]]
    return statistics.median(values) if values else None


def goals(result: BackendResult, categories: dict[str, str]) -> list[tuple[str, str, bool | None]]:
    """The issue's goals held against this backend's numbers: (goal, what was measured, met).
    Timings are taken over the tasks whose baseline was not disturbed (disturbed_tasks);
    the measured text says how many were left out."""
    table = cells(result)
    disturbed = disturbed_tasks(result)
    copy_all = [t for t in table if categories.get(t) in COPY_HEAVY]
    copy = [t for t in copy_all if t not in disturbed] or copy_all
    open_ = [t for t in table if categories.get(t) == "open" and t not in disturbed]
    left = len(copy_all) - len(copy)
    note = f" ({len(copy)} tasks; {left} with a disturbed baseline left out)" if left else ""
    peers = [c for c in config_names(result) if c not in PEDIT_NAMES]
    limit = result.cost.limit()
    out = []
    dec = median_over(table, copy, "pedit")
    if dec is not None:
        share = dec / limit
        out.append(
            ("copy-heavy edits: decode speedup >= 85% of the machine's limit",
             f"median {dec:.2f}x of {limit:.2f}x = {share:.0%}{note}", share >= 0.85)
        )  # fmt: skip
    if peers and dec is not None:
        best = max(peers, key=lambda c: median_over(table, copy, c) or 0.0)
        b_dec, b_tot = median_over(table, copy, best), median_over(table, copy, best, "total")
        p_tot = median_over(table, copy, "pedit", "total")
        out.append(
            (f"decode >= 1.5x the best peer ({best}) on copy-heavy edits",
             f"{dec:.2f}x vs {b_dec:.2f}x = {dec / b_dec:.2f}x{note}", dec / b_dec >= 1.5)
        )  # fmt: skip
        out.append(
            (f"end-to-end >= 1.4x the best peer ({best})",
             f"{p_tot:.2f}x vs {b_tot:.2f}x = {p_tot / b_tot:.2f}x{note}", p_tot / b_tot >= 1.4)
        )  # fmt: skip
    if open_:
        worst = min(table[t]["pedit"].decode for t in open_ if "pedit" in table[t])
        goal = "open-ended prompts: no more than 5% slower than plain"
        out.append((goal, f"worst {worst:.2f}x", worst >= 0.95))
    same = [c.same for t in table for name, c in table[t].items() if name != "plain"]
    if same:
        cells_ = f"{sum(same)}/{len(same)} task x configuration cells"
        out.append(("identical output to plain decoding (greedy)", cells_, all(same)))
    if result.sampled:
        out.append(sampling_goal(result))
    return out


def sampling_goal(result: BackendResult) -> tuple[str, str, bool]:
    s = result.sampled
    seeds = len({x.seed for x in s})
    same = sum(x.same for x in s)
    speedups = [x.plain_decode_seconds / x.pedit_decode_seconds for x in s if x.pedit_decode_seconds]
    median = statistics.median(speedups) if speedups else 0.0
    how = f"T={SAMPLING['temperature']}, top-p {SAMPLING['top_p']}, {seeds} seeds"
    goal = f"identical output to plain decoding (sampling: {how})"
    return goal, f"{same}/{len(s)} runs (pedit decode {median:.2f}x plain, median)", same == len(s)


def shortfalls(result: BackendResult, categories: dict[str, str]) -> list[str]:
    """Facts behind unmet goals, computed from the runs: how much of the time is prefill
    (which no draft shortens), how often drafts were right, what the limit allows."""
    table = cells(result)
    copy = [t for t in table if categories.get(t) in COPY_HEAVY]
    if not copy:
        return []
    plain = [table[t]["plain"].first for t in copy]
    prefill_share = statistics.median(r.prefill_seconds / r.total_seconds for r in plain)
    runs = [table[t]["pedit"].first for t in copy if "pedit" in table[t]]
    acc = sum(r.accepted for r in runs)
    rej = sum(r.rejected for r in runs)
    tokens = sum(r.output_tokens for r in runs)
    passes = sum(r.forward_passes for r in runs)
    limit = result.cost.limit()
    out = [
        f"Copy-heavy tasks ({len(copy)}): the prefill is {prefill_share:.0%} of plain decoding's time"
        " (median), and no draft shortens it, so end-to-end gains are smaller than decode gains.",
        f"pedit's drafts on them: {acc} accepted, {rej} rejected ({acc / max(1, acc + rej):.0%} of verified"
        f" draft tokens were right); {tokens} tokens in {passes} forward passes"
        f" ({tokens / max(1, passes):.1f} tokens per pass).",
        f"Perfect drafts would give {limit:.2f}x: a pass over K tokens costs t(K) > t(1), so"
        " every rejected draft token and every edit (where the model writes new text one token"
        " per pass) moves the result away from the limit.",
    ]
    peers = [c for c in config_names(result) if c not in PEDIT_NAMES]
    clean = [t for t in copy if t not in disturbed_tasks(result)] or copy
    if peers:
        best = max(peers, key=lambda c: median_over(table, clean, c) or 0.0)
        b_dec = median_over(table, clean, best) or 0.0
        out.append(
            f"The best peer ({best}) reaches {b_dec:.2f}x on the same tasks, so 1.5x the peer means"
            f" {1.5 * b_dec:.2f}x, {1.5 * b_dec / limit:.0%} of this machine's limit: the two goals ask"
            " for nearly the same thing, and both are bounded by the limit."
        )
    for t in (t for t in table if categories.get(t) == "open" and "pedit" in table[t]):
        c, p = table[t]["pedit"], table[t]["plain"].first
        if c.decode < 0.95:
            r = c.first
            out.append(
                f"{t}: pedit {c.decode:.2f}x ({c.decode_range[0]:.2f}-{c.decode_range[1]:.2f} over the"
                f" repeats): {r.accepted + r.rejected} draft tokens verified, {r.accepted} accepted, in"
                f" {r.forward_passes} passes (plain: {p.forward_passes}); draft tokens the model"
                " rejects cost time in a pass that yields one token."
            )
    disturbed = disturbed_tasks(result)
    if disturbed:
        rate = statistics.median(_plain_rates(result).values())
        which = ", ".join(f"{t} ({r:.1f} tok/s)" for t, r in disturbed.items())
        out.append(
            f"Disturbed: plain decoding ran much slower on {which} than the median {rate:.1f} tok/s of"
            " the tasks: other load on the machine during those runs. Their ratios are unreliable"
            " (see their min-max); the goals leave them out, the category medians include them."
        )
    differ: dict[str, list[str]] = {}
    for r in result.runs:
        if not r.same and r.config not in differ.setdefault(r.task, []):
            differ[r.task].append(r.config)
    differ = {t: cs for t, cs in differ.items() if cs}
    if differ:
        where = "; ".join(f"{t} ({', '.join(cs)})" for t, cs in differ.items())
        out.append(
            f"Output differs from plain decoding's in: {where}. On llama.cpp and transformers a"
            " position's logits depend slightly on the batch it is computed in, so a near-tie can"
            " go either way (the peers show it too); on the reference backend, whose logits"
            " depend only on the prefix, every configuration is identical (tests/test_lossless.py)."
        )
    return out


def _plain_rates(result: BackendResult) -> dict[str, float]:
    """Each task's slowest plain-decoding rate (tokens/s) over its repeats."""
    rates: dict[str, float] = {}
    for r in result.runs:
        if r.config == "plain" and r.decode_seconds > 0 and r.output_tokens > 20:
            rates[r.task] = min(rates.get(r.task, float("inf")), r.tokens_per_second)
    return rates


def disturbed_tasks(result: BackendResult, below: float = 0.7) -> dict[str, float]:
    """Tasks whose plain decoding ran below `below` x the median rate of all tasks: the same
    model on the same machine decodes at much the same rate, so a far slower baseline means
    the machine was busy with something else during that task."""
    rates = _plain_rates(result)
    if len(rates) < 3:
        return {}
    median = statistics.median(rates.values())
    return {t: r for t, r in rates.items() if r < below * median}


def merge(datas: list[dict]) -> dict:
    """Several saved runs as one report, in order: results of another backend or model are
    added; for the same backend and model, a run with only the sampling check (--repeats 0
    --seeds N) joins the earlier result, and a timed run of some tasks (--tasks) replaces
    those tasks' runs in it (a re-run: every ratio is still against plain decoding of the
    same process; the limit stays the earlier run's)."""
    if len(datas) == 1:
        return datas[0]
    out = dict(datas[0])
    results: list[dict] = []
    for d in datas:
        for r in d["results"]:
            home = next(
                (h for h in results if (h["backend"], h["model"]) == (r["backend"], r["model"])), None
            )
            if home is None:
                results.append({**r, "runs": list(r["runs"]), "sampled": list(r.get("sampled", []))})
                continue
            if r["runs"] and not home["runs"]:
                home.update({k: r[k] for k in ("runs", "cost", "limit", "versions")})
            elif r["runs"]:
                again = {x["task"] for x in r["runs"]}
                home["runs"] = [x for x in home["runs"] if x["task"] not in again] + list(r["runs"])
                home.setdefault("rerun", []).append({"tasks": sorted(again), "started": d["started"]})
            home["sampled"] = [*home.get("sampled", []), *r.get("sampled", [])]
    out["results"] = results
    out["command"] = " and ".join(dict.fromkeys(d["command"] for d in datas))
    out["started"] = ", ".join(dict.fromkeys(d["started"] for d in datas))
    tasks = {t["id"]: t for d in datas for t in d["tasks"]}
    out["tasks"] = list(tasks.values())
    out["repeats"] = "/".join(dict.fromkeys(str(d["repeats"]) for d in datas if d["repeats"])) or "0"
    out["seeds"] = max(d.get("seeds", 0) for d in datas)
    return out


def sampling_section(result: BackendResult) -> list[str]:
    goal, measured, _ = sampling_goal(result)
    out = [
        "### Sampling",
        "",
        "The exact-match check with sampling (`--seeds`): for each seed, plain decoding and pedit",
        f"(all drafters, auto K) sample with T={SAMPLING['temperature']}, top-p {SAMPLING['top_p']}"
        " and that seed; pedit is lossless when its output is the same token for token.",
        f"{measured}.",
        "",
        "| task | seeds | identical | plain tokens (per seed) | pedit decode speedup (per seed) |",
        "|---|---:|---:|---|---|",
    ]
    by: dict[str, list] = {}
    for x in result.sampled:
        by.setdefault(x.task, []).append(x)
    for task, xs in by.items():
        tokens = ", ".join(str(x.output_tokens) for x in xs)
        speed = ", ".join(
            f"{x.plain_decode_seconds / x.pedit_decode_seconds:.2f}x" if x.pedit_decode_seconds else "-"
            for x in xs
        )
        out.append(f"| {task} | {len(xs)} | {sum(x.same for x in xs)} | {tokens} | {speed} |")
    return [*out, ""]


def rich_table(result: BackendResult):
    from rich.table import Table

    table = cells(result)
    names = config_names(result)
    limit = result.cost.limit()
    t = Table(title=f"{result.backend}: decode speedup vs plain (end-to-end); limit {limit:.2f}x")
    t.add_column("task")
    t.add_column("tokens", justify="right")
    for name in names[1:]:
        t.add_column(name, justify="right")
    for task, row in table.items():
        cols = []
        for name in names[1:]:
            c = row.get(name)
            mark = "" if c is None or c.same else " ≠"
            cols.append("" if c is None else f"{c.decode:.2f}x ({c.total:.2f}x){mark}")
        t.add_row(task, str(row["plain"].first.output_tokens), *cols)
    return t


def rendered_note(data: dict) -> str:
    """The step that wrote the report from saved runs (`--from ... --markdown`), if it was one."""
    r = data.get("rendered")
    if not r or r == data["command"]:
        return ""
    return f" (each run's `--json` saved to a file), then rendered by `{r}`"


def markdown(data: dict, chart: str | None) -> str:
    m = data["machine"]
    out = [
        "# Benchmarks: pedit against plain decoding and the peers",
        "",
        f"Generated by `{data['command']}` on {data['started']}{rendered_note(data)}; do not edit by hand.",
        f"Machine: {m['cpu']}, {m['cores']} cores usable, Python {m['python']}, no GPU.",
        f"Tasks: {len(data['tasks'])} from `pedit/bench/corpus/` (sources and licences in its SOURCES.md);"
        f" {data['repeats']} repeat(s), every configuration interleaved in one process"
        + (f"; {data['seeds']} sampling seeds (`--seeds`)." if data.get("seeds") else "."),
        "",
        "Decode speedup = plain decoding's decode seconds / the configuration's (medians over the",
        "repeats, same task, same run); end-to-end adds the prefill. *limit*: the decode speedup",
        "perfect drafts would give on this machine, max over K of K·t(1)/t(K), with t(K) the measured",
        "time of one forward pass over K tokens (logits for all of them) after 256 tokens of context.",
        "≠ marks output that differs from plain decoding's.",
        "",
    ]
    if chart:
        out += [f"![decode speedup per task and configuration]({chart})", ""]
    categories = {t["id"]: t["category"] for t in data["tasks"]}
    for d in data["results"]:
        result = BackendResult.from_dict(d)
        if not result.runs:  # only the sampling check
            out += [f"## {result.backend}", "", f"Model: {result.model}.", "", *sampling_section(result)]
            continue
        table = cells(result)
        names = config_names(result)
        limit = result.cost.limit()
        vers = ", ".join(f"{k} {v}" for k, v in result.versions.items())
        pairs = zip(result.cost.sizes, result.cost.seconds, strict=True)
        rel = ", ".join(f"t({n})={t / result.cost.seconds[0]:.1f}" for n, t in pairs)
        out += [
            f"## {result.backend}",
            "",
            f"Model: {result.model}. Versions: {vers}.",
            f"Forward pass cost relative to one step ({result.cost.seconds[0] * 1000:.1f} ms): {rel}.",
            f"**Limit: {limit:.2f}x.**",
            "",
            "### Medians by category (decode speedup; end-to-end in brackets)",
            "",
            "| category | " + " | ".join(names[1:]) + " |",
            "|---|" + "---:|" * (len(names) - 1),
        ]
        for cat in ("prose", "markdown", "code", "summary", "open"):
            ts = [t for t in table if categories.get(t) == cat]
            if not ts:
                continue
            row = []
            for name in names[1:]:
                dec, tot = median_over(table, ts, name), median_over(table, ts, name, "total")
                row.append("" if dec is None else f"{dec:.2f}x ({tot:.2f}x)")
            out.append(f"| {cat} ({len(ts)}) | " + " | ".join(row) + " |")
        out += [
            "",
            "### Goals",
            "",
            "| goal | measured | met |",
            "|---|---|---|",
        ]
        for goal, measured, met in goals(result, categories):
            out.append(f"| {goal} | {measured} | {'yes' if met else '**no**'} |")
        facts = shortfalls(result, categories)
        if facts:
            out += ["", "Where the numbers come from:", ""] + [f"- {f}" for f in facts]
        disturbed = disturbed_tasks(result)
        out += [
            "",
            "### Per task",
            "",
            "Each cell: decode speedup (min-max over repeats), share of the limit; forward passes,",
            "accepted/rejected draft tokens.",
            "",
            "| task | tokens | plain passes, tok/s | " + " | ".join(names[1:]) + " |",
            "|---|---:|---|" + "---|" * (len(names) - 1),
        ]
        for task, row in table.items():
            p = row["plain"].first
            cols = []
            for name in names[1:]:
                c = row.get(name)
                if c is None:
                    cols.append("")
                    continue
                lo, hi = c.decode_range
                r = c.first
                cols.append(
                    f"{c.decode:.2f}x ({lo:.2f}-{hi:.2f}), {c.decode / limit:.0%}; "
                    f"{r.forward_passes}, {r.accepted}/{r.rejected}{'' if c.same else ' ≠'}"
                )
            name = f"{task} (disturbed)" if task in disturbed else task
            head = f"| {name} | {p.output_tokens} | {p.forward_passes}, {p.tokens_per_second:.1f} | "
            out.append(head + " | ".join(cols) + " |")
        for again in d.get("rerun", []):
            out.append(f"\nRe-run in a later process ({again['started']}): {', '.join(again['tasks'])}.")
        out.append("")
        if result.sampled:
            out += sampling_section(result)
    out += [
        "## How the peers are run",
        "",
        "On the same model file and the same prompt tokens: llama-cpp-python's `Llama` with",
        "`draft_model=LlamaPromptLookupDecoding(num_pred_tokens=k)` (greedy, k=10 its default, k=2 its",
        "advice for CPUs), and transformers' `generate(prompt_lookup_num_tokens=k)` (greedy, k=10 and 20)",
        "on the transformers backend's own torch model. A peer does not know pedit's closing fence, so it",
        "runs for as many tokens as plain decoding produced. Forward passes are counted on the model's",
        "entry point; accepted = output tokens - passes. See pedit/bench/peers.py.",
        "",
    ]
    return "\n".join(out)


def chart(data: dict, path: Path) -> bool:
    """Horizontal bars: decode speedup per task and configuration, one panel per backend.
    False (nothing written) when there are no timed runs (only the sampling check)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    results = [r for r in map(BackendResult.from_dict, data["results"]) if r.runs]
    if not results:
        return False
    n_tasks = max(len(cells(r)) for r in results)
    fig, axes = plt.subplots(1, len(results), figsize=(7 * len(results), 1.2 + 0.45 * n_tasks), squeeze=False)
    for ax, result in zip(axes[0], results, strict=True):
        table = cells(result)
        names = [c for c in config_names(result) if c not in ("plain",)]
        tasks = list(table)
        height = 0.8 / len(names)
        for i, name in enumerate(names):
            ys = [j + i * height for j in range(len(tasks))]
            xs = [table[t][name].decode if name in table[t] else 0 for t in tasks]
            ax.barh(ys, xs, height=height, label=name)
        ax.axvline(1.0, color="black", linewidth=0.8)
        ax.axvline(result.cost.limit(), color="grey", linestyle="--", linewidth=0.8, label="limit")
        ax.set_yticks([j + 0.4 - height / 2 for j in range(len(tasks))], tasks, fontsize=7)
        ax.invert_yaxis()
        ax.set_xlabel("decode speedup vs plain decoding (same run)")
        ax.set_title(f"{result.backend} ({data['machine']['cores']} CPU cores)")
        ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return True
