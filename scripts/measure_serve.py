"""Measure `pedit serve` through the real `openai` client and write docs/serve-bench.md.

    python scripts/measure_serve.py [-m qwen2.5-coder-0.5b] [--tasks N] [--out docs/serve-bench.md]

Three measurements, on the corpus's copy-heavy tasks (pedit/bench/corpus/tasks.toml),
the prompt pedit itself sends for each (the remote backend's messages and primed fence),
temperature 0, non-streamed, one server process at a time on this machine:

1. pedit serve with and without `prediction`: end-to-end time (the client's), the speedup,
   accepted / rejected prediction tokens; and what the HTTP layer costs: the client's time
   minus the engine's own (prefill + decode, which the server reports in its `pedit`
   extension field), as a share of the client's time.
2. Load: N concurrent clients (1, 2, 4, 8), each sending the same requests; requests per
   minute, p50 / p95 latency, failed requests (the queue bound is 16: none may fail).
3. Plain decoding through `pedit serve --speculate off`, and the peer server:
   llama-cpp-python's `python -m llama_cpp.server` on the same GGUF,
   which drops `prediction` and does not continue a primed answer (asked plainly, as
   pedit asks it): pedit serve with `prediction` against it, end to end.

Every measured request starts cold: before it, a one-token request with another prompt
takes the server's cache (both servers keep the last prompt's KV entries and reuse a shared
prefix, which would hand a repeated request its prefill for free). Both servers run the
model on all usable cores (llama-cpp-python's server defaults to half of them). Each
server is started here as a subprocess on a free loopback port and stopped after its
part. Nothing is typed by hand: the tables are this script's output.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path

import openai

from pedit.app.templates import templates
from pedit.bench.cells import COPY_HEAVY  # prose, markdown, code
from pedit.bench.corpus import CORPUS, load_tasks
from pedit.bench.servers import client_for, flush, free_port, start, stop
from pedit.engine.remote import remote_prompt
from pedit.machine.calibration import cpu_name
from pedit.machine.cpus import usable_cpus
from pedit.models.progress import quietly
from pedit.request import EditRequest


def requests_for(n: int) -> list[dict]:
    """n copy-heavy tasks, a category at a time (prose, markdown, code, then again), as
    pedit's remote backend asks them."""
    pool = [t for t in load_tasks() if t.category in COPY_HEAVY]
    ranked = sorted(pool, key=lambda t: ([x.id for x in pool if x.category == t.category].index(t.id),
                                         COPY_HEAVY.index(t.category)))  # fmt: skip
    chosen = ranked[:n]
    out = []
    for task in chosen:
        t = templates({})[task.command]
        text = (CORPUS / task.file).read_text()
        req = EditRequest(text, t.render(task.instruction or None), task.file, t.system)
        msgs, _, prime, prediction = remote_prompt(req, "rewrite", True)
        plain_msgs, _, _, plain_prediction = remote_prompt(req, "rewrite", False)
        out.append({"id": task.id, "messages": msgs, "prime": prime, "prediction": prediction,
                    "plain_messages": plain_msgs, "plain_prediction": plain_prediction,
                    "max_tokens": 2 * len(text) // 3 + 256})  # fmt: skip
    return out


def ask(client: openai.OpenAI, model: str, r: dict, *, prediction: bool, primed: bool) -> dict:
    """One non-streamed request; the client's seconds and the server's figures."""
    kwargs: dict = {"model": model, "temperature": 0, "max_tokens": r["max_tokens"]}
    if primed:
        kwargs["messages"] = [*r["messages"], {"role": "assistant", "content": r["prime"]}]
        kwargs["extra_body"] = {"continue_final_message": True, "add_generation_prompt": False}
        content = r["prediction"]
    else:
        kwargs["messages"], content = r["plain_messages"], r["plain_prediction"]
    if prediction:
        kwargs["prediction"] = {"type": "content", "content": content}
    t0 = time.perf_counter()
    reply = client.chat.completions.create(**kwargs)
    seconds = time.perf_counter() - t0
    u = reply.usage
    d = u.completion_tokens_details
    extra = (reply.model_extra or {}).get("pedit") or {}
    return {
        "seconds": seconds, "tokens": u.completion_tokens,
        "accepted": (d.accepted_prediction_tokens or 0) if d else 0,
        "rejected": (d.rejected_prediction_tokens or 0) if d else 0,
        "engine_seconds": (extra.get("prefill_seconds") or 0) + (extra.get("decode_seconds") or 0),
        "decode_seconds": extra.get("decode_seconds"),
        "text": reply.choices[0].message.content,
    }  # fmt: skip


def cold(client: openai.OpenAI, model: str, r: dict, **kw) -> dict:
    flush(client, model)
    return ask(client, model, r, **kw)


def prediction_part(port: int, model: str, reqs: list[dict], repeats: int) -> list[dict]:
    client = client_for(port)
    ask(client, model, reqs[0], prediction=True, primed=True)  # warm-up: the cost model, the caches
    rows = []
    for r in reqs:
        runs = {k: [] for k in ("with", "without")}
        for _ in range(repeats):  # interleaved, so that drift in the machine's pace hits both
            runs["with"].append(cold(client, model, r, prediction=True, primed=True))
            runs["without"].append(cold(client, model, r, prediction=False, primed=True))
        rows.append({"id": r["id"], **{k: median_run(v) for k, v in runs.items()}})
    return rows


def median_run(runs: list[dict]) -> dict:
    best = sorted(runs, key=lambda x: x["seconds"])[len(runs) // 2]
    return {k: v for k, v in best.items() if k != "text"}


def load_part(
    port: int, model: str, reqs: list[dict], clients: tuple[int, ...], per_client: int
) -> list[dict]:
    """Client i sends task i (mod the tasks), per_client times: consecutive requests on the
    server are mostly other files, sharing only the system prompt."""
    rows = []
    for n in clients:

        def one(i):
            client = client_for(port)
            out = []
            for _ in range(per_client):
                t0 = time.perf_counter()
                try:
                    ask(client, model, reqs[i % len(reqs)], prediction=True, primed=True)
                    out.append(time.perf_counter() - t0)
                except openai.APIError:
                    out.append(None)
            return out

        t0 = time.perf_counter()
        with ThreadPoolExecutor(n) as pool:
            lat = [x for batch in pool.map(one, range(n)) for x in batch]
        wall = time.perf_counter() - t0
        ok = sorted(x for x in lat if x is not None)
        rows.append({
            "clients": n, "requests": len(lat), "failed": len(lat) - len(ok), "wall": wall,
            "per_minute": 60 * len(ok) / wall, "p50": percentile(ok, 0.5), "p95": percentile(ok, 0.95),
        })  # fmt: skip
    return rows


def percentile(xs: list[float], q: float) -> float:
    return xs[min(len(xs) - 1, round(q * (len(xs) - 1)))] if xs else float("nan")


def peer_part(port: int, reqs: list[dict], repeats: int) -> list[dict]:
    client = client_for(port)
    ask(client, "qwen", reqs[0], prediction=True, primed=False)
    return [{"id": r["id"], "peer": median_run([cold(client, "qwen", r, prediction=True, primed=False)
                                                for _ in range(repeats)])} for r in reqs]  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-m", "--model", default="qwen2.5-coder-0.5b")
    ap.add_argument("--tasks", type=int, default=4, help="copy-heavy tasks (the corpus's first N)")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--clients", default="1,2,4,8")
    ap.add_argument("--per-client", type=int, default=2)
    ap.add_argument("--json", type=Path, default=Path("docs/serve-bench.json"))
    ap.add_argument("--out", type=Path, default=Path("docs/serve-bench.md"))
    ap.add_argument("--from", dest="source", type=Path, help="render the markdown from this JSON only")
    a = ap.parse_args()
    if a.source:
        a.out.write_text(render(json.loads(a.source.read_text())))
        return
    from pedit.models import prepare

    reqs = requests_for(a.tasks)
    pedit = str(Path(sys.executable).with_name("pedit"))
    port = free_port()
    server = start([pedit, "serve", "-m", a.model, "--port", str(port)], port)
    try:
        predicted = prediction_part(port, a.model, reqs, a.repeats)
        clients = tuple(int(x) for x in a.clients.split(","))
        load = load_part(port, a.model, reqs, clients, a.per_client)
    finally:
        stop(server)
    port = free_port()  # plain decoding through the same server: what a server without drafts does
    server = start([pedit, "serve", "-m", a.model, "--port", str(port), "--speculate", "off"], port)
    try:
        client = client_for(port)
        plain = [{"id": r["id"], "plain": median_run([cold(client, a.model, r, prediction=False, primed=True)
                                                      for _ in range(a.repeats)])} for r in reqs]  # fmt: skip
    finally:
        stop(server)
    gguf = quietly(prepare(a.model, "llama.cpp")).path
    port = free_port()
    peer = start([sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--model_alias", "qwen",
                  "--port", str(port), "--n_ctx", "8192", "--n_threads", str(usable_cpus()),
                  "--n_threads_batch", str(usable_cpus()), "--verbose", "false"], port)  # fmt: skip
    try:
        peers = peer_part(port, reqs, a.repeats)
    finally:
        stop(peer)
    data = {
        "command": " ".join(["python", "scripts/measure_serve.py", *sys.argv[1:]]),
        "when": datetime.now().strftime("%Y-%m-%d %H:%M"),
        "machine": f"{cpu_name()}, {usable_cpus()} cores, CPU only, Python {platform.python_version()}",
        "model": a.model, "repeats": a.repeats, "prediction": predicted, "load": load, "peer": peers,
        "plain": plain,
    }  # fmt: skip
    a.json.write_text(json.dumps(data, indent=2) + "\n")
    a.out.write_text(render(data))


def render(d: dict) -> str:
    pred = {r["id"]: r for r in d["prediction"]}
    out = [
        "# `pedit serve`: measured",
        "",
        f"Generated by `{d['command']}` ({d['when']}; `--from {{json}}` re-renders). Machine: "
        f"{d['machine']}. Model: {d['model']}, on llama.cpp. Medians of {d['repeats']} runs, "
        "temperature 0, non-streamed, through the real `openai` client on loopback; each task is "
        "the prompt pedit's remote backend sends (its messages and primed fence line).",
        "",
        "## Goals",
        "",
    ]
    overhead = [1 - r["with"]["engine_seconds"] / r["with"]["seconds"] for r in d["prediction"]]
    vs_peer = [r["peer"]["seconds"] / pred[r["id"]]["with"]["seconds"] for r in d["peer"]]
    failed = sum(r["failed"] for r in d["load"])
    out += [
        "| goal | measured | met |",
        "|---|---|---|",
        f"| the HTTP layer < 5% of end-to-end time | median {100 * statistics.median(overhead):.1f}%, "
        f"worst {100 * max(overhead):.1f}% | {'yes' if max(overhead) < 0.05 else 'no'} |",
        f"| 0 failed requests below the queue bound (16) | {failed} failed | "
        f"{'yes' if failed == 0 else 'no'} |",
        f"| copy-heavy: >= 1.5x llama_cpp.server end to end | median {statistics.median(vs_peer):.2f}x, "
        f"lowest {min(vs_peer):.2f}x | {'yes' if min(vs_peer) >= 1.5 else 'no'} |",
        "",
        "## With and without `prediction` (pedit serve)",
        "",
        "HTTP = the client's time minus the engine's own (prefill + decode, from the server's "
        "`pedit` extension field), as a share of the client's time: JSON, HTTP and the queue.",
        "",
        "Without `prediction`, pedit serve still drafts with prompt lookup and n-grams from the "
        "prompt, which holds the file: on a copy-heavy rewrite they find much of what the "
        "prediction gives. Decode: the engine's own decode time (prefill excluded); total: the "
        "client's, prefill included (every request starts cold).",
        "",
        "| task | tokens | decode with s | without s | decode x | total with s | without s | total x "
        "| accepted | rejected | HTTP |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r, o in zip(d["prediction"], overhead, strict=True):
        w, wo = r["with"], r["without"]
        dw, dwo = w["decode_seconds"], wo["decode_seconds"]
        out.append(
            f"| {r['id']} | {w['tokens']} | {dw:.2f} | {dwo:.2f} | {dwo / dw:.2f}x | {w['seconds']:.2f} | "
            f"{wo['seconds']:.2f} | {wo['seconds'] / w['seconds']:.2f}x | {w['accepted']} | "
            f"{w['rejected']} | {100 * o:.1f}% |"
        )
    out += [
        "",
        "## Under load (with `prediction`; client i sends task i mod the tasks)",
        "",
        "One model, one request at a time: more clients wait longer, the server's rate stays. "
        "With one client, its requests are the same file back to back, and the second reuses "
        "the first's prompt from the server's cache (requests here are not made cold); with "
        "more, each request follows another file's and prefills its own prompt.",
        "",
        "| clients | requests | failed | per minute | p50 s | p95 s |",
        "|---|---|---|---|---|---|",
    ]
    for r in d["load"]:
        out.append(
            f"| {r['clients']} | {r['requests']} | {r['failed']} | {r['per_minute']:.1f} | "
            f"{r['p50']:.2f} | {r['p95']:.2f} |"
        )
    out += [
        "",
        "## Against llama_cpp.server (llama-cpp-python's OpenAI-compatible server)",
        "",
        "The same GGUF, messages and threads; it drops `prediction` (usage reports none) and does "
        "not continue a primed answer, so it is asked plainly, as pedit's remote backend asks it. "
        "Its answer is another decoding of the same model (not primed), so token counts may differ. "
        "The last two columns: the first server again with `--speculate off` (plain decoding, a "
        "forward pass per token), and pedit serve's speedup over it: what drafting from the file "
        "gains a server, apart from whose server it is.",
        "",
        "| task | pedit serve s | tokens | llama_cpp.server s | tokens | pedit serve x | pedit serve "
        "--speculate off s | x |",
        "|---|---|---|---|---|---|---|---|",
    ]
    plain = {r["id"]: r["plain"] for r in d.get("plain", [])}
    for r, x in zip(d["peer"], vs_peer, strict=True):
        w, p = pred[r["id"]]["with"], plain.get(r["id"])
        off = f"{p['seconds']:.2f} | {p['seconds'] / w['seconds']:.2f}x" if p else "| "
        out.append(
            f"| {r['id']} | {w['seconds']:.2f} | {w['tokens']} | {r['peer']['seconds']:.2f} | "
            f"{r['peer']['tokens']} | {x:.2f}x | {off} |"
        )
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    main()
