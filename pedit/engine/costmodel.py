"""What a forward pass over n tokens costs on this backend and machine, measured.

t(n) is the wall time of one eval of n tokens (the last emitted token plus n - 1 draft
tokens) with logits for all n positions, at a realistic KV length. On a CPU it grows far
faster than a GPU's (llama.cpp, 0.5B, 2 cores: n = 2 already costs more than two single
steps), and not smoothly (some batch sizes hit better kernels), so pedit measures it on a
grid of sizes and treats a size between grid points as costing what the cheapest size at
or above it costs:
    cost(n) = min { t(s) : s in grid, s >= n }
Beyond the largest size, cost grows linearly at the last measured per-token rate.

A pass also reads the whole KV cache, so it costs more deeper into the context. Each new
token attends over every cached one, so the extra time grows linearly with the context
length c beyond the calibration's c0:
    cost(n, c) = cost(n) + g(n) * max(0, c - c0),   g(n) = g(1) + g1 (n - 1)
(every pass reads the cache: g(1), the least-squares slope of consecutive one-token
steps timed at seven contexts from c0 on; each further token of a pass attends over it
too: g1, fitted by least squares to wider passes timed again after `far` tokens). The
full measurement takes about a minute with the 1.5B model on 2 cores (pedit bench runs
it); a user's first command times t(1) alone and takes the rest from a prior curve, and
the passes runs make refine it (Passes; pedit/machine/calibration.py caches both per machine).

A pass that needs only its last row's logits (a prompt, or a grammar's forced run as
plain decoding reads it) skips the output head's rows for the others. The head is a
matrix of vocabulary x width (151,936 x 1,536 for the default model): on a CPU it costs
a pass of n rows a share of its time that falls from about a fifth at 8 rows to a sixth
at 64 (machine/prior_costs.json's "head", from scripts/cost_prior.py). So
    cost_last(n, c) = cost(n, c) (1 - f(n))
with f, the head's share, measured at a few sizes and linear between them (flat beyond).
"""

from __future__ import annotations

import json
import math
import statistics
import time
from dataclasses import dataclass, field, replace
from functools import cached_property

# Sizes that are multiples of 32 or 64 hit llama.cpp's faster kernels (scripts/
# measure_pass_sizes.py, docs/engine.md: 64 tokens cost less than 63 or 65, and 256 verify
# faster per token than 64). A copy-heavy edit verifies long runs of the file: the wide
# sizes let it verify nearly at the rate the model reads a prompt.
GRID = (1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 40, 48, 64, 128, 256)
WIDE = 64  # passes wider than this take a second or more: timed once after a warm-up
FILLER = (
    "The quick brown fox jumps over the lazy dog while the editor rewrites the file. "
    "def rename(count):\n    return count + 1\n\n# Notes\n\nSome text, some code.\n"
)


