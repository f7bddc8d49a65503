"""What the user waits for: the default commands end to end, a new process per run.

    pedit bench --e2e [--tasks ...] [--repeats N]

Each run is `python -m pedit COMMAND FILE [INSTRUCTION] --stdout --stats-json F` in a new
process (start-up, model load, prompt, answer: everything until it exits), with the
user's caches as a user has them after a first command (a cache of the bench's own, empty
but for the model; one untimed run of each task first: the cost model and the prompt cache
are on disk, and the first of these runs, FIRST's, is a new user's first command). Configurations, interleaved
(every configuration of a task, then the next task; the whole round `repeats` times):

    pedit       the default command
    plain       the same with --speculate off (plain decoding)
    lookup      the peer: llama-cpp-python's prompt lookup (LlamaPromptLookupDecoding, k=10,
                greedy) doing the same job in a new process: the same prompts pedit builds
                (each piece of a file cut in runs), each answered to its closing fence
    reading     not a command: how fast the model reads the answer's tokens as a prompt, at
                the answer's place (each piece's prompt read, untimed; then its draft, the
                file and the closing fence, read as prompt is read, logits for the last
                position only, timed): the rate pedit's verification is held to

The time is split from the run's own figures (--stats-json): load (the model, measured by
the command), prompt (prefill, the prompt cache and the scoring of fix's swaps included)
and answer (decode); start-up is the rest (Python, imports, reading, writing). Prompt
tokens read = prompt tokens - the ones found in a cache.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .. import models
from . import servers
from .corpus import Task

CONFIGS = ("pedit", "plain", "lookup", "reading", "pedit serve", *servers.PEERS)
SERVED = CONFIGS[4:]  # a request to a warm server started for it (servers.py), timed alone
FLAGS = {"pedit": [], "plain": ["--speculate", "off"]}
# a fix in paragraphs, a Markdown fix, a code fix and a rename: what `make demo` and the
# issue's probes run
TASKS = "prose-walden,md-essay-demo,code-textwrap-fix,code-textwrap-param-rename"
# the copy-heavy edit whose answer is held to the model's reading rate: its prompt is read
# and nothing else (fix's prompt time includes the scoring of its swaps)
COPY = "code-textwrap-param-rename"
FIRST = "md-essay-demo"  # `pedit fix examples/essay.md`, make demo's: a new user's first command


@dataclass(kw_only=True)
class E2ERun:
    task: str
    config: str
    repeat: int
    seconds: float  # wall clock, process start to exit
    load_seconds: float
    prefill_seconds: float
    decode_seconds: float
    prompt_tokens: int
    cached_tokens: int
    completion_tokens: int
    file_tokens: int
    output: str
    exit_code: int
    reported: float | None = None  # the live line's speedup with the prompt (pedit's own figure)
    # where the answer's time goes (--stats-json, issue 38)
    tool_seconds: float = 0.0  # the tools' model reads (scoring, an intent), apart from the prompt
    backend_seconds: float = 0.0  # of decode_seconds, inside the model's eval
    reading_seconds: float | None = None  # the answer at this run's prompt-reading rate
    rows_read: int = 0
    accepted: int = 0
    rejected: int = 0
    forced: int = 0
    passes_by_size: dict = field(default_factory=dict)

    @property
    def startup_seconds(self) -> float:
        spent = self.load_seconds + self.prefill_seconds + self.tool_seconds + self.decode_seconds
        return max(0.0, self.seconds - spent)


def command(task: Task, path: Path, config: str, stats: Path) -> list[str]:
    if config in ("lookup", "reading"):
        return [sys.executable, "-m", "pedit.bench.e2e", config, task.id, str(path), str(stats)]
    args = [sys.executable, "-m", "pedit", task.command, str(path)]
    args += [task.instruction] if task.instruction else []
    return args + ["--stdout", "--stats-json", str(stats), *FLAGS[config]]


def configs(with_peers: bool, binary=servers.BINARY) -> list[str]:
    """The configurations a run measures: pedit's and, with the peers, llama-cpp-python's
    prompt lookup and the servers (llama-server's when `binary` is built)."""
    if not with_peers:
        return [c for c in CONFIGS if c not in ("lookup", *SERVED)]
    return [c for c in CONFIGS if binary.is_file() or c not in servers.PEERS]


def run_once(task: Task, config: str, repeat: int, env: dict[str, str] | None = None) -> E2ERun:
    if config in SERVED:
        return _served(task, config, repeat, env)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / Path(task.file).name  # a copy: nothing is written to the corpus
        path.write_text(task.text(), encoding="utf-8")
        stats = Path(tmp) / "stats.json"
        t0 = time.perf_counter()
        done = subprocess.run(command(task, path, config, stats), capture_output=True, text=True, env=env)
        seconds = time.perf_counter() - t0
        figures = json.loads(stats.read_text()) if stats.exists() else {}
    return E2ERun(
        task=task.id, config=config, repeat=repeat, seconds=seconds,
        load_seconds=figures.get("load_seconds", 0.0),
        prefill_seconds=figures.get("prefill_seconds", 0.0),
        decode_seconds=figures.get("decode_seconds", 0.0),
        prompt_tokens=figures.get("prompt_tokens", 0),
        cached_tokens=figures.get("cached_tokens", 0),
        completion_tokens=figures.get("completion_tokens", 0),
        file_tokens=figures.get("file_tokens", 0),
        output=done.stdout, exit_code=done.returncode, reported=figures.get("overall_speedup"),
        tool_seconds=figures.get("tool_seconds", 0.0), backend_seconds=figures.get("backend_seconds", 0.0),
        reading_seconds=figures.get("reading_seconds"), rows_read=figures.get("rows_read", 0),
        accepted=figures.get("accepted_prediction_tokens", 0),
        rejected=figures.get("rejected_prediction_tokens", 0),
        forced=figures.get("coalesced_tokens", 0), passes_by_size=figures.get("passes_by_size", {}),
    )  # fmt: skip


def _served(task: Task, config: str, repeat: int, env: dict[str, str] | None) -> E2ERun:
    """The task's chat request on a warm server started for it: the request's seconds alone."""
    gguf = models.prepare(models.DEFAULT_MODEL, "llama.cpp").path
    got = servers.measure(config, servers.request_for(task), servers.BINARY, gguf, env)
    return E2ERun(
        task=task.id, config=config, repeat=repeat, seconds=got["seconds"], load_seconds=0.0,
        prefill_seconds=0.0, decode_seconds=got["seconds"], prompt_tokens=0, cached_tokens=0,
        completion_tokens=got["tokens"], file_tokens=0, output=got["text"], exit_code=0,
    )  # fmt: skip


def run_all(tasks: list[Task], configs: list[str], repeats: int, progress=lambda s: None) -> list[E2ERun]:
    """The runs, in a user cache of their own that starts empty but for the models (as a
    new user's, the model already in place): the first warm-up (FIRST's, when it is one of
    the tasks) is a new user's first command, kept with repeat -1 as every warm-up."""
    with tempfile.TemporaryDirectory(prefix="pedit-e2e-cache-") as cache:
        (Path(cache) / "pedit").mkdir()
        (Path(cache) / "pedit" / "models").symlink_to(models.models_dir(), target_is_directory=True)
        env = os.environ | {"XDG_CACHE_HOME": cache}
        runs = []
        for task in sorted(tasks, key=lambda t: t.id != FIRST):  # untimed in the medians
            progress(f"warming up: {task.id}" + (" (a new user's first command)" if not runs else ""))
            runs.append(run_once(task, "pedit", -1, env))
        for r in range(repeats):
            for task in tasks:
                for config in configs:
                    progress(f"round {r + 1}/{repeats}: {task.id}, {config}")
                    runs.append(run_once(task, config, r, env))
    return runs


def first_command(data: dict) -> tuple[str, float, float] | None:
    """(task, seconds of a new user's first command, median of its later runs): the
    first warm-up run and the same task's timed pedit runs; None for runs before it."""
    warm = [x for x in data["runs"] if x["repeat"] == -1]
    p = medians(data["runs"], warm[0]["task"], "pedit") if warm else None
    return (warm[0]["task"], warm[0]["seconds"], p["seconds"]) if p else None


def medians(runs: list[dict], task: str, config: str) -> dict | None:
    mine = [x for x in runs if x["task"] == task and x["config"] == config and x["repeat"] >= 0]
    if not mine:
        return None
    keys = ("seconds", "load_seconds", "prefill_seconds", "decode_seconds")
    out = {k: statistics.median(x[k] for x in mine) for k in keys}
    kept = all("tool_seconds" in x for x in mine)  # runs from before it: in their prompt's time
    out["tool_seconds"] = statistics.median(x["tool_seconds"] for x in mine) if kept else None
    # what plain decoding spends too: the prompt, the tools' reads, the answer
    out["spent"] = statistics.median(x["prefill_seconds"] + x.get("tool_seconds", 0.0) + x["decode_seconds"]
                                     for x in mine)  # fmt: skip
    reported = [x["reported"] for x in mine if x.get("reported")]
    out["reported"] = statistics.median(reported) if reported else None
    out["answer_rate"] = _rate(mine, lambda x: x["completion_tokens"], "decode_seconds")
    out["tokens"] = statistics.median(x["completion_tokens"] for x in mine)
    out["startup_seconds"] = max(0.0, out["seconds"] - out["load_seconds"] - out["prefill_seconds"]
                                 - (out["tool_seconds"] or 0.0) - out["decode_seconds"])  # fmt: skip
    out["middle"] = sorted(mine, key=lambda x: x["decode_seconds"])[len(mine) // 2]  # its answer's figures
    read = [x["prompt_tokens"] - x["cached_tokens"] for x in mine]
    out["read"] = statistics.median(read)
    out["file_tokens"] = mine[0]["file_tokens"]
    out["failed"] = sum(x["exit_code"] != 0 for x in mine)
    out["outputs"] = {x["output"] for x in mine}
    return out


def _rate(runs: list[dict], tokens, seconds: str) -> float | None:
    """The median over runs of tokens(run) / run[seconds] (None when no run spent any)."""
    rates = [tokens(x) / x[seconds] for x in runs if x[seconds] > 0]
    return statistics.median(rates) if rates else None


def _ratios(data: dict, other: str) -> dict[str, float]:
    """Per task: the `other` configuration's median seconds over pedit's."""
    out = {}
    for t in (t["id"] for t in data["tasks"]):
        p, o = medians(data["runs"], t, "pedit"), medians(data["runs"], t, other)
        if p and o:
            out[t] = o["seconds"] / p["seconds"]
    return out


def best_peer(data: dict, task: str) -> tuple[float, str] | None:
    """llama-server's fastest configuration on the task: (median seconds, configuration)."""
    got = [(m["seconds"], c) for c in servers.PEERS if (m := medians(data["runs"], task, c))]
    return min(got) if got else None


def _peer_ratios(data: dict, config: str) -> dict[str, float]:
    """Per task: the best llama-server configuration's seconds over `config`'s."""
    out = {}
    for t in (t["id"] for t in data["tasks"]):
        mine, best = medians(data["runs"], t, config), best_peer(data, t)
        if mine and best:
            out[t] = best[0] / mine["seconds"]
    return out


def _peer_goals(data: dict) -> list[tuple[str, str, bool]]:
    out = []
    for config, goal, bound in (
        ("pedit", "the CLI end to end (a new process, load included) >= 1.4x the best llama-server "
         "configuration (the request alone; median over tasks)", 1.4),
        ("pedit serve", "pedit serve + prediction >= 1.3x the best llama-server configuration "
         "(median over tasks)", 1.3),
    ):  # fmt: skip
        if r := _peer_ratios(data, config):
            m, lo, hi = statistics.median(r.values()), min(r.values()), max(r.values())
            out.append((goal, f"{m:.2f}x (from {lo:.2f}x to {hi:.2f}x)", m >= bound))
    return out


def goals(data: dict) -> list[tuple[str, str, bool]]:
    out = _peer_goals(data)
    for other, goal, bound in (
        ("plain", "default commands end to end >= 1.6x --speculate off (median over tasks)", 1.6),
        ("lookup", "end to end >= 1.4x llama-cpp-python's prompt lookup (median over tasks)", 1.4),
    ):
        if r := _ratios(data, other):
            m = statistics.median(r.values())
            out.append(
                (goal, f"{m:.2f}x (from {min(r.values()):.2f}x to {max(r.values()):.2f}x)", m >= bound)
            )
    shares = []
    for t in (t["id"] for t in data["tasks"]):
        p = medians(data["runs"], t, "pedit")
        if p and p["file_tokens"]:
            shares.append((p["read"] / p["file_tokens"], t))
    if shares:
        worst, median = max(shares), statistics.median(s for s, _ in shares)
        measured = f"worst {worst[0]:.2f}x ({worst[1]}), median {median:.2f}x"
        out.append(("prompt tokens read per command <= 1.2x the file's tokens", measured, worst[0] <= 1.2))
    p, r = medians(data["runs"], COPY, "pedit"), medians(data["runs"], COPY, "reading")
    if p and r and p["answer_rate"] and r["answer_rate"]:
        share = p["answer_rate"] / r["answer_rate"]
        measured = f"{p['answer_rate']:.0f} / {r['answer_rate']:.0f} tok/s = {share:.0%}"
        out.append((f"the answer of a copy-heavy edit ({COPY}) >= 75% of the prompt-reading rate", measured,
                    share >= 0.75))  # fmt: skip
    if got := first_command(data):
        t, first, later = got
        out.append((f"a new user's first command ({t}, empty cache) within 1.5x of a later one",
                    f"{first:.1f} / {later:.1f} s = {first / later:.2f}x", first <= 1.5 * later))  # fmt: skip
    errors = [(e, t) for t in (t["id"] for t in data["tasks"]) if (e := _live_error(data, t)) is not None]
    if errors:
        worst = max(errors, key=lambda x: abs(x[0]))
        out.append(("the live line's speedup with the prompt within 10% of the measured one",
                    f"worst {worst[0]:+.0%} ({worst[1]})", abs(worst[0]) <= 0.10))  # fmt: skip
    return out


def bound(data: dict, task: str) -> float | None:
    """What perfect drafts could give this task end to end: plain's seconds over pedit's
    with its answer read at the model's reading rate (the `reading` runs), the start-up,
    the load and the prompt as they were."""
    p, o, r = (medians(data["runs"], task, c) for c in ("pedit", "plain", "reading"))
    if not (p and o and r and r["answer_rate"]):
        return None
    return o["seconds"] / (p["seconds"] - p["decode_seconds"] + p["tokens"] / r["answer_rate"])


def _bounds(data: dict) -> str:
    got = {t["id"]: b for t in data["tasks"] if (b := bound(data, t["id"])) is not None}
    if not got:
        return ""
    each = ", ".join(f"{t} {b:.2f}x" for t, b in got.items())
    return (f"What bounds the first goal here: were every answer verified as fast as the model "
            f"reads (a perfect draft, at the `reading` runs' rate), the prompt, the load and the "
            f"start-up as they are, pedit would be {statistics.median(got.values()):.2f}x as fast as "
            f"plain decoding (median; {each}).")  # fmt: skip


def _live_error(data: dict, task: str) -> float | None:
    """How far the live line's "with the prompt" figure is from the measured one: plain's
    prompt + answer seconds over pedit's (medians), as a relative error."""
    p, o = medians(data["runs"], task, "pedit"), medians(data["runs"], task, "plain")
    if not (p and o and p["reported"] and p["spent"]):
        return None
    return p["reported"] / (o["spent"] / p["spent"]) - 1


def merge(datas: list[dict]) -> dict:
    """Several --json runs as one: a later run's (task, configuration) replaces an earlier
    one's; runs from different machines are not compared."""
    cpus = {d["machine"]["cpu"] for d in datas}
    if len(cpus) > 1:
        raise ValueError(f"runs from different machines ({', '.join(sorted(cpus))}) cannot be merged")
    runs: list[dict] = []
    for d in datas:
        pairs = {(r["task"], r["config"]) for r in d["runs"]}
        runs = [r for r in runs if (r["task"], r["config"]) not in pairs] + d["runs"]
    return {**datas[0], "runs": runs,
            "tasks": list({t["id"]: t for d in datas for t in d["tasks"]}.values()),
            "command": " and ".join(dict.fromkeys(d["command"] for d in datas)),
            "started": ", ".join(dict.fromkeys(d["started"] for d in datas))}  # fmt: skip


def _row(data: dict, t: str) -> str | None:
    p, o, q, r = (medians(data["runs"], t, c) for c in ("pedit", "plain", "lookup", "reading"))
    if not p:
        return None

    def cell(x):
        return "–" if not x else f"{x['seconds']:.1f}" + (f" ({x['failed']} failed)" if x["failed"] else "")

    def vs(x):
        return f"{x['seconds'] / p['seconds']:.2f}x" if x else "–"

    split = " / ".join(
        "–" if p[k] is None else f"{p[k]:.1f}"
        for k in ("startup_seconds", "load_seconds", "prefill_seconds", "tool_seconds", "decode_seconds")
    )
    n = p["file_tokens"]
    share = f"{p['read']:.0f} / {n} = {p['read'] / n:.2f}x" if n else "–"
    live = "–"
    if o and p["reported"] and p["spent"]:
        live = f"{p['reported']:.2f}x / {o['spent'] / p['spent']:.2f}x"
    rate = "–"
    if r and p["answer_rate"] and r["answer_rate"]:
        a, b = p["answer_rate"], r["answer_rate"]
        rate = f"{a:.0f} / {b:.0f} = {a / b:.0%}"
    cells = [cell(p), cell(o), cell(q), vs(o), vs(q), split, share, live, rate]
    return f"| {t} | " + " | ".join(cells) + " |"


def _servers(data: dict, ids: list[str]) -> list[str]:
    """pedit (the CLI, and pedit serve) against llama-server, per task; empty without them."""
    rows = []
    for t in ids:
        best, p = best_peer(data, t), medians(data["runs"], t, "pedit")
        if not best:
            continue
        served = {c: medians(data["runs"], t, c) for c in SERVED}
        cells = ["–" if not x else f"{x['seconds']:.1f}" for x in (p, *served.values())]
        serve = served["pedit serve"]
        vs = [f"{best[0] / x['seconds']:.2f}x" if x else "–" for x in (p, serve)]
        rows.append(f"| {t} | " + " | ".join([*cells, best[1], *vs]) + " |")
    if not rows:
        return []
    return [
        "## Against llama.cpp's own server",
        "",
        "The peer a user would run instead: llama.cpp's `llama-server` (scripts/build_llama_server.sh "
        "builds it from the sources in the pinned llama-cpp-python), plain and with its n-gram "
        "speculations, the same GGUF. Each server run times one request, the chat request pedit's "
        "remote backend sends for the task, on a warm server started for it (the first request of its "
        "prompt; `pedit/bench/servers.py`); pedit serve gets the file as `prediction`. The CLI's "
        "seconds are the whole command's, a new process with the model's load; the servers' are the "
        "request's alone.",
        "",
        "| task | pedit (CLI) s | " + " | ".join(f"{c} s" for c in SERVED) + " | best llama-server "
        "| best / CLI | best / pedit serve |",
        "|---|" + "---:|" * (1 + len(SERVED)) + "---|---:|---:|",
        *rows,
        "",
    ]


def _answers(data: dict, ids: list[str]) -> list[str]:
    """Where pedit's answer goes, per task (its run with the median answer time): in the
    model and in pedit, against the reading-rate ideal; the rows its passes read; the
    passes by size. Empty for runs from before these figures were kept."""
    rows = []
    for t in ids:
        p = medians(data["runs"], t, "pedit")
        x = p["middle"] if p else None
        if not x or not x.get("rows_read"):
            continue
        own = x["rows_read"] - x["accepted"] - x["rejected"] - x["forced"]
        sizes = sorted(((int(n), c) for n, c in x["passes_by_size"].items()), key=lambda nc: (-nc[1], nc[0]))
        passes = ", ".join(f"{n}×{c}" for n, c in sizes[:5]) + (", …" if len(sizes) > 5 else "")
        ideal = f"{x['reading_seconds']:.1f}" if x.get("reading_seconds") else "–"
        inside, outside = x["backend_seconds"], x["decode_seconds"] - x["backend_seconds"]
        read = f"{x['rows_read']}: {x['accepted']} / {x['rejected']} / {x['forced']} / {own}"
        rows.append(
            f"| {t} | {x['decode_seconds']:.1f} | {inside:.1f} / {outside:.1f} | {ideal} | {read} | "
            f"{sum(c for _, c in sizes)}: {passes} | {x.get('tool_seconds', 0.0):.1f} |"
        )
    if not rows:
        return []
    return [
        "## Where pedit's answer goes",
        "",
        "Per task, pedit's run with the median answer time (its --stats-json figures). In the model: seconds "
        "inside the backend's forward passes; in pedit: drafting, planning, drawing tokens. Reading-rate "
        "ideal: the answer's tokens at the rate this run read its prompt. Rows read: every row of the "
        "answer's passes, as accepted drafts / rejected drafts / forced by a grammar / the model's own "
        "token. Passes: how many, and the commonest sizes (rows × passes). Tools: the tools' work before "
        "the run (a fix's scoring of confusable words: its model reads and the draft it makes; the model "
        "reading a vague instruction's intent), apart from the prompt.",
        "",
        "| task | answer s | in the model / in pedit s | reading-rate ideal s | rows read: accepted / "
        "rejected / forced / own | passes: commonest sizes | tools s |",
        "|---|---:|---:|---:|---|---|---:|",
        *rows,
        "",
    ]


def _caches(data: dict) -> str:
    if first_command(data) is None:  # runs from before the bench had a cache of its own
        return ("each task run once untimed first (the cost model and the prompt cache on disk, as "
                "after a user's first command).")  # fmt: skip
    return ("the runs have a user cache of their own, empty but for the model, and each task runs once "
            "untimed first (the cost model and the prompt cache on disk, as after a user's first command; "
            f"the first of these is a new user's first command, {FIRST}'s when it is one of the tasks, set "
            "against its later runs in the goals).")  # fmt: skip


def markdown(data: dict, chart: str | None = None) -> str:
    m, ids = data["machine"], [t["id"] for t in data["tasks"]]
    same = 0
    for t in ids:
        p, o = medians(data["runs"], t, "pedit"), medians(data["runs"], t, "plain")
        same += bool(p and o and p["outputs"] == o["outputs"])
    lines = [
        "# End to end: the default commands, a new process per run",
        "",
        f"<!-- generated by `{data.get('rendered', 'pedit bench --e2e')}`; do not edit by hand -->",
        "",
        f"Measured on {m['cpu']}, {m['cores']} cores, Python {m['python']}, started {data['started']}, "
        f"with `{data['command']}`; model {data['model']} (the default), {data['repeats']} rounds, "
        "configurations interleaved, medians; " + _caches(data) + " How it is run: "
        "`pedit/bench/e2e.py`.",
        "",
        "| task | pedit s | plain s | lookup s | plain / pedit | lookup / pedit "
        "| pedit: start-up / load / prompt / tools / answer s | prompt tokens read / file tokens "
        "| with the prompt: live line / measured | answer / reading tok/s |",
        "|---|---:|---:|---:|---:|---:|---|---:|---:|---:|",
        *filter(None, (_row(data, t) for t in ids)),
        "",
        f"pedit wrote the same output as plain decoding on {same} of {len(ids)} tasks "
        "(every round's output the same). The last column: the speedup with the prompt the live "
        "line reported (`overall_speedup` in --stats-json), and plain's prompt + answer seconds "
        "over pedit's. Answer / reading: pedit's answer tokens per second of its answer, against "
        "the rate at which the model reads the same file's tokens as a prompt at the same place "
        "(the `reading` runs: logits for the last position only, in batches of 512).",
        "",
        *_servers(data, ids),
        *_answers(data, ids),
        "## Goals",
        "",
        "| goal | measured | met |",
        "|---|---:|:---:|",
        *(f"| {g} | {v} | {'yes' if ok else 'no'} |" for g, v, ok in goals(data)),
        *(["", b] if (b := _bounds(data)) else []),
    ]
    return "\n".join(lines) + "\n"


def chart(data: dict, path: Path) -> bool:
    return False  # the table says it all


def to_dict(runs: list[E2ERun]) -> list[dict]:
    return [asdict(r) for r in runs]


def _peer(task_id: str, path: Path, stats: Path) -> None:
    """The peer's process: llama-cpp-python's prompt lookup on the default model, answering
    the prompts pedit builds for this task's file (each piece of it), to the closing fence."""
    t_start = time.perf_counter()
    from llama_cpp import Llama
    from llama_cpp.llama_speculative import LlamaPromptLookupDecoding

    backend, prompts = _prompts(task_id, path)
    model_path, threads, eos = str(backend.path), backend.n_threads, backend.eos_ids
    backend.close()
    t0 = time.perf_counter()
    llm = Llama(model_path=model_path, n_ctx=4096, n_threads=threads, n_batch=512, logits_all=True,
                verbose=False, draft_model=LlamaPromptLookupDecoding(num_pred_tokens=10))  # fmt: skip
    load = time.perf_counter() - t0
    prefill = decode = 0.0
    n_prompt = n_out = 0
    outs = []
    for prompt in prompts:
        llm.reset()
        out, t1, first = [], time.perf_counter(), None
        for token in llm.generate(prompt.tokens, temp=0.0, top_k=1, top_p=1.0, min_p=0.0, repeat_penalty=1.0):
            if first is None:
                first = time.perf_counter()
            if token in eos or len(out) > 2 * len(prompt.draft) + 64:
                break
            out.append(token)
            if llm.detokenize(out[-8:]).decode("utf-8", "replace").rstrip().endswith(prompt.fence):
                break
        end = time.perf_counter()
        prefill += (first or end) - t1
        decode += end - (first or end)
        n_prompt, n_out = n_prompt + len(prompt.tokens), n_out + len(out)
        outs.append(llm.detokenize(out).decode("utf-8", "replace"))
    stats.write_text(json.dumps({
        "load_seconds": load, "prefill_seconds": prefill, "decode_seconds": decode, "prompt_tokens": n_prompt,
        "cached_tokens": 0, "completion_tokens": n_out, "setup_seconds": t0 - t_start,
    }))  # fmt: skip
    sys.stdout.write("".join(outs))


def _prompts(task_id: str, path: Path):
    """The default model on pedit's backend, and the prompts pedit builds for this task's
    file (a piece of it each, as `fix` cuts it)."""
    from .. import models
    from ..app.jobs import EngineOptions, Job
    from ..app.templates import BUILTIN
    from ..engine.prompt import build_prompt
    from .corpus import load_tasks

    task = next(t for t in load_tasks() if t.id == task_id)
    backend = models.load(models.DEFAULT_MODEL)
    job = Job(backend, BUILTIN[task.command], task.instruction or None, EngineOptions(spelling=False))
    text = path.read_text(encoding="utf-8")
    pieces = job.pieces(text, path.name, "rewrite")
    asks = [job.request(p, path.name, f"part {i} of {len(pieces)}" if len(pieces) > 1 else "")
            for i, p in enumerate(pieces, 1)]  # fmt: skip
    return backend, [build_prompt(backend, r) for r in asks]


def _reading(task_id: str, path: Path, stats: Path) -> None:
    """How fast the model reads each piece's answer-to-be (its draft: the file and the
    closing fence) as a prompt, after that piece's prompt: the rate verification is held to."""
    t0 = time.perf_counter()
    backend, prompts = _prompts(task_id, path)
    load = time.perf_counter() - t0
    seconds, n = 0.0, 0
    for prompt in prompts:
        backend.truncate(0)
        backend.eval(prompt.tokens)  # untimed: the prompt
        t1 = time.perf_counter()
        backend.eval(prompt.draft)  # timed: the answer's tokens, read as a prompt is
        seconds, n = seconds + time.perf_counter() - t1, n + len(prompt.draft)
    stats.write_text(json.dumps({"load_seconds": load, "decode_seconds": seconds, "completion_tokens": n}))


if __name__ == "__main__":
    {"lookup": _peer, "reading": _reading}[sys.argv[1]](sys.argv[2], Path(sys.argv[3]), Path(sys.argv[4]))
