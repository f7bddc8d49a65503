"""The e2e runs' medians per task and configuration (pedit bench --e2e, e2e.py), which the
report (e2e_report.py) and the bounds (e2e_bounds.py) read."""

from __future__ import annotations

import statistics

from . import servers


def first_command(data: dict, config: str = "pedit") -> tuple[str, float, float] | None:
    """(task, seconds of a new user's first command, median of its later runs): the
    configuration's first warm-up run (pedit's: the run's first; the resident's: the one
    that started it, in a cache of its own) and the same task's timed runs of it; None for
    runs before it."""
    warm = [x for x in data["runs"] if x["repeat"] == -1 and x.get("config", "pedit") == config]
    p = medians(data["runs"], warm[0]["task"], config) if warm else None
    return (warm[0]["task"], warm[0]["seconds"], p["seconds"]) if p else None


def medians(runs: list[dict], task: str, config: str) -> dict | None:
    mine = [x for x in runs if x["task"] == task and x["config"] == config and x["repeat"] >= 0]
    if not mine:
        return None
    keys = ("seconds", "load_seconds", "prefill_seconds", "decode_seconds")
    out = {k: statistics.median(x[k] for x in mine) for k in keys}
    kept = all("tool_seconds" in x for x in mine)  # runs from before it: in their prompt's time
    out["tool_seconds"] = statistics.median(x["tool_seconds"] for x in mine) if kept else None
    # what plain decoding spends too: the prompt, the tools' reads, the answer
    out["spent"] = statistics.median(x["prefill_seconds"] + x.get("tool_seconds", 0.0) + x["decode_seconds"]
                                     for x in mine)  # fmt: skip
    reported = [x["reported"] for x in mine if x.get("reported")]
    out["reported"] = statistics.median(reported) if reported else None
    out["answer_rate"] = _rate(mine, lambda x: x["completion_tokens"], "decode_seconds")
    out["tokens"] = statistics.median(x["completion_tokens"] for x in mine)
    out["startup_seconds"] = max(0.0, out["seconds"] - out["load_seconds"] - out["prefill_seconds"]
                                 - (out["tool_seconds"] or 0.0) - out["decode_seconds"])  # fmt: skip
    out["middle"] = sorted(mine, key=lambda x: x["decode_seconds"])[len(mine) // 2]  # its answer's figures
    out["all"] = mine
    read = [x["prompt_tokens"] - x["cached_tokens"] for x in mine]
    out["read"] = statistics.median(read)
    out["file_tokens"] = mine[0]["file_tokens"]
    out["runs"] = mine[0].get("runs")  # None: runs from before --stats-json said
    out["failed"] = sum(x["exit_code"] != 0 for x in mine)
    return out


def _rate(runs: list[dict], tokens, seconds: str) -> float | None:
    """The median over runs of tokens(run) / run[seconds] (None when no run spent any)."""
    rates = [tokens(x) / x[seconds] for x in runs if x[seconds] > 0]
    return statistics.median(rates) if rates else None


def best_peer(data: dict, task: str) -> tuple[float, str] | None:
    """llama-server's fastest configuration on the task: (median seconds, configuration)."""
    got = [(m["seconds"], c) for c in servers.PEERS if (m := medians(data["runs"], task, c))]
    return min(got) if got else None
