"""The e2e report's comparison with an earlier pedit (`pedit bench --e2e --baseline PYTHON`):
the same commands run by another installation, interleaved with this one's in the same run,
so that a change's cost or gain is read on one machine at one time."""

from __future__ import annotations

from .e2e_medians import medians


def _pairs(data: dict, ids: list[str]):
    for task in ids:
        p, b = medians(data["runs"], task, "pedit"), medians(data["runs"], task, "baseline")
        if p and b:
            yield task, p, b


def _same(data: dict, task: str) -> str:
    """'3 of 3': the rounds in which the two wrote the same text."""
    by = {}
    for x in data["runs"]:
        if x["task"] == task and x["repeat"] >= 0 and x["config"] in ("pedit", "baseline"):
            by.setdefault(x["repeat"], {})[x["config"]] = x["output"]
    pairs = [r for r in by.values() if len(r) == 2]
    return f"{sum(r['pedit'] == r['baseline'] for r in pairs)} of {len(pairs)}"


def section(data: dict, ids: list[str]) -> list[str]:
    rows = []
    for task, p, b in _pairs(data, ids):
        x, y = p["middle"], b["middle"]
        rows.append(
            f"| {task} | {p['seconds']:.1f} | {b['seconds']:.1f} | {b['seconds'] / p['seconds']:.2f}x | "
            f"{p['decode_seconds']:.1f} / {b['decode_seconds']:.1f} | {x.get('rows_read', 0)} / "
            f"{y.get('rows_read', 0)} | {x.get('forced', 0)} / {y.get('forced', 0)} | {_same(data, task)} |"
        )
    if not rows:
        return []
    base = data.get("baseline", {})
    return [
        "## Against an earlier pedit",
        "",
        f"The baseline: the same commands run by another installation of pedit ({base.get('python', '?')}, "
        f"at `{base.get('commit') or 'a commit not known'}`), interleaved with this one's in the same "
        "rounds. "
        "Seconds are medians, end to end; the answer's seconds, the rows its passes read and the "
        "rows a grammar forced come from each one's run with the median answer time.",
        "",
        "| task | pedit s | baseline s | baseline / pedit | answer s: pedit / baseline | rows read: pedit "
        "/ baseline | forced rows: pedit / baseline | the same text |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
        *rows,
        "",
    ]


def goal(data: dict, ids: list[str]) -> tuple[str, str, bool] | None:
    got = {task: b["seconds"] / p["seconds"] for task, p, b in _pairs(data, ids)}
    if not got:
        return None
    worst = min(got, key=got.get)
    return (
        "every task end to end >= 1.0x the baseline (an earlier pedit, interleaved)",
        f"worst {got[worst]:.2f}x ({worst})",
        got[worst] >= 1.0,
    )
