"""The prior cost curve a first run starts from (pedit/app/prior_costs.json): the full
measurement (engine/costmodel.measure, every size of the grid and the growth over the
context) of the default model on this machine, in units of t(1). A first run times t(1)
on its own machine and takes the rest from this; its passes refine it (app/calibration.py).

    python scripts/cost_prior.py [-m MODEL] [--out pedit/app/prior_costs.json]
"""

from __future__ import annotations

import argparse
import datetime
import json
from pathlib import Path

from pedit import models
from pedit.app.calibration import PRIOR, cpu_name
from pedit.app.machine import usable_cpus
from pedit.engine.costmodel import measure


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-m", "--model", default=models.DEFAULT_MODEL)
    ap.add_argument("--out", type=Path, default=PRIOR)
    a = ap.parse_args()
    backend = models.load(a.model, n_threads=usable_cpus())
    model = measure(backend)
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


if __name__ == "__main__":
    main()
