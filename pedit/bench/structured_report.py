"""The structured-output report (docs/structured-bench.md) from `pedit bench --structured`
runs: per backend, valid answers, forward passes per output token, coalesced tokens and
the time to the whole answer against plain constrained decoding and the peers; the goals
held against them. Every number comes from the runs in the JSON beside it."""

from __future__ import annotations

import statistics
from collections import defaultdict

from .structured import CONFIGS, PEERS, StructuredRun

CONSTRAINED = ("plain", "coalesce", "pedit")
GOALS = {"extract_passes": 0.5, "extract_peer_total": 2.0, "edit_vs_free": 1.0}


def runs_of(result: dict) -> list[StructuredRun]:
    return [StructuredRun(**r) for r in result["runs"]]


def cells(runs: list[StructuredRun]) -> dict[str, dict[str, dict]]:
    """{task: {config: figures}}: medians over the repeats; valid and same over all of them."""
    groups: dict[tuple[str, str], list[StructuredRun]] = defaultdict(list)
    for r in runs:
        groups[(r.task, r.config)].append(r)
    out: dict[str, dict[str, dict]] = defaultdict(dict)
    for (task, config), rs in groups.items():
        out[task][config] = {
            "tokens": statistics.median(r.output_tokens for r in rs),
            "passes": statistics.median(r.forward_passes for r in rs),
            "coalesced": statistics.median(r.coalesced for r in rs),
            "decode": statistics.median(r.decode_seconds for r in rs),
            "total": statistics.median(r.total_seconds for r in rs),
            "valid": all(r.valid for r in rs),
            "same": None if rs[0].same is None else all(r.same for r in rs),
        }
    return out


def _kind(tasks: list[dict]) -> dict[str, str]:
    return {t["id"]: t["kind"] for t in tasks}


def goals(result: dict, tasks: list[dict]) -> list[tuple[str, str, bool]]:
    """(goal, measured, met) for one backend."""
    table, kind = cells(runs_of(result)), _kind(tasks)
    peer = PEERS.get(result["backend"])
    out = []
    mine = [c for t in table.values() for name, c in t.items() if name in CONSTRAINED]
    ok = sum(c["valid"] for c in mine)
    goal = "every constrained answer valid (plain, coalesce, pedit)"
    out.append((goal, f"{ok}/{len(mine)}", ok == len(mine)))
    extract = [t for t in table if kind.get(t) == "extract" and "pedit" in table[t]]
    if extract:
        passes = sum(table[t]["pedit"]["passes"] for t in extract)
        per = passes / sum(table[t]["pedit"]["tokens"] for t in extract)
        bound = GOALS["extract_passes"]
        out.append((f"extraction: forward passes <= {bound} per output token", f"{per:.2f}", per <= bound))
    with_peer = [t for t in extract if peer in table[t]]
    if with_peer:
        ratio = statistics.median(table[t][peer]["total"] / table[t]["pedit"]["total"] for t in with_peer)
        k = GOALS["extract_peer_total"]
        out.append(
            (f"extraction: end to end >= {k:.0f}x the peer ({peer})", f"median {ratio:.2f}x", ratio >= k)
        )  # fmt: skip
    edits = [t for t in table if kind.get(t) == "edit" and {"pedit", "pedit free"} <= set(table[t])]
    if edits:
        ratio = statistics.median(table[t]["pedit free"]["total"] / table[t]["pedit"]["total"] for t in edits)
        out.append(
            ("JSON edits: faster end to end than unconstrained pedit", f"median {ratio:.2f}x", ratio > 1.0)
        )  # fmt: skip
    same = [c["same"] for t in table.values() for name, c in t.items() if name in ("coalesce", "pedit")]
    if same:
        goal = "identical output to plain constrained decoding (greedy)"
        out.append((goal, f"{sum(same)}/{len(same)} cells", all(same)))
    return out


