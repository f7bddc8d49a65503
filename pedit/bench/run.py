"""Run the configurations on the tasks, interleaved (A B C, A B C, ...) in one process, so
that slow drift of the machine hits every configuration alike.

Configurations: "plain" (--speculate off, the baseline), each of pedit's drafters alone
and all together ("pedit", --speculate auto), and the backend's peers (peers.py). Every
run records its own figures; report.py turns them into ratios against "plain".
"""

from __future__ import annotations

import contextlib
import json
import platform
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

from ..engine.costmodel import CostModel, measure
from ..engine.edit import EditOptions, edit_events
from ..engine.prompt import build_prompt, build_summary_prompt
from ..engine.sampling import Sampling
from ..machine import build
from ..machine.calibration import cpu_name
from ..machine.cpus import usable_cpus
from .corpus import Task
from .peers import PEERS, PeerResult, open_peer

PEDIT_CONFIGS = {
    "plain": {"speculate": "off"},
    "predicted": {"speculate": "auto", "drafters": ("predicted",)},
    "lookup": {"speculate": "auto", "drafters": ("lookup",)},
    "ngram": {"speculate": "auto", "drafters": ("ngram",)},
    "pedit": {"speculate": "auto"},
}
# --seeds: the exact-match check with sampling, pedit (all drafters) against plain decoding
SAMPLING = {"temperature": 0.7, "top_p": 0.95}
GREEDY = Sampling()  # every other run: the argmax


@dataclass(frozen=True)
class Figures:
    """What one run of one configuration produced and cost."""

    tokens: tuple[int, ...]  # the output
    forward_passes: int
    accepted: int  # draft tokens accepted
    rejected: int  # draft tokens verified and rejected
    prefill_seconds: float
    decode_seconds: float
    estimated_plain_seconds: float = 0.0  # pedit's own estimate of plain decoding's time (its live speedup)


@dataclass(frozen=True, kw_only=True)
class Run:
    task: str
    backend: str
    config: str
    repeat: int
    output_tokens: int
    forward_passes: int
    accepted: int
    rejected: int
    prefill_seconds: float
    decode_seconds: float
    same: bool  # output tokens identical to plain decoding's (first repeat)
    # what the run itself estimated plain decoding would take (its live speedup's baseline);
    # 0: not estimated (plain, the peers, runs saved before it was kept)
    estimated_plain_seconds: float = 0.0

    @property
    def total_seconds(self) -> float:
        return self.prefill_seconds + self.decode_seconds

    @property
    def tokens_per_second(self) -> float:
        return self.output_tokens / self.decode_seconds if self.decode_seconds else 0.0


@dataclass(frozen=True)
class Sampled:
    """One seed of the sampling check: plain decoding and pedit with the same seed."""

    task: str
    seed: int
    output_tokens: int  # plain decoding's
    same: bool  # pedit's output tokens identical to plain decoding's
    plain_decode_seconds: float
    pedit_decode_seconds: float


@dataclass
class BackendResult:
    backend: str
    model: str
    versions: dict[str, str]
    cost: CostModel
    runs: list[Run] = field(default_factory=list)
    sampled: list[Sampled] = field(default_factory=list)
    device: str = ""  # where the model ran (Capabilities.device); "" in runs saved before it was kept

    def to_dict(self) -> dict:
        return {
            "backend": self.backend, "model": self.model, "versions": self.versions,
            "cost": json.loads(self.cost.to_json()),
            "limit": self.cost.limit(), "runs": [asdict(r) for r in self.runs],
            "sampled": [asdict(s) for s in self.sampled], "device": self.device,
        }  # fmt: skip

    @classmethod
    def from_dict(cls, d: dict) -> BackendResult:
        cost = CostModel.from_json(json.dumps(d["cost"]))
        runs = [Run(**r) for r in d["runs"]]
        sampled = [Sampled(**s) for s in d.get("sampled", ())]
        return cls(
            backend=d["backend"], model=d["model"], versions=d["versions"], cost=cost, runs=runs,
            sampled=sampled, device=d.get("device", ""),
        )  # fmt: skip


def machine() -> dict:
    """The CPU, its cores, Python, and the llama.cpp build pedit runs (build.variant)."""
    return {"cpu": cpu_name(), "cores": usable_cpus(), "python": platform.python_version(),
            "llama_cpp": build.variant()}  # fmt: skip


def versions(backend_name: str) -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    from .. import __version__

    out = {"pedit": __version__}
    packages = {"llama.cpp": ("llama-cpp-python",), "transformers": ("transformers", "torch")}
    for name in packages.get(backend_name, ()):
        with contextlib.suppress(PackageNotFoundError):
            out[name] = version(name)
    return out


