"""The prior cost curve a first run starts from (pedit/machine/prior_costs.json): the full
measurement (engine/costmodel.measure, every size of the grid and the growth over the
context) of the default model on this machine, in units of t(1). A first run times t(1)
on its own machine and takes the rest from this; its passes refine it (machine/calibration.py).

    python scripts/cost_prior.py [-m MODEL] [--out pedit/machine/prior_costs.json] [--times 3]

Each time and growth is the median of --times full measurements (one measurement's growth
g(1) moved from 0.8e-4 to 2.2e-4 t(1) per token from run to run on AMD EPYC).
"""

from __future__ import annotations

import argparse
import datetime
import json
import statistics
from pathlib import Path

from pedit import models
from pedit.engine.costmodel import CostModel, measure
from pedit.machine.calibration import PRIOR, cpu_name
from pedit.machine.cpus import usable_cpus
from pedit.models.progress import quietly


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-m", "--model", default=models.DEFAULT_MODEL)
    ap.add_argument("--out", type=Path, default=PRIOR)
    ap.add_argument("--times", type=int, default=3, help="full measurements, their median taken")
    a = ap.parse_args()
    backend = quietly(models.load(a.model, n_threads=usable_cpus()))
    model = median([measure(backend) for _ in range(max(1, a.times))])
    relative = model.scaled(1 / model.seconds[0])
    when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d")
    entry = json.loads(relative.to_json()) | {
        "measured": f"{a.model} on llama.cpp, {cpu_name()}, {usable_cpus()} cores, {when}; "
        f"t(1) was {model.seconds[0] * 1000:.1f} ms (python scripts/cost_prior.py)"
    }
    lines = [f" {json.dumps(k)}: {json.dumps(v)}" for k, v in entry.items()]
    a.out.write_text("{\n" + ",\n".join(lines) + "\n}\n", encoding="utf-8")
    print(entry["measured"])
    print(" ".join(f"{n}:{t:.1f}" for n, t in zip(relative.sizes, relative.seconds, strict=True)))


def median(models: list[CostModel]) -> CostModel:
    """Each size's time, each growth's slope and each head share: the median over the
    measurements."""
    first = models[0]
    seconds = tuple(statistics.median(m.seconds[i] for m in models) for i in range(len(first.sizes)))
    growth = tuple(
        (n, statistics.median(m.growth[i][1] for m in models)) for i, (n, _) in enumerate(first.growth)
    )
    head = tuple((n, statistics.median(m.head[i][1] for m in models)) for i, (n, _) in enumerate(first.head))
    return CostModel(first.sizes, seconds, first.context, growth, head)


if __name__ == "__main__":
    main()