def shortfalls(result: dict, tasks: list[dict]) -> list[str]:
    """Facts behind the goals, computed from the runs (what bounds each ratio)."""
    table, kind = cells(runs_of(result)), _kind(tasks)
    peer = PEERS.get(result["backend"])
    out = []
    extract = [t for t in table if kind.get(t) == "extract" and {"pedit", peer} <= set(table[t])]
    if extract:
        dec = statistics.median(table[t][peer]["decode"] / table[t]["pedit"]["decode"] for t in extract)
        share = statistics.median(
            1 - table[t]["pedit"]["decode"] / table[t]["pedit"]["total"] for t in extract
        )  # fmt: skip
        out.append(
            f"Extraction: pedit decodes {dec:.2f}x faster than {peer} (median), but the prompt's prefill,"
            f" the same work for both, is {share:.0%} of pedit's time end to end (median). With prefill P"
            " and decode times D, end to end is (P + D_peer) / (P + D_pedit) < 1 + D_peer / P."
        )
    edits = [t for t in table if kind.get(t) == "edit" and {"pedit", "pedit free"} <= set(table[t])]
    if edits:
        forced = statistics.median(table[t]["pedit"]["coalesced"] for t in edits)
        same = sum(table[t]["pedit"]["passes"] == table[t]["pedit free"]["passes"] for t in edits)
        out.append(
            f"JSON edits: in a rewrite the JSON grammar leaves whitespace free (the file keeps its layout),"
            f" so it forces {forced:.0f} token(s) per edit (median: the closing fence); the drafts do the"
            f" rest as they do without it ({same}/{len(edits)} edits took the same number of passes with"
            " and without the grammar). What is left is the matcher's work per token and the noise between"
            " runs."
        )
    differ = [f"{t} ({n})" for t, row in table.items() for n, c in row.items() if c["same"] is False]
    if differ:
        out.append(
            f"Output differs from plain constrained decoding in: {', '.join(differ)}. A position's logits"
            " depend slightly on the batch it is computed in (coalesced tokens ride in wider passes), so a"
            " near-tie can go either way; on the reference backend every configuration is identical"
            " (tests/test_grammar.py)."
        )
    return out


def markdown(data: dict, chart_file: str | None = None) -> str:
    m = data["machine"]
    out = [
        "# Structured output: measured",
        "",
        f"Generated by `{data.get('rendered') or data['command']}` from the runs of `{data['command']}`"
        f" ({data['started']}). Machine: {m['cpu']}, {m['cores']} cores, CPU only, Python {m['python']}"
        + (f", llama.cpp {m['llama_cpp']}." if m.get("llama_cpp") else ".")
        + f" Model: {data['model']}. Repeats: {data['repeats']} (medians). What the configurations are,"
        " and how the peers run: `pedit/bench/structured.py`; the tasks:"
        " `pedit/bench/corpus/structured.toml`.",
        "",
        "Ratios are of the time to the whole answer (prefill excluded for decode, included for total)"
        " against plain constrained decoding (`plain`: a forward pass per token, forced ones included)."
        " A peer's grammar is the JSON alone, so it writes no closing fence (a few tokens fewer)."
        " Valid: the answer parses (and matches its schema or regex); that says nothing of whether an"
        " edit is right (docs/quality.md measures that), and a peer's answer may be another valid JSON"
        " than the edit (the token counts show it).",
        "",
    ]
    for result in data["results"]:
        out += _backend_section(result, data["tasks"])
    return "\n".join(out) + "\n"


def _backend_section(result: dict, tasks: list[dict]) -> list[str]:
    table = cells(runs_of(result))
    versions = ", ".join(f"{k} {v}" for k, v in result.get("versions", {}).items())
    out = [f"## {result['backend']} ({result.get('device') or 'cpu'}; {versions})", "", "### Goals", ""]
    out += ["| goal | measured | met |", "|---|---|---|"]
    out += [f"| {g} | {m} | {'yes' if ok else 'no'} |" for g, m, ok in goals(result, tasks)]
    facts = shortfalls(result, tasks)
    if facts:
        out += ["", "What bounds them:", ""] + [f"- {f}" for f in facts]
    out += ["", "### Per task", ""]
    out += [
        "| task | configuration | valid | tokens | passes per token | coalesced | decode s | decode x plain"
        " | total s | total x plain |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    order = [*CONFIGS, *PEERS.values()]
    for task, row in table.items():
        base = row.get("plain")
        for name in sorted(row, key=order.index):
            c = row[name]
            dec = f"{base['decode'] / c['decode']:.2f}x" if base and c["decode"] else "-"
            tot = f"{base['total'] / c['total']:.2f}x" if base and c["total"] else "-"
            ok = "yes" if c["valid"] else "no"
            per = c["passes"] / c["tokens"] if c["tokens"] else 0.0
            out.append(
                f"| {task} | {name} | {ok} | {c['tokens']:.0f} | {per:.2f} | {c['coalesced']:.0f} |"
                f" {c['decode']:.2f} | {dec} | {c['total']:.2f} | {tot} |"
            )
    out.append("")
    return out


def merge(datas: list[dict]) -> dict:
    """Several saved runs (one per backend, say) as one report; the first one's header."""
    first = dict(datas[0])
    first["results"] = [r for d in datas for r in d["results"]]
    commands = [d["command"] for d in datas]
    first["command"] = " ; ".join(dict.fromkeys(commands))
    return first


def chart(data: dict, path) -> bool:
    """No chart for this report (the tables are the figures)."""
    return False