def configs(backend_name: str, with_peers: bool = True) -> list[str]:
    peers = [name for name, _ in PEERS.get(backend_name, ())] if with_peers else []
    return [*PEDIT_CONFIGS, *peers]


def run_backend(
    backend,
    model: str,
    tasks: list[Task],
    repeats: int,
    *,
    with_peers: bool = True,
    seeds: int = 0,
    cost: CostModel | None = None,
    progress: Callable[[str], None] = lambda _: None,
) -> BackendResult:
    """Every task x configuration x repeat on one loaded backend; then, for `seeds` seeds,
    plain decoding and pedit sampling with that seed (SAMPLING), outputs compared."""
    cost = cost or measure(backend)
    result = BackendResult(backend.name, model, versions(backend.name), cost, device=build.device(backend))
    peer = open_peer(backend) if with_peers else None
    peer_k = dict(PEERS.get(backend.name, ())) if peer else {}
    names = [c for c in configs(backend.name, with_peers) if c in PEDIT_CONFIGS or c in peer_k]
    try:
        for task in tasks:
            req = task.request(model)
            plain_tokens: tuple[int, ...] | None = None
            make = build_summary_prompt if task.kind == "summary" else build_prompt
            prompt = list(make(backend, req).tokens)  # what edit_events builds: the peers get the same
            # a summary has no file draft (edit_events drops "predicted"): that config would repeat another
            todo = [n for n in names if not (task.kind == "summary" and n == "predicted")]
            for rep in range(repeats):
                for name in todo:
                    progress(f"{backend.name}: {task.id} ({rep + 1}/{repeats}) {name}")
                    if name in PEDIT_CONFIGS:
                        got = _pedit_run(backend, task, req, name, cost)
                    else:
                        got = peer.run(prompt, len(plain_tokens or ()) or 1, peer_k[name])
                    if name == "plain" and plain_tokens is None:
                        plain_tokens = got.tokens
                    result.runs.append(_record(task.id, backend.name, name, rep, got, plain_tokens))
            for seed in range(seeds):
                progress(f"{backend.name}: {task.id} sampling, seed {seed}")
                sampling = Sampling(**SAMPLING, seed=seed)
                plain = _pedit_run(backend, task, req, "plain", cost, sampling)
                fast = _pedit_run(backend, task, req, "pedit", cost, sampling)
                drawn = Sampled(
                    task=task.id, seed=seed, output_tokens=len(plain.tokens),
                    same=fast.tokens == plain.tokens, plain_decode_seconds=plain.decode_seconds,
                    pedit_decode_seconds=fast.decode_seconds,
                )  # fmt: skip
                result.sampled.append(drawn)
    finally:
        if peer is not None:
            peer.close()
    return result


def _pedit_run(backend, task: Task, req, name: str, cost: CostModel, sampling: Sampling = GREEDY) -> Figures:
    """One run of configuration `name` (greedy unless `sampling` says otherwise)."""
    from ..events import drain

    config = PEDIT_CONFIGS[name]
    # every run reads its whole prompt, as the first run did: on a real backend another
    # split of the prompt into batches (the prompt held from the run before) can turn a
    # near-tie, and the configurations would not be compared on the same reading
    backend.truncate(0)
    events = edit_events(
        backend,
        req,
        EditOptions(max_tokens=task.max_tokens, cost=cost, kind=task.kind, sampling=sampling, **config),
    )
    finished = drain(events)
    s = finished.stats
    estimate = (s.plain_step_seconds or 0.0) * s.completion_tokens if name != "plain" else 0.0
    return Figures(
        tokens=finished.tokens, forward_passes=s.forward_passes, accepted=s.accepted_prediction_tokens,
        rejected=s.rejected_prediction_tokens, prefill_seconds=s.prefill_seconds,
        decode_seconds=s.decode_seconds, estimated_plain_seconds=estimate,
    )  # fmt: skip


def _record(
    task: str,
    backend: str,
    config: str,
    repeat: int,
    got: Figures | PeerResult,
    plain: tuple[int, ...] | None,
) -> Run:
    return Run(
        task=task, backend=backend, config=config, repeat=repeat, output_tokens=len(got.tokens),
        forward_passes=got.forward_passes, accepted=got.accepted, rejected=got.rejected,
        prefill_seconds=got.prefill_seconds, decode_seconds=got.decode_seconds, same=got.tokens == plain,
        estimated_plain_seconds=got.estimated_plain_seconds,
    )  # fmt: skip