@dataclass(frozen=True)
class CostModel:
    sizes: tuple[int, ...]  # batch sizes n, ascending, starting at 1
    seconds: tuple[float, ...]  # t(n) after `context` tokens
    context: int = 256  # c0
    growth: tuple[tuple[int, float], ...] = ()  # (n, g(n)), ascending n; () when not measured
    head: tuple[tuple[int, float], ...] = ()  # (n, f(n)), ascending n: the head's share; () none
    log: Passes | None = field(default=None, compare=False, repr=False)  # the passes it prices

    def __post_init__(self):
        if not self.sizes or self.sizes[0] != 1 or list(self.sizes) != sorted(set(self.sizes)):
            raise ValueError("cost model sizes must be ascending and start at 1")
        if len(self.seconds) != len(self.sizes) or not all(0 < t < math.inf for t in self.seconds):
            raise ValueError("cost model needs one positive time per size")
        if any(g < 0 or not math.isfinite(g) for _, g in self.growth):
            raise ValueError("cost model growth must be finite and >= 0")
        if any(not 0 <= f < 1 for _, f in self.head):
            raise ValueError("cost model head shares must be in [0, 1)")

    @cached_property
    def envelope(self) -> tuple[float, ...]:
        """cost() at each grid size: the cheapest measured size at or above it."""
        out = list(self.seconds)
        for i in range(len(out) - 2, -1, -1):
            out[i] = min(out[i], out[i + 1])
        return tuple(out)

    def cost(self, n: int, at: float | None = None) -> float:
        """Seconds for one forward pass over n tokens, after `at` tokens of context (None:
        the calibration's own context)."""
        base = self._base(n)
        if at is None or not self.growth or at <= self.context:
            return base
        return base + self.slope(n) * (at - self.context)

    def _base(self, n: int) -> float:
        for size, t in zip(self.sizes, self.envelope, strict=True):
            if size >= n:
                return t
        last_n, last_t = self.sizes[-1], self.seconds[-1]
        return last_t * n / last_n

    def cost_last(self, n: int, at: float | None = None) -> float:
        """Seconds for a pass over n tokens that reads only the last row's logits (one
        row: the same pass)."""
        return self.cost(n, at) * (1 - _between(self.head, n)) if n > 1 else self.cost(n, at)

    def slope(self, n: int) -> float:
        """g(n): seconds per context token for a pass over n tokens."""
        return _between(self.growth, n)

    def limit(self) -> float:
        """The decode speedup perfect drafts would give: max over n of n * t(1) / t(n)."""
        return max(n * self.seconds[0] / t for n, t in zip(self.sizes, self.seconds, strict=True))

    def to_json(self) -> str:
        growth, head = [list(x) for x in self.growth], [list(x) for x in self.head]
        return json.dumps(
            {"sizes": self.sizes, "seconds": self.seconds, "context": self.context, "growth": growth}
            | ({"head": head} if head else {})
        )

    @classmethod
    def from_json(cls, text: str) -> CostModel:
        """The inverse of to_json; ValueError for anything else (not JSON, another shape)."""
        data = json.loads(text)
        sizes, seconds = (data.get("sizes"), data.get("seconds")) if isinstance(data, dict) else (0, 0)
        if not (isinstance(sizes, list) and all(type(n) is int for n in sizes)):
            raise ValueError("not a cost model: sizes must be a list of integers")
        if not (isinstance(seconds, list) and all(type(t) in (int, float) for t in seconds)):
            raise ValueError("not a cost model: seconds must be a list of numbers")
        context, growth, head = data.get("context", 256), data.get("growth", []), data.get("head", [])
        if type(context) is not int or not _points(growth) or not _points(head):
            raise ValueError(
                "not a cost model: context must be an integer, growth and head lists of [n, number]"
            )
        return cls(
            tuple(sizes), tuple(seconds), context,
            tuple((n, float(g)) for n, g in growth), tuple((n, float(f)) for n, f in head),
        )

    def scaled(self, factor: float) -> CostModel:
        """Every time and growth times `factor` (a curve in units of t(1), made absolute)."""
        growth = tuple((n, g * factor) for n, g in self.growth)
        return replace(self, seconds=tuple(t * factor for t in self.seconds), growth=growth, log=None)

    @classmethod
    def table(cls, relative: dict[int, float], unit: float = 1.0) -> CostModel:
        """A cost model from {n: cost relative to one step} (tests, scripted backends)."""
        sizes = tuple(sorted(relative))
        return cls(sizes, tuple(relative[n] * unit for n in sizes))


def _between(points: tuple[tuple[int, float], ...], n: int) -> float:
    """The value at n of points [(n, v), ...] (ascending n): linear between them, flat
    beyond; 0 with none."""
    if not points:
        return 0.0
    if n <= points[0][0]:
        return points[0][1]
    for (n0, v0), (n1, v1) in zip(points, points[1:], strict=False):
        if n <= n1:
            return v0 + (v1 - v0) * (n - n0) / (n1 - n0)
    return points[-1][1]


def _points(data) -> bool:
    """Whether data is a JSON list of [int, number] pairs."""
    return isinstance(data, list) and all(
        isinstance(x, list) and len(x) == 2 and type(x[0]) is int and type(x[1]) in (int, float) for x in data
    )


SEEN = 3  # a size's real passes replace its price once there are this many
WIDE_SEEN = 8  # passes of this many rows or more rescale the base's wide prices (Passes.model)
KEEP = 16  # the latest passes kept per size


