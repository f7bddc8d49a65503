"""What a forward pass over n tokens costs on this backend and machine, measured.

t(n) is the wall time of one eval of n tokens (the last emitted token plus n - 1 draft
tokens) with logits for all n positions, at a realistic KV length. On a CPU it grows far
faster than a GPU's (llama.cpp, 0.5B, 2 cores: n = 2 already costs more than two single
steps), and not smoothly (some batch sizes hit better kernels), so pedit measures it on a
grid of sizes and treats a size between grid points as costing what the cheapest size at
or above it costs:
    cost(n) = min { t(s) : s in grid, s >= n }
Beyond the largest size, cost grows linearly at the last measured per-token rate.
A calibration takes a few seconds; pedit/app/calibration.py caches it per machine.
"""

from __future__ import annotations

import json
import math
import statistics
import time
from dataclasses import dataclass
from functools import cached_property

GRID = (1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 40, 48, 64)
FILLER = (
    "The quick brown fox jumps over the lazy dog while the editor rewrites the file. "
    "def rename(count):\n    return count + 1\n\n# Notes\n\nSome text, some code.\n"
)


@dataclass(frozen=True)
class CostModel:
    sizes: tuple[int, ...]  # batch sizes n, ascending, starting at 1
    seconds: tuple[float, ...]  # t(n)

    def __post_init__(self):
        if not self.sizes or self.sizes[0] != 1 or list(self.sizes) != sorted(set(self.sizes)):
            raise ValueError("cost model sizes must be ascending and start at 1")
        if len(self.seconds) != len(self.sizes) or not all(0 < t < math.inf for t in self.seconds):
            raise ValueError("cost model needs one positive time per size")

    @cached_property
    def envelope(self) -> tuple[float, ...]:
        """cost() at each grid size: the cheapest measured size at or above it."""
        out = list(self.seconds)
        for i in range(len(out) - 2, -1, -1):
            out[i] = min(out[i], out[i + 1])
        return tuple(out)

    def cost(self, n: int) -> float:
        """Seconds for one forward pass over n tokens."""
        for size, t in zip(self.sizes, self.envelope, strict=True):
            if size >= n:
                return t
        last_n, last_t = self.sizes[-1], self.seconds[-1]
        return last_t * n / last_n

    def limit(self) -> float:
        """The decode speedup perfect drafts would give: max over n of n * t(1) / t(n)."""
        return max(n * self.seconds[0] / t for n, t in zip(self.sizes, self.seconds, strict=True))

    def to_json(self) -> str:
        return json.dumps({"sizes": self.sizes, "seconds": self.seconds})

    @classmethod
    def from_json(cls, text: str) -> CostModel:
        """The inverse of to_json; ValueError for anything else (not JSON, another shape)."""
        data = json.loads(text)
        sizes, seconds = (data.get("sizes"), data.get("seconds")) if isinstance(data, dict) else (0, 0)
        if not (isinstance(sizes, list) and all(type(n) is int for n in sizes)):
            raise ValueError("not a cost model: sizes must be a list of integers")
        if not (isinstance(seconds, list) and all(type(t) in (int, float) for t in seconds)):
            raise ValueError("not a cost model: seconds must be a list of numbers")
        return cls(tuple(sizes), tuple(seconds))

    @classmethod
    def table(cls, relative: dict[int, float], unit: float = 1.0) -> CostModel:
        """A cost model from {n: cost relative to one step} (tests, scripted backends)."""
        sizes = tuple(sorted(relative))
        return cls(sizes, tuple(relative[n] * unit for n in sizes))


def measure(backend, sizes=GRID, *, repeats: int = 3, kv: int = 256) -> CostModel:
    """Time eval of n tokens after a kv-token context, median of `repeats`, for each n."""
    need = kv + max(sizes)
    text = FILLER
    tokens = backend.tokenize(text)
    while len(tokens) < need:
        text += FILLER
        tokens = backend.tokenize(text)
    kv = min(kv, backend.n_ctx - max(sizes))
    backend.truncate(0)
    backend.eval(tokens[:kv])
    seconds = []
    for n in sizes:
        times = []
        backend.eval(tokens[kv : kv + n], n_logits=n)  # warm-up: a new batch shape allocates
        backend.truncate(kv)
        for _ in range(repeats):
            t = time.perf_counter()
            backend.eval(tokens[kv : kv + n], n_logits=n)
            times.append(time.perf_counter() - t)
            backend.truncate(kv)
        seconds.append(statistics.median(times))
    backend.truncate(0)
    return CostModel(tuple(sizes), tuple(seconds))
