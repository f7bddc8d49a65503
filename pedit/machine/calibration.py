"""Calibration: the cost model of a backend on this machine, cached per model and
machine, and refined by the passes real runs make (loading.py loads a model with it).

A first run does not measure the whole curve (a minute on 2 cores, with the 1.5B model):
it times one token (about a second, `quick`) and takes the rest of the curve from the
prior, a curve measured on one machine in units of t(1) (prior_costs.json, written by
scripts/cost_prior.py). Every pass a run makes is logged (costmodel.Passes) and `keep`
writes them into the entry when the model is closed: the next run prices each size its
passes read by what it cost there, on this machine, after roll-backs as it really runs.

The cache is keyed by backend, model, thread count, CPU, the llama.cpp build (build.key:
another build, another price list) and pedit version. It only saves
time: an entry that cannot be read or is not a cost model is measured again and
overwritten (passes of the wrong shape are dropped); a cache that cannot be written costs
one warning line and a measurement on every run, never the run itself.
"""

from __future__ import annotations

import hashlib
import json
import math
import platform
import statistics
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from .. import __version__, models
from ..backends import Backend
from ..engine.costmodel import KEEP, SEEN, CostModel, Passes, measure
from ..models.cachefile import warn_stderr, write_cache_file
from ..models.nativebuild import cpuinfo
from . import build
from .cpus import usable_cpus

# 2: with the growth over the context; 3: llama.cpp's logits not copied; 4: passes of 128 and
# 256 tokens; 5: t(1) and the prior, refined by real passes (older entries are measured again)
COSTS_FORMAT = 5
PRIOR = Path(__file__).with_name("prior_costs.json")
QUICK_KV = 32  # the context a first run times its one-token steps after


def cpu_name() -> str:
    """The CPU's model name (Linux /proc/cpuinfo), else what platform knows."""
    return cpuinfo("model name") or platform.processor() or "unknown CPU"


def machine_id() -> str:
    return f"{platform.machine()}|{cpu_name()}|{usable_cpus()}"


def identity(backend) -> str:
    """What identifies the model a backend runs: its file (or directory) and version stamp."""
    path = getattr(backend, "path", None)
    if path is None:
        return backend.name
    st = (Path(path) / "config.json" if Path(path).is_dir() else Path(path)).stat()
    return f"{path}|{st.st_size}|{st.st_mtime_ns}"


def prior() -> CostModel:
    """The default curve, in units of t(1) at its context (its "measured" key says where)."""
    return CostModel.from_json(PRIOR.read_text(encoding="utf-8"))


def quick(backend: Backend) -> CostModel:
    """A first run's cost model, in about a second: t(1) timed as plain decoding runs
    (consecutive steps after QUICK_KV tokens), brought to the prior's context c0 by the
    prior's growth, g(1) in units of t(1):  t(1, c0) = t(1, kv) (1 + g(1) (c0 - kv));
    the other sizes are the prior's times that."""
    curve = prior()
    t1 = measure(backend, sizes=(1,), kv=QUICK_KV, growth_sizes=()).seconds[0]
    return curve.scaled(t1 * (1 + curve.slope(1) * max(0, curve.context - QUICK_KV)))


def cached(backend, identity: str, cache_dir: Path, measure_fn=quick, warn=warn_stderr) -> CostModel:
    """The cost model for (backend, model identity, machine): the entry in cache_dir with
    the passes runs logged into it, else measured now (`measure_fn`) and kept there when it
    can be; `warn(line)` (default: stderr) hears once that it cannot. Its log
    (CostModel.log) collects this run's passes for `keep`."""
    found = lookup(backend, identity, cache_dir)
    if found is not None:
        return found
    path = _entry(backend, identity, cache_dir)
    model = _with_head(measure_fn(backend))
    try:
        write_cache_file(path, model.to_json())
    except OSError as exc:
        warn(f"cannot write the cost cache ({exc}); measured again next time")
        return model
    return Passes(model, key=str(path)).model()


def _with_head(model: CostModel) -> CostModel:
    """The model, with the prior's head shares where it has none (measured without them,
    or an entry from before they were measured)."""
    return model if model.head else replace(model, head=prior().head)


def _entry(backend, identity: str, cache_dir: Path) -> Path:
    threads = getattr(backend, "n_threads", "")
    built = build.key() if backend.name == "llama.cpp" else ""  # a rebuild prices anew
    key = f"{backend.name}|{identity}|{threads}|{machine_id()}|{built}|{__version__}|{COSTS_FORMAT}"
    return cache_dir / f"{hashlib.sha256(key.encode()).hexdigest()[:24]}.json"


def lookup(backend, identity: str, cache_dir: Path) -> CostModel | None:
    """The cached cost model with the passes runs logged into it; None when there is none."""
    path = _entry(backend, identity, cache_dir)
    try:
        text = path.read_text(encoding="utf-8")
        return Passes(_with_head(CostModel.from_json(text)), _seen(text), key=str(path)).model()
    except (OSError, ValueError):  # absent, unreadable, or not a cost model: measure again
        return None


def _seen(text: str) -> dict[int, list[float]]:
    """An entry's logged passes {size: [seconds, ...]}; {} when they are not of that shape."""
    seen = json.loads(text).get("seen", {})
    ok = isinstance(seen, dict) and all(
        k.isdigit() and isinstance(v, list) and all(type(t) is float and 0 < t < math.inf for t in v)
        for k, v in seen.items()
    )
    return {int(k): v for k, v in seen.items()} if ok else {}


def keep(cost: CostModel | None, warn=warn_stderr) -> None:
    """Write the passes this process logged into its cost model's entry, with the ones
    another process wrote there meanwhile (the latest costmodel.KEEP per size).

    A run counts as at most SEEN passes of a size, each its median: one run can price a
    size for the next, but no run outweighs the others. A run timed while other work shared
    the cores (its wide passes twice their price, measured) would otherwise fill a size's
    KEEP with its own passes and price the next runs by them."""
    log = cost.log if cost is not None else None
    if log is None or not log.added or not log.key:
        return
    path = Path(log.key)
    try:
        seen = _seen(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        seen = {}
    ran: dict[int, list[float]] = {}
    for rows, t0 in log.added:
        ran.setdefault(rows, []).append(t0)
    for rows, ts in ran.items():
        seen.setdefault(rows, []).extend([statistics.median(ts)] * min(len(ts), SEEN))
    entry = json.loads(log.base.to_json()) | {"seen": {str(n): ts[-KEEP:] for n, ts in sorted(seen.items())}}
    try:
        write_cache_file(path, json.dumps(entry))
    except OSError as exc:
        warn(f"cannot write the cost cache ({exc}); this run's passes are not kept")
    log.added.clear()


def measure_cost(backend: Backend, measure_fn: Callable[[Backend], CostModel] = quick) -> CostModel:
    """The cost model, from the user cache when this backend was measured before."""
    return cached(backend, identity(backend), models.cache_root() / "costs", measure_fn=measure_fn)


def cached_cost(backend: Backend) -> CostModel | None:
    """The cost model the user cache holds for this backend, or None (measure_cost measures it)."""
    return lookup(backend, identity(backend), models.cache_root() / "costs")