class Passes:
    """The forward passes runs made with a cost model, to price it better: per size n > 1
    (the rows a pass read), the latest KEEP eval times, each brought back to the base
    model's context c0 by its growth,
        t0 = t - g(n) * max(0, c - c0)
    The refined price of a size seen at least SEEN times is the median of its t0. t(1)
    prices the live speedup's plain decoding (decode.Tracker), so it learns only from
    passes that ran as plain decoding runs (`step`): one token, right after a one-token
    pass that rolled nothing back. A one-token pass between draft passes, right after a
    roll-back, is slower, and plain decoding's price must not take it. Until then t(1) is
    the base's, timed once by a first run, and a machine whose speed drifts by 10% within
    minutes would have the live line over- or under-state by as much. `key` is where the
    shell keeps them (calibration.py), opaque here."""

    def __init__(self, base: CostModel, seen: dict[int, list[float]] | None = None, key: str = ""):
        self.base, self.key = base, key
        self.seen = {n: list(ts)[-KEEP:] for n, ts in (seen or {}).items() if n >= 1}
        self.added: list[tuple[int, float]] = []  # (n, t0) of this process's passes

    def add(self, rows: int, at: int, seconds: float) -> None:
        """A pass over `rows` > 1 tokens after `at` cached ones (a one-token pass: `step`)."""
        if rows > 1:
            self._log(rows, at, seconds)

    def step(self, at: int, seconds: float) -> None:
        """A one-token pass that ran as plain decoding runs (after another, nothing rolled
        back): what t(1) learns from."""
        self._log(1, at, seconds)

    def _log(self, rows: int, at: int, seconds: float) -> None:
        if not 0 < seconds < math.inf:
            return
        t0 = seconds - self.base.slope(rows) * max(0, at - self.base.context)
        if t0 > 0:
            times = self.seen.setdefault(rows, [])
            times.append(t0)
            del times[:-KEEP]
            del self.added[: -KEEP * 64]  # bounded: a server logs every pass it makes
            self.added.append((rows, t0))

    def model(self) -> CostModel:
        """The base with the sizes seen SEEN times priced as they ran, and the wide sizes
        not seen that often priced by how the wide ones seen ran against their price:
        logging into self.

        A first run's base is a prior curve in units of t(1), measured on one build; a
        build with wider vector units (AVX-512 against AVX2: 1.33x on a Zen 4) reads a wide
        pass faster against one step, so the prior prices every wide size too high there
        (a 64-row pass 996 ms against 725 ms run). Passes this wide are compute-bound and
        move together: c, the median over the logged passes of n >= WIDE rows of their
        time over the base's price, rescales the base between one step and 64 rows,
        geometrically in log n:
            t'(n) = t(n) c^min(1, log n / log 64)        (n > 1; t(1) as it is)
        once SEEN such passes are logged; a size seen SEEN times takes its own median."""
        prices = dict(zip(self.base.sizes, self.base.seconds, strict=True))
        drift = [t / self.base.cost(n) for n, ts in self.seen.items() if n >= WIDE_SEEN for t in ts]
        if len(drift) >= SEEN:
            c = statistics.median(drift)
            prices = {n: t * c ** min(1.0, math.log(n) / math.log(64)) for n, t in prices.items()}
        prices.update({n: statistics.median(ts) for n, ts in self.seen.items() if len(ts) >= SEEN})
        sizes = tuple(sorted(prices))
        return replace(self.base, sizes=sizes, seconds=tuple(prices[n] for n in sizes), log=self)


def repriced(cost: CostModel | None) -> CostModel | None:
    """`cost` priced again by every pass its log holds, this process's too (Passes.model):
    a process that lives on (the resident model, pedit serve, a session) plans its next
    request by what the ones before it cost, as a new process reads them from the cache.
    Without a log, `cost` as it is."""
    return cost.log.model() if cost is not None and cost.log is not None else cost


GROWTH_SIZES = (1, 8, 32, 64)
HEAD_SIZES = (8, 32, 64)  # sizes timed again with the last row's logits alone (the head's share)
STEPS = 16  # consecutive one-token steps timed (their median)
STOPS = 6  # contexts beyond the calibration's where one-token steps are timed for g(1)


