"""Calibration: the cost model of a backend on this machine, measured once and cached
(loading.py loads a model with it).

The cache is keyed by backend, model, thread count, CPU and pedit version. It only saves
time: an entry that cannot be read or is not a cost model is measured again and
overwritten; a cache that cannot be written costs one warning line and a measurement on
every run, never the run itself.
"""

from __future__ import annotations

import hashlib
import platform
from collections.abc import Callable
from pathlib import Path

from .. import __version__, models
from ..backends import Backend
from ..engine.costmodel import CostModel, measure
from ..models.cachefile import warn_stderr, write_cache_file
from .machine import usable_cpus

# 2: with the growth over the context; 3: llama.cpp's logits not copied; 4: passes of 128 and
# 256 tokens (older entries are measured again)
COSTS_FORMAT = 4


def cpu_name() -> str:
    """The CPU's model name (Linux /proc/cpuinfo), else what platform knows."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def machine_id() -> str:
    return f"{platform.machine()}|{cpu_name()}|{usable_cpus()}"


def identity(backend) -> str:
    """What identifies the model a backend runs: its file (or directory) and version stamp."""
    path = getattr(backend, "path", None)
    if path is None:
        return backend.name
    st = (Path(path) / "config.json" if Path(path).is_dir() else Path(path)).stat()
    return f"{path}|{st.st_size}|{st.st_mtime_ns}"


def cached(backend, identity: str, cache_dir: Path, measure_fn=measure, warn=warn_stderr) -> CostModel:
    """The calibration for (backend, model identity, machine), measured once and kept in
    cache_dir when it can be; `warn(line)` (default: stderr) hears once that it cannot."""
    threads = getattr(backend, "n_threads", "")
    key = f"{backend.name}|{identity}|{threads}|{machine_id()}|{__version__}|{COSTS_FORMAT}"
    path = cache_dir / f"{hashlib.sha256(key.encode()).hexdigest()[:24]}.json"
    try:
        return CostModel.from_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):  # absent, unreadable, or not a cost model: measure again
        pass
    model = measure_fn(backend)
    try:
        write_cache_file(path, model.to_json())
    except OSError as exc:
        warn(f"cannot write the cost cache ({exc}); measured again next time")
    return model


def measure_cost(backend: Backend, measure_fn: Callable[[Backend], CostModel] = measure) -> CostModel:
    """The cost model, from the user cache when this backend was measured before."""
    return cached(backend, identity(backend), models.cache_root() / "costs", measure_fn=measure_fn)
