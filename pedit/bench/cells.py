"""From runs to ratios: per task and configuration, medians over the repeats against plain decoding.

For a task and configuration c, with medians over the repeats (interleaved, same process):
    decode speedup = median decode seconds of plain / median decode seconds of c
    end-to-end     = median (prefill + decode) of plain / median (prefill + decode) of c
min-max: each repeat of c against the plain median. The machine's limit is the decode
speedup perfect drafts would give, max over K of K*t(1)/t(K) (costmodel.CostModel.limit,
t measured in the same run).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from .run import BackendResult, Run

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


def plain_rates(result: BackendResult) -> dict[str, float]:
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
    rates = plain_rates(result)
    if len(rates) < 3:
        return {}
    median = statistics.median(rates.values())
    return {t: r for t, r in rates.items() if r < below * median}
