"""The e2e report's resident model (issue 56): the same commands with the model resident
(the `resident` configuration, e2e.py), beside a new process that loads its model, `pedit
serve`'s request and the best llama-server's; and the goals a resident command is held to.

A resident command's own cost is what it spends outside its files' answers: its start-up
(Python, the thin client's imports, reading, checking and writing) and its connection to
the resident (the `load` of its --stats-json), that is its seconds - the seconds from
asking for the answers to their outcome (`answering_seconds`: the model's runs, the
tools, the resident's own work on the request, the stream back)."""

from __future__ import annotations

import statistics

from .e2e import COPY, FIRST
from .e2e_medians import best_peer, first_command, medians

OWN = 0.3  # seconds: a resident command's own cost, at most
NEAR_SERVE = 1.10  # the resident CLI's seconds over pedit serve's request, at most
AHEAD = 1.2  # the best llama-server's request over the resident CLI's seconds, at least (issue 71)


def _rows(data: dict, ids: list[str]):
    for t in ids:
        p, r = medians(data["runs"], t, "pedit"), medians(data["runs"], t, "resident")
        if p and r:
            yield t, p, r, medians(data["runs"], t, "pedit serve"), best_peer(data, t)


def own(x: dict) -> float:
    """A resident command's own seconds, start-up and connection: the median over its runs
    of its seconds less its answers' (runs from before `answering_seconds` was kept: all but
    the prompt, the tools and the answer)."""
    runs = [r for r in x["all"] if r.get("answering_seconds") is not None]
    if runs and len(runs) == len(x["all"]):
        return statistics.median(r["seconds"] - r["answering_seconds"] for r in runs)
    return x["startup_seconds"] + x["load_seconds"]


def _connection(x: dict) -> float:
    return statistics.median(r["load_seconds"] for r in x["all"])


def _same(data: dict, task: str) -> str:
    """'3 of 3': the resident's rounds that wrote plain decoding's text (plain's rounds
    agreeing), or '–'."""
    runs = [x for x in data["runs"] if x["task"] == task and x["repeat"] >= 0]
    plain = {x["output"] for x in runs if x["config"] == "plain"}
    mine = [x["output"] for x in runs if x["config"] == "resident"]
    if len(plain) != 1 or not mine:
        return "–"
    return f"{sum(m in plain for m in mine)} of {len(mine)}"


def section(data: dict, ids: list[str]) -> list[str]:
    rows = []
    for t, p, r, s, best in _rows(data, ids):
        split = " / ".join(
            f"{r[k] or 0.0:.1f}" for k in ("prefill_seconds", "tool_seconds", "decode_seconds")
        )
        serve = f"{s['seconds']:.1f} = {r['seconds'] / s['seconds']:.2f}x" if s else "–"
        peer = f"{best[0] / r['seconds']:.2f}x" if best else "–"
        rows.append(
            f"| {t} | {p['seconds']:.1f} | {r['seconds']:.1f} | {p['seconds'] / r['seconds']:.2f}x | "
            f"{own(r):.2f} ({own(r) - _connection(r):.2f} + {_connection(r):.2f}) | {split} | {serve} | "
            f"{peer} | {_same(data, t)} |"
        )
    if not rows:
        return []
    first = first_command(data, "resident")
    started = (
        f" A new user's first command that starts it ({first[0]}, an empty cache of its own): "
        f"{first[1]:.1f} s, against {_new_user(data)} without it, in the same run."
        if first
        else ""
    )
    return [
        "## With the model resident",
        "",
        "The same commands, a new process each, with the model resident (`resident/`: the first command "
        "starts a process that keeps the model loaded; each later one connects to it over a Unix socket, "
        "sends the file's text and its job, and streams the answer back; no answer cache in either "
        "configuration, so the model runs every time). Own cost: the command's start-up (Python, the "
        "client's imports, reading, checking and writing) + its connection: its seconds less the seconds "
        "from asking for its file's answer to the outcome (`answering_seconds` in --stats-json: the model's "
        "runs, the tools, the resident's own work on the request, the stream back). Serve: pedit serve's "
        f"request, and the resident CLI's seconds over it.{started}",
        "",
        "| task | new process s | resident s | new process / resident | own cost s (start-up + "
        "connection) | prompt / tools / answer s | pedit serve s = resident / serve | best llama-server / "
        "resident | plain decoding's text |",
        "|---|---:|---:|---:|---:|---|---:|---:|---:|",
        *rows,
        "",
    ]


def _new_user(data: dict) -> str:
    got = first_command(data)
    return f"{got[1]:.1f} s" if got else "–"


def goals(data: dict, ids: list[str]) -> list[tuple[str, str, bool]]:
    rows = list(_rows(data, ids))
    if not rows:
        return []
    out = []
    worst = max(rows, key=lambda row: own(row[2]))
    out.append((
        f"a command's own cost with the model resident (start-up + connection) <= {OWN} s on every task",
        f"worst {own(worst[2]):.2f} s ({worst[0]})", own(worst[2]) <= OWN,
    ))  # fmt: skip
    near = [(r["seconds"] / s["seconds"], t) for t, _, r, s, _ in rows if s]
    if near:
        ratio, t = max(near)
        out.append((
            f"the resident CLI within {NEAR_SERVE - 1:.0%} of pedit serve's request on every task",
            f"worst {ratio:.2f}x ({t})", ratio <= NEAR_SERVE,
        ))  # fmt: skip
    # where pedit serve is at least the best llama-server, the resident CLI must be too
    held = [
        (best[0] / r["seconds"], t) for t, _, r, s, best in rows if s and best and best[0] >= s["seconds"]
    ]
    if held:
        ratio, t = min(held)
        out.append((
            "the resident CLI >= 1.0x the best llama-server on every task where pedit serve is",
            f"worst {ratio:.2f}x ({t}), on {len(held)} of {len(rows)} tasks", ratio >= 1.0,
        ))  # fmt: skip
    ahead = [(best[0] / r["seconds"], t) for t, _, r, _, best in rows if best]
    if ahead:  # issue 71
        ratio, t = min(ahead)
        out.append((
            f"the resident CLI >= {AHEAD}x the best llama-server on every task",
            f"worst {ratio:.2f}x ({t})", ratio >= AHEAD,
        ))  # fmt: skip
    rename = next((best[0] / r["seconds"] for t, _, r, _, best in rows if t == COPY and best), None)
    if rename is not None:
        out.append((
            f"the CLI's rename ({COPY}) with the model resident >= 1.4x the best llama-server configuration",
            f"{rename:.2f}x", rename >= 1.4,
        ))  # fmt: skip
    first, new = first_command(data, "resident"), first_command(data)
    if first and new and first[0] == new[0] == FIRST:
        out.append((
            f"a new user's first command ({FIRST}) no slower with the resident starting than without",
            f"{first[1]:.1f} / {new[1]:.1f} s = {first[1] / new[1]:.2f}x", first[1] <= new[1],
        ))  # fmt: skip
    return out