def measure(
    backend, sizes=GRID, *, repeats: int = 3, kv: int = 256, far: int = 1024, growth_sizes=GROWTH_SIZES,
    head_sizes=HEAD_SIZES,
) -> CostModel:
    """Time eval of n tokens after a kv-token context, median of `repeats`, for each n,
    and the head sizes again with the last row's logits alone; then, when the context
    window allows, the growth sizes again after `far` tokens (the `far - kv` tokens in
    between cost one prefill). Sizes that would not fit twice in the context window are
    left out."""
    sizes = tuple(n for n in sizes if 2 * n <= backend.n_ctx)
    widest = max(*sizes, 2 * repeats, STEPS)  # the one-token steps append up to STEPS tokens
    far = min(far, backend.n_ctx - widest)
    text = FILLER
    tokens = backend.tokenize(text)
    while len(tokens) < max(kv, far) + widest:
        text += FILLER
        tokens = backend.tokenize(text)
    kv = min(kv, backend.n_ctx - widest)
    backend.truncate(0)
    backend.eval(tokens[:kv])
    seconds = [_time(backend, tokens, kv, n, repeats if n <= WIDE else 1) for n in sizes]
    # the head's share: f(n) = 1 - t_last(n) / t(n), timed right after t(n)'s own sizes
    last = {n: _time(backend, tokens, kv, n, repeats, last=True) for n in head_sizes if n in sizes and n > 1}
    head = tuple((n, min(0.9, max(0.0, 1 - t / seconds[sizes.index(n)]))) for n, t in last.items())
    growth: tuple[tuple[int, float], ...] = ()
    measured = [n for n in growth_sizes if n in sizes]
    if far >= 2 * kv and 1 in measured:
        # g(1) from one-token steps at STOPS contexts on the way to `far`: the slope through
        # two medians alone moves by a third from run to run (1 ms of noise over 768 tokens)
        steps = {kv: seconds[sizes.index(1)]}
        at = kv
        for stop in [kv + (far - kv) * (i + 1) // STOPS for i in range(STOPS)]:
            backend.eval(tokens[at:stop])
            at = stop
            steps[at] = _time(backend, tokens, at, 1, repeats)
        extra = {1: _slope(steps)} | {
            n: (_time(backend, tokens, far, n, repeats) - seconds[sizes.index(n)]) / (far - kv)
            for n in measured
            if n > 1
        }
        growth = _line(extra)
    backend.truncate(0)
    return CostModel(tuple(sizes), tuple(seconds), kv, growth, head)


def _slope(points: dict[int, float]) -> float:
    """The least-squares slope of seconds over context through {context: seconds}:
    g = sum (c - mean c)(t - mean t) / sum (c - mean c)^2"""
    mc = statistics.fmean(points)
    mt = statistics.fmean(points.values())
    den = sum((c - mc) ** 2 for c in points)
    return sum((c - mc) * (t - mt) for c, t in points.items()) / den if den else 0.0


def _line(points: dict[int, float]) -> tuple[tuple[int, float], ...]:
    """g(n) = g(1) + g1 (n - 1): g(1), one step's growth as measured (_slope through
    the medians of consecutive steps at several contexts: what a plain step pays); g1, what
    each further token of a pass adds, by least squares through the wider passes (each
    alone is within the timing noise); neither below 0."""
    base = max(0.0, points[1])
    wider = [(n, g) for n, g in points.items() if n > 1]
    g1 = 0.0
    if wider:
        g1 = max(0.0, sum((n - 1) * (g - base) for n, g in wider) / sum((n - 1) ** 2 for n, _ in wider))
    return tuple((n, base + g1 * (n - 1)) for n in points)


def _time(backend, tokens, at: int, n: int, repeats: int, *, last: bool = False) -> float:
    """Median seconds of eval(n tokens) after `at` cached ones (the cache left at `at`),
    with every row's logits (`last`: the last row's alone). One token is timed as plain
    decoding runs: consecutive steps, each appending to the cache, none after a roll-back
    (a step right after one is slower)."""
    if n == 1:
        backend.eval(tokens[at : at + 1])  # warm-up
        backend.truncate(at)
        steps = max(STEPS, 2 * repeats)
        times = []
        for i in range(steps):
            t = time.perf_counter()
            backend.eval(tokens[at + i : at + i + 1])
            times.append(time.perf_counter() - t)
        backend.truncate(at)
        return statistics.median(times)
    times = []
    logits = 1 if last else n
    backend.eval(tokens[at : at + n], n_logits=logits)  # warm-up: a new batch shape allocates
    backend.truncate(at)
    for _ in range(repeats):
        t = time.perf_counter()
        backend.eval(tokens[at : at + n], n_logits=logits)
        times.append(time.perf_counter() - t)
        backend.truncate(at)
    return statistics.median(times)
