"""The e2e report's skeleton section and its goal: how much of a fix's file took no draw
(forced by the skeleton's grammar, or in a piece with no prose that ran no model), against
the share of its tokens that lie wholly in the skeleton (tools/skeleton).

    T = the file's tokens, S = those wholly in its skeleton (the `reading` run counts them)
    A = the answer's tokens, F = the forced ones among them (pedit's --stats-json:
        forced_tokens; runs from before it was kept: coalesced_tokens, the forced tokens
        that took no pass of their own)
    drawn = A - F                 # every other token of the answer was drawn (a draft
                                  # verified, or the model's own)
    no draw = 1 - drawn / T  >=  S / T      # the goal: the grammar forces what it may

A token that straddles prose and skeleton is the model's to draw; so is the first token
of each span when the model's token there carries the hole's last character too, and the
closing fence and end of turn of each run.
"""

from __future__ import annotations

from .e2e_medians import medians


def shares(data: dict, task: str) -> tuple[int, int, int, int] | None:
    """(T, S, A, F) for a task whose reading run counted its skeleton; None otherwise."""
    p, r = medians(data["runs"], task, "pedit"), medians(data["runs"], task, "reading")
    if not p or not r or r["middle"].get("skeleton_tokens") is None:
        return None
    x, t = p["middle"], r["middle"]["file_tokens"] or p["file_tokens"]
    if not t:
        return None
    forced = x.get("forced_tokens")
    return (
        t,
        r["middle"]["skeleton_tokens"],
        x["completion_tokens"],
        x["forced"] if forced is None else forced,
    )


def section(data: dict, ids: list[str], fixes: set[str]) -> list[str]:
    rows = []
    for task in ids:
        if task not in fixes or (s := shares(data, task)) is None:
            continue
        t, sk, a, f = s
        drawn = a - f
        rows.append(f"| {task} | {t} | {sk} = {sk / t:.0%} | {a} / {f} / {drawn} | {1 - drawn / t:.0%} |")
    if not rows:
        return []
    return [
        "## The skeleton: what a fix's grammar forces",
        "",
        "Per fix task: the file's tokens, those wholly in its skeleton (links' targets, code, markup: "
        "`pedit/tools/skeleton/`), and pedit's answer in its run with the median answer time: its "
        "tokens, the ones the skeleton's grammar forced (no draw, no rejection) and the ones drawn "
        "(drafts verified, or the model's own). Took no draw: the share of the file's tokens that "
        "were forced or lay in a piece with no prose (no model run at all), 1 - drawn / file "
        "tokens; the goal is at least the skeleton's share. How it is counted: "
        "`pedit/bench/e2e_skeleton.py`.",
        "",
        "| task | file tokens | in the skeleton | answer: tokens / forced / drawn | took no draw |",
        "|---|---:|---:|---:|---:|",
        *rows,
        "",
    ]


def goal(data: dict, fixes: set[str]) -> tuple[str, str, bool] | None:
    got = {t: s for t in sorted(fixes) if (s := shares(data, t))}
    if not got:
        return None

    def margin(s):
        t, sk, a, f = s
        return (1 - (a - f) / t) - sk / t

    worst = min(got, key=lambda t: margin(got[t]))
    t, sk, a, f = got[worst]
    return (
        "a fix's tokens that took no draw >= the share of its file's tokens in the skeleton (every fix task)",
        f"worst {1 - (a - f) / t:.0%} against {sk / t:.0%} ({worst})",
        all(margin(s) >= 0 for s in got.values()),
    )
