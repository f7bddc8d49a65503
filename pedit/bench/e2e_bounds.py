"""What bounds the e2e goals (docs/e2e.md's paragraphs after its goals): a perfect draft,
read at the model's reading rate, the rest of each run as it was; and, with the drafts as
they are, the planner's draft lengths replaced by an oracle's (scripts/replay_passes.py,
docs/planner.md).

The replay gives, per task, r = oracle seconds / planner seconds for the same recorded
answers, both priced by the run's cost model. pedit's median answer shortened by that
share, everything else as it was:

    seconds' = seconds - answer seconds * (1 - r)

and each goal's figure is taken again with seconds'."""

from __future__ import annotations

import statistics

from ..app.templates import FIX_CHUNK_TOKENS
from .e2e import COPY, FIRST, SERVED
from .e2e_medians import best_peer, medians


def bound(data: dict, task: str) -> float | None:
    """What perfect drafts could give this task end to end: plain's seconds over pedit's
    with its answer read at the model's reading rate (the `reading` runs), the start-up,
    the load and the prompt as they were."""
    o, ideal = medians(data["runs"], task, "plain"), _ideal(data, task, "pedit")
    return o["seconds"] / ideal if o and ideal else None


def _ideal(data: dict, task: str, config: str) -> float | None:
    """`config`'s median seconds with its answer read at the model's reading rate (the
    `reading` runs): a perfect draft, everything else as it was; None without the split."""
    x, r = medians(data["runs"], task, config), medians(data["runs"], task, "reading")
    if not (x and r and r["answer_rate"]) or (config in SERVED and not x["prefill_seconds"]):
        return None
    return x["seconds"] - x["decode_seconds"] + x["tokens"] / r["answer_rate"]


def peer_bound(data: dict, task: str, config: str) -> float | None:
    """The best llama-server configuration's seconds over `config`'s ideal (_ideal): the
    most a perfect draft could give `config` against it on this task."""
    best, ideal = best_peer(data, task), _ideal(data, task, config)
    return best[0] / ideal if best and ideal else None


def _each(got: dict[str, float]) -> str:
    """'1.39x (median; a 1.38x, b 1.23x)'."""
    return (
        f"{statistics.median(got.values()):.2f}x (median; "
        + ", ".join(f"{t} {b:.2f}x" for t, b in got.items())
        + ")"
    )


def paragraphs(data: dict) -> str:
    ids = [t["id"] for t in data["tasks"]]
    out = []
    if got := {t: b for t in ids if (b := bound(data, t)) is not None}:
        out.append(
            "What bounds the goal against --speculate off here: were every answer verified as fast as "
            "the model reads (a perfect draft, at the `reading` runs' rate), the prompt, the load and "
            f"the start-up as they are, pedit would be {_each(got)} as fast as plain decoding."
        )
    if cli := {t: b for t in ids if (b := peer_bound(data, t, "pedit")) is not None}:
        fixed = []  # what the server's request never pays: the CLI's start-up, load and tools
        for t in cli:
            p, best = medians(data["runs"], t, "pedit"), best_peer(data, t)[0]
            s = p["startup_seconds"] + p["load_seconds"] + (p["tool_seconds"] or 0.0)
            fixed.append(f"{t} {s:.1f} s = {s / best:.0%}")
        out.append(
            "What bounds the goals against llama-server: with the same perfect draft, the CLI would be "
            f"at most {_each(cli)} as fast as the best llama-server configuration. What the server's "
            "request never pays, the CLI's start-up, its model's load and its tools (a fix's scoring "
            "of confusable words), is alone, in seconds and as a share of the best server's request: "
            + ", ".join(fixed)
            + "."
        )
    p, r = medians(data["runs"], FIRST, "pedit"), medians(data["runs"], FIRST, "plain")
    reading = medians(data["runs"], FIRST, "reading")
    if p and r and reading and reading["answer_rate"]:
        before = p["prefill_seconds"] + (p["tool_seconds"] or 0.0)  # the live line's prompt
        ideal = (before + r["decode_seconds"]) / (before + p["tokens"] / reading["answer_rate"])
        out.append(
            f"What bounds `make demo`'s live line: its answer at the reading rate, plain's answer "
            f"({r['decode_seconds']:.1f} s) and pedit's prompt and tools ({before:.1f} s) as they are, "
            f"it would show at most {ideal:.2f}x with the prompt."
        )
    if frames := _frames(data):
        out.append(
            "What bounds the prompt tokens: each of a command's runs reads its prompt's frame beyond "
            "the file (the file's name, the fences, the answer's start; the system prompt and the "
            "instruction come from the prompt cache), and a fix runs once per about "
            f"{FIX_CHUNK_TOKENS} tokens of the file (a small model fixes more in a paragraph than in "
            "a whole file): file tokens + runs × frame = tokens read, " + ", ".join(frames) + "."
        )
    if serve := {t: b for t in ids if (b := peer_bound(data, t, "pedit serve")) is not None}:
        out.append(
            "pedit serve, its answer at the reading rate and the rest of its request as it is, would "
            f"be at most {_each(serve)} as fast as the best llama-server configuration."
        )
    if oracle := _oracle(data):
        out.append(oracle)
    return "\n\n".join(out)


