"""pedit serve against llama.cpp's own server on the same requests; writes docs/server-peers.md.

    python scripts/measure_server_peers.py [--llama-server PATH] [--repeats N] [--tasks a,b]

llama.cpp's `llama-server` (its C++ server, built from the sources vendored in the pinned
llama-cpp-python by scripts/build_llama_server.sh) drafts without a draft model with its
n-gram self-speculation (`--spec-type ngram-simple`, `ngram-mod`) and keeps a prompt cache.
Each request is the one pedit's remote backend sends for a task of `pedit bench --e2e`
(the system prompt, the instruction and the fenced file; not primed), temperature 0,
non-streamed, through the real `openai` client; pedit serve gets the file as `prediction`,
which llama-server ignores. Configurations:

    pedit serve             the default model and settings, with `prediction`
    llama-server            plain decoding (no --spec-type)
    llama-server ngram-simple, llama-server ngram-mod   its n-gram speculation

The first request of each prompt, as a user's new file would be: every measured request
goes to a server started for it (the model loaded, one one-token request of another
prompt served: warm, but nothing of this prompt in any cache or n-gram table; ngram-mod
keeps its table across requests, and a repeated request would find the answer there).
Servers run one at a time on all usable cores; rounds interleave the configurations.
Nothing is typed by hand: the tables are this script's output (`--from` re-renders).
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from datetime import datetime
from pathlib import Path

from measure_serve import client_for, flush, free_port, start, stop  # scripts/ beside this file

from pedit.app.calibration import cpu_name
from pedit.app.machine import usable_cpus
from pedit.app.templates import templates
from pedit.bench import e2e
from pedit.bench.corpus import CORPUS, load_tasks
from pedit.engine.remote import remote_prompt
from pedit.models import DEFAULT_MODEL, cache_root, prepare
from pedit.request import EditRequest

CONFIGS = ("pedit serve", "llama-server", "llama-server ngram-simple", "llama-server ngram-mod")
BINARY = cache_root() / "llama-server" / "llama-server"  # where build_llama_server.sh puts it


def request_for(task) -> dict:
    t = templates({})[task.command]
    text = (CORPUS / task.file).read_text(encoding="utf-8")
    req = EditRequest(text, t.render(task.instruction or None), task.file, t.system)
    msgs, _, _, prediction = remote_prompt(req, "rewrite", False)
    return {"id": task.id, "messages": msgs, "prediction": prediction, "max_tokens": 2 * len(text) // 3 + 256}


def server_args(config: str, binary: Path, gguf: Path, port: int) -> list[str]:
    if config == "pedit serve":
        pedit = str(Path(sys.executable).with_name("pedit"))
        return [pedit, "serve", "-m", DEFAULT_MODEL, "--port", str(port)]
    cores = str(usable_cpus())
    args = [str(binary), "-m", str(gguf), "--port", str(port), "-c", "8192", "-t", cores, "-tb", cores,
            "--parallel", "1", "--no-webui", "--log-disable"]  # fmt: skip
    if " " in config:
        args += ["--spec-type", config.split()[1]]
    return args


def measure(config: str, r: dict, binary: Path, gguf: Path) -> dict:
    port = free_port()
    server = start(server_args(config, binary, gguf, port), port)
    try:
        client = client_for(port)
        model = DEFAULT_MODEL
        flush(client, model)  # warm: the model has served a request, of another prompt
        kwargs = {"model": model, "temperature": 0, "max_tokens": r["max_tokens"], "messages": r["messages"]}
        if config == "pedit serve":
            kwargs["prediction"] = {"type": "content", "content": r["prediction"]}
        t0 = time.perf_counter()
        reply = client.chat.completions.create(**kwargs)
        seconds = time.perf_counter() - t0
    finally:
        stop(server)
    return {"config": config, "id": r["id"], "seconds": seconds, "tokens": reply.usage.completion_tokens,
            "text": reply.choices[0].message.content}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--llama-server", type=Path, default=BINARY)
    ap.add_argument("--tasks", default=e2e.TASKS)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--json", type=Path, default=Path("docs/server-peers.json"))
    ap.add_argument("--out", type=Path, default=Path("docs/server-peers.md"))
    ap.add_argument("--from", dest="source", type=Path, help="render the markdown from this JSON only")
    a = ap.parse_args()
    if a.source:
        a.out.write_text(render(json.loads(a.source.read_text())))
        return
    if not a.llama_server.is_file():
        raise SystemExit(f"no llama-server at {a.llama_server}: run scripts/build_llama_server.sh")
    wanted = a.tasks.split(",")
    reqs = [request_for(t) for t in load_tasks() if t.id in wanted]
    gguf = prepare(DEFAULT_MODEL, "llama.cpp").path
    runs = []
    for i in range(a.repeats):
        for r in reqs:
            for config in CONFIGS:
                print(f"round {i + 1}/{a.repeats}: {r['id']}, {config}", file=sys.stderr, flush=True)
                runs.append(measure(config, r, a.llama_server, gguf))
    data = {
        "command": " ".join(["python", "scripts/measure_server_peers.py", *sys.argv[1:]]),
        "when": datetime.now().strftime("%Y-%m-%d %H:%M"),
        "machine": f"{cpu_name()}, {usable_cpus()} cores, CPU only, Python {platform.python_version()}",
        "model": DEFAULT_MODEL, "repeats": a.repeats, "tasks": [r["id"] for r in reqs], "runs": runs,
    }  # fmt: skip
    a.json.write_text(json.dumps(data, indent=1) + "\n")
    a.out.write_text(render(data))


def medians(d: dict) -> dict[tuple[str, str], float]:
    out = {}
    for t in d["tasks"]:
        for c in CONFIGS:
            xs = [x["seconds"] for x in d["runs"] if x["id"] == t and x["config"] == c]
            if xs:
                out[t, c] = statistics.median(xs)
    return out


def render(d: dict) -> str:
    m = medians(d)
    peers = CONFIGS[1:]
    lines = [
        "# pedit serve against llama.cpp's own server",
        "",
        f"<!-- generated by `{d['command']}`; do not edit by hand -->",
        "",
        f"Measured {d['when']} on {d['machine']}; model {d['model']} (the default), the same GGUF on "
        f"both servers, medians of {d['repeats']} rounds. Each request is the one pedit's remote "
        "backend sends for a task of `pedit bench --e2e` (not primed), temperature 0, through the "
        "`openai` client; pedit serve gets the file as `prediction`. Every measured request is the "
        "first of its prompt on a warm server started for it. How it is run: "
        "`scripts/measure_server_peers.py`.",
        "",
        "| task | " + " | ".join(f"{c} s" for c in CONFIGS) + " | best peer / pedit serve | same answer |",
        "|---|" + "---:|" * len(CONFIGS) + "---:|---|",
    ]
    ratios = []
    for t in d["tasks"]:
        cells = [f"{m[t, c]:.1f}" if (t, c) in m else "–" for c in CONFIGS]
        best = min((m[t, c] for c in peers if (t, c) in m), default=None)
        ratio = best / m[t, CONFIGS[0]] if best and (t, CONFIGS[0]) in m else None
        if ratio:
            ratios.append(ratio)
        texts = {x["text"] for x in d["runs"] if x["id"] == t and x["config"] in (CONFIGS[0], "llama-server")}
        same = "yes" if len(texts) == 1 else "no"
        lines.append(f"| {t} | {' | '.join(cells)} | {f'{ratio:.2f}x' if ratio else '–'} | {same} |")
    if ratios:
        med = statistics.median(ratios)
        lines += [
            "",
            "Same answer: pedit serve's text equals llama-server's plain decoding's in every round "
            "(on llama.cpp a batch is rounded differently from one token at a time, so where two "
            "tokens are nearly tied another split of the same prompt can pick the other one).",
            "",
            "| goal | measured | met |",
            "|---|---:|:---:|",
            f"| pedit serve >= 1.4x the best llama-server configuration (median over tasks) | {med:.2f}x "
            f"(from {min(ratios):.2f}x to {max(ratios):.2f}x) | {'yes' if med >= 1.4 else 'no'} |",
        ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
