"""The small cases and an edit, with the model resident (issue 71): what a user waits for
when the file is one line, when `--diff` is followed by `-y`, and when a long file is fixed
again after a one-word edit.

    one line       `pedit fix one.md -y`: a one-sentence file, the answer cache off
    diff then -y   `pedit fix one.md --diff` (untimed), then `pedit fix one.md -y`, timed:
                   the answer the --diff kept, written
    edit: first    a file of 30 one-sentence paragraphs (PARAGRAPHS), `pedit fix --stdout`,
                   the answer cache on and emptied at the round's start
    edit: again    the same file with one word of paragraph 17 changed ("says" -> "sayss"),
                   fixed again: its unchanged pieces are the first fix's (answercache.py)

Each is a new process as a user types it, in the resident configuration's user cache and
runtime directory (the model resident: e2e.run_all runs these after its rounds); the
configuration is "small", its tasks the cases above, medians over the rounds.
"""

from __future__ import annotations

import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from .e2e_medians import medians

ONE_LINE = "Their is a eror in this sentence.\n"
# the issue's file: 30 paragraphs of a sentence each, the same shape with other numbers
PARAGRAPHS = [f"Paragraph {i} says what the tool does, and it do it well." for i in range(30)]
EDITED = 17
CASES = ("one line", "diff then -y", "edit: first", "edit: again")
# the goals (issue 71), on the slowest machine measured
ONE_LINE_SECONDS, DIFF_THEN_YES_SECONDS, EDIT_SHARE = 1.0, 0.3, 0.25


def run(env: dict[str, str], repeats: int, timed, progress=lambda s: None) -> list:
    """The cases' runs (e2e.E2ERun, config "small"), `repeats` rounds of each; `timed`:
    e2e.timed, which times one command."""
    runs = []
    cache = Path(env["XDG_CACHE_HOME"]) / "pedit" / "answers"
    fix = [sys.executable, "-m", "pedit", "fix"]
    with tempfile.TemporaryDirectory() as tmp:
        one, long = Path(tmp) / "one.md", Path(tmp) / "paragraphs.md"
        stats = Path(tmp) / "stats.json"
        off, on = env | {"PEDIT_ANSWER_CACHE": "off"}, env | {"PEDIT_ANSWER_CACHE": "on"}
        one.write_text(ONE_LINE)  # untimed: the model resident (started here if no round started it)
        timed([*fix, str(one), "-y", "--stats-json", str(stats)], CASES[0], "small", -1, off, stats)
        for r in range(repeats):
            progress(f"small cases, round {r + 1}/{repeats}")
            shutil.rmtree(cache, ignore_errors=True)  # each round's edit starts from nothing kept
            one.write_text(ONE_LINE)
            runs.append(timed([*fix, str(one), "-y", "--stats-json", str(stats)], CASES[0], "small", r, off, stats))
            one.write_text(ONE_LINE)
            timed([*fix, str(one), "--diff", "--stats-json", str(stats)], CASES[1], "small", r, on, stats)
            runs.append(timed([*fix, str(one), "-y", "--stats-json", str(stats)], CASES[1], "small", r, on, stats))
            long.write_text(text())
            runs.append(timed([*fix, str(long), "--stdout", "--stats-json", str(stats)], CASES[2], "small", r,
                              on, stats))  # fmt: skip
            long.write_text(text(edited=True))
            runs.append(timed([*fix, str(long), "--stdout", "--stats-json", str(stats)], CASES[3], "small", r,
                              on, stats))  # fmt: skip
    return runs


def text(edited: bool = False) -> str:
    """The edit's file: PARAGRAPHS, one word of paragraph EDITED changed when `edited`."""
    out = list(PARAGRAPHS)
    if edited:
        out[EDITED] = out[EDITED].replace("says", "sayss")
    return "\n\n".join(out) + "\n"


def section(data: dict) -> list[str]:
    got = {c: medians(data["runs"], c, "small") for c in CASES}
    if not any(got.values()):
        return []
    rows = []
    for case, m in got.items():
        if m:
            read = f"{m['read']:.0f} / {m['file_tokens']}" if m["file_tokens"] else "–"
            runs = (m["runs"] or 0) if m["read"] else 0  # nothing read: the answer cache answered
            rows.append(f"| {case} | {m['seconds']:.2f} | {_answering(m)} | {read} | {runs} "
                        f"| {len(m['all']) - m['failed']} of {len(m['all'])} |")  # fmt: skip
    return [
        "## Small cases and an edit, with the model resident",
        "",
        "Each a new process as a user types it, the model resident (`pedit/bench/e2e_small.py`): "
        f"`pedit fix -y` of a one-sentence file ({ONE_LINE.strip()!r}) with no answer cache; the same "
        "file's `--diff`, then its `-y` (timed), which writes the answer the `--diff` kept; a file of "
        f"{len(PARAGRAPHS)} one-sentence paragraphs fixed (`--stdout`, the answer cache on, emptied at "
        f"each round's start), then fixed again with one word of paragraph {EDITED} changed. Answering: "
        "the seconds from asking for the file's answer to the outcome (`answering_seconds`); the rest "
        "is the command's start-up and its connection. Runs: the model's runs (pieces), 0 where the "
        "answer cache answered.",
        "",
        "| case | seconds | answering s | prompt tokens read / file tokens | runs | exit 0 |",
        "|---|---:|---:|---:|---:|---:|",
        *rows,
        "",
    ]


def _answering(m: dict) -> str:
    got = [x["answering_seconds"] for x in m["all"] if x.get("answering_seconds") is not None]
    return f"{statistics.median(got):.2f}" if got else "–"


def goals(data: dict) -> list[tuple[str, str, bool]]:
    got = {c: medians(data["runs"], c, "small") for c in CASES}
    out = []
    if m := got["one line"]:
        out.append((f"a one-line file with the model resident <= {ONE_LINE_SECONDS} s",
                    f"{m['seconds']:.2f} s", m["seconds"] <= ONE_LINE_SECONDS))  # fmt: skip
    if m := got["diff then -y"]:
        out.append((f"`--diff` then `-y`: the `-y` <= {DIFF_THEN_YES_SECONDS} s",
                    f"{m['seconds']:.2f} s", m["seconds"] <= DIFF_THEN_YES_SECONDS))  # fmt: skip
    first, again = got["edit: first"], got["edit: again"]
    if first and again:
        share = again["seconds"] / first["seconds"]
        out.append((f"a one-word edit of the {len(PARAGRAPHS)}-paragraph file <= 1/{round(1 / EDIT_SHARE)} of "
                    "its first fix", f"{again['seconds']:.1f} / {first['seconds']:.1f} s = {share:.2f}",
                    share <= EDIT_SHARE))  # fmt: skip
    return out