def _frames(data: dict) -> list[str]:
    """Per task whose runs say how many runs each made: its prompt tokens read as the
    file's tokens plus each run's frame, 'md-essay-demo 109 + 2 × 15 = 139 (1.28x)'."""
    out = []
    for t in (t["id"] for t in data["tasks"]):
        p = medians(data["runs"], t, "pedit")
        if p and p["runs"] and p["file_tokens"]:
            frame = (p["read"] - p["file_tokens"]) / p["runs"]
            share = p["read"] / p["file_tokens"]
            if frame < 0:  # a fix whose pieces with no prose ran no model: fewer read than the file
                read = f"{p['read']:.0f} of {p['file_tokens']}"
                out.append(f"{t} {read} ({share:.2f}x: its pieces with no prose ran no model)")
                continue
            out.append(f"{t} {p['file_tokens']} + {p['runs']} × {frame:.0f} = {p['read']:.0f} ({share:.2f}x)")
    return out


def ratios(replays: list[dict], serve: bool = False) -> dict[str, float]:
    """Per task in the replays' (`replay_passes.py` JSON) groups of the CLI's answers, or of
    pedit serve's: oracle / planner seconds."""
    return {
        t["id"]: t["oracle"]["seconds"] / t["planner"]["seconds"]
        for d in replays
        for g in d["groups"]
        if g.get("serve", False) == serve
        for t in g["tasks"]
        if t["planner"]["seconds"] > 0
    }


def oracle_bounds(data: dict) -> dict[str, dict[str, float]]:
    """With the oracle's share of each answer's time (module docstring), per task: "plain"
    (plain's seconds over pedit's), "cli" and "serve" (the best llama-server's over the
    CLI's, over pedit serve's); {} for what the runs or the replays lack."""
    oracle, on_serve = data.get("oracle") or {}, data.get("oracle_serve") or {}
    runs = data["runs"]
    out: dict[str, dict[str, float]] = {"plain": {}, "cli": {}, "serve": {}}
    for t in (t["id"] for t in data["tasks"]):
        best = best_peer(data, t)
        s, r = medians(runs, t, "pedit serve"), on_serve.get(t)
        if best and s and s["prefill_seconds"] and r is not None:  # a server that split its request
            out["serve"][t] = best[0] / (s["seconds"] - s["decode_seconds"] * (1 - r))
        p, r = medians(runs, t, "pedit"), oracle.get(t)
        if not p or r is None:
            continue
        seconds = p["seconds"] - p["decode_seconds"] * (1 - r)
        if o := medians(runs, t, "plain"):
            out["plain"][t] = o["seconds"] / seconds
        if best:
            out["cli"][t] = best[0] / seconds
    return out


def _oracle(data: dict) -> str | None:
    """The bounds with the oracle's passes, for the tasks the replays hold; None without."""
    runs, oracle, on_serve = data["runs"], data.get("oracle") or {}, data.get("oracle_serve") or {}
    shorter = {t["id"]: oracle[t["id"]] for t in data["tasks"] if t["id"] in oracle}
    got = oracle_bounds(data)
    plain, cli, served = got["plain"], got["cli"], got["serve"]
    if not shorter:
        return None
    text = (
        "What bounds them with the drafts as they are: replayed with an oracle's draft lengths "
        "(docs/planner.md: these tasks' answers, recorded on this machine and decoded again, the oracle "
        "knowing where the model leaves the draft), the answers take "
        + ", ".join(f"{t} {r:.2f}" for t, r in shorter.items())
        + " of the planner's time. pedit's answer that much shorter, everything else as it was:"
    )
    parts = []
    if plain:
        parts.append(f" against --speculate off {_each(plain)}")
    if cli:
        parts.append(f" the CLI against the best llama-server configuration {_each(cli)}")
    if served:
        shares = ", ".join(f"{t} {r:.2f}" for t, r in on_serve.items() if t in served)
        parts.append(f" pedit serve ({shares} of its answers' time, replayed as well) {_each(served)}")
    p, reading = medians(runs, COPY, "pedit"), medians(runs, COPY, "reading")
    if COPY in shorter and p and reading and p["answer_rate"] and reading["answer_rate"]:
        share = p["answer_rate"] / shorter[COPY] / reading["answer_rate"]
        parts.append(f" a copy-heavy answer ({COPY}) at {share:.0%} of the reading rate")
    p, o = medians(runs, FIRST, "pedit"), medians(runs, FIRST, "plain")
    if FIRST in shorter and p and o:
        before = p["prefill_seconds"] + (p["tool_seconds"] or 0.0)  # the live line's prompt
        demo = (before + o["decode_seconds"]) / (before + p["decode_seconds"] * shorter[FIRST])
        parts.append(f" `make demo`'s live line {demo:.2f}x with the prompt")
    return text + ";".join(parts) + "."
