"""What the user waits for: the default commands end to end, a new process per run.

    pedit bench --e2e [--tasks ...] [--repeats N]

Each run is `python -m pedit COMMAND FILE [INSTRUCTION] --stdout --stats-json F` in a new
process (start-up, model load, prompt, answer: everything until it exits), with the
user's caches as a user has them after a first command (a cache of the bench's own, empty
but for the model; one untimed run of each task first: the cost model and the prompt cache
are on disk, and the first of these runs, FIRST's, is a new user's first command). Configurations, interleaved
(every configuration of a task, then the next task; the whole round `repeats` times):

    pedit       the default command, a new process that loads its model (PEDIT_KEEP_ALIVE=0)
    resident    the same command with the model resident (issue 56: resident/): a new process
                that asks the resident process the bench started (its own warm-ups start it:
                FIRST's is a new user's first command with the resident starting, in a user
                cache and runtime directory of its own); no answer cache in either
    baseline    the same command run by another installation of pedit (--baseline PYTHON: an
                earlier checkout's virtual environment), to show what a change did
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

import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .. import models
from ..models.progress import quietly
from . import servers
from .corpus import Task

CONFIGS = ("pedit", "resident", "baseline", "plain", "lookup", "reading", "pedit serve", *servers.PEERS)
SERVED = CONFIGS[6:]  # a request to a warm server started for it (servers.py), timed alone
FLAGS = {"pedit": [], "resident": [], "baseline": [], "plain": ["--speculate", "off"]}
COMMANDS = ("pedit", "baseline", "resident")  # the configurations that are a pedit command, warmed up first
# a fix in paragraphs, a Markdown fix, a README's fix (links and code: the skeleton's
# grammar), a code fix and a rename: what `make demo` and the issues' probes run
TASKS = "prose-walden,md-essay-demo,md-click-fix,code-textwrap-fix,code-textwrap-param-rename"
# the copy-heavy edit whose answer is held to the model's reading rate: its prompt is read
# and nothing else (fix's prompt time includes the scoring of its swaps)
COPY = "code-textwrap-param-rename"
# `--tasks small`: the small cases and an edit (e2e_small.py), run with every default run
SMALL = "small"
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
    # where the answer's time goes (--stats-json)
    tool_seconds: float = 0.0  # the tools' model reads (scoring, an intent), apart from the prompt
    backend_seconds: float = 0.0  # of decode_seconds, inside the model's eval
    reading_seconds: float | None = None  # the answer at this run's prompt-reading rate
    rows_read: int = 0
    accepted: int = 0
    rejected: int = 0
    forced: int = 0  # forced tokens that took no pass of their own (coalesced)
    forced_tokens: int | None = None  # every token a grammar forced (no draw); None: runs before it was kept
    skeleton_tokens: int | None = None  # the reading run's: the file's tokens wholly in its skeleton
    passes_by_size: dict = field(default_factory=dict)
    rejections: int = 0  # passes that rejected drafts
    rejected_seconds: float = 0.0  # what their rejected rows cost
    runs: int = 1  # the model's runs (a fix's parts), each reading its own prompt's frame
    # the files' answers, asked to outcome (--stats-json); None: runs before it was kept
    answering_seconds: float | None = None

    @property
    def startup_seconds(self) -> float:
        spent = self.load_seconds + self.prefill_seconds + self.tool_seconds + self.decode_seconds
        return max(0.0, self.seconds - spent)


def command(task: Task, path: Path, config: str, stats: Path, baseline: Path | None = None) -> list[str]:
    if config in ("lookup", "reading"):
        return [sys.executable, "-m", "pedit.bench.e2e", config, task.id, str(path), str(stats)]
    python = str(baseline) if config == "baseline" else sys.executable  # resident: the same command
    args = [python, "-m", "pedit", task.command, str(path)]
    args += [task.instruction] if task.instruction else []
    return args + ["--stdout", "--stats-json", str(stats), *FLAGS[config]]


def configs(with_peers: bool, binary=servers.BINARY, *, baseline: bool = False) -> list[str]:
    """The configurations a run measures: pedit's, the baseline's when given, and, with the
    peers, llama-cpp-python's prompt lookup and the servers (llama-server's when `binary` is
    built)."""
    out = [c for c in CONFIGS if baseline or c != "baseline"]
    if not with_peers:
        return [c for c in out if c not in ("lookup", *SERVED)]
    return [c for c in out if binary.is_file() or c not in servers.PEERS]


def version(python: Path) -> dict:
    """What the baseline installation is: its Python, and the git commit of the checkout
    its pedit is imported from (None outside a git checkout)."""
    where = subprocess.run(
        [str(python), "-c", "import pedit, os; print(os.path.dirname(pedit.__file__))"],
        capture_output=True,
        text=True,
        check=True,
        cwd=tempfile.gettempdir(),
    ).stdout.strip()
    head = subprocess.run(["git", "-C", where, "log", "-1", "--format=%h %s"], capture_output=True, text=True)
    return {"python": str(python), "commit": head.stdout.strip()[:80] or None}


def run_once(
    task: Task, config: str, repeat: int, env: dict[str, str] | None = None, baseline: Path | None = None
) -> E2ERun:
    if config in SERVED:
        return _served(task, config, repeat, env)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / Path(task.file).name  # a copy: nothing is written to the corpus
        path.write_text(task.text(), encoding="utf-8")
        stats = Path(tmp) / "stats.json"
        return timed(command(task, path, config, stats, baseline), task.id, config, repeat, env, stats)


def timed(args: list[str], task: str, config: str, repeat: int, env: dict[str, str] | None, stats: Path) -> E2ERun:
    """One command's run, timed from its process's start to its exit, with the figures it
    wrote to `stats` (--stats-json); run from `stats`'s folder (the file's), as a user does:
    never from the bench's own checkout, whose pedit package `python -m` would import first
    (the baseline would run this one)."""
    t0 = time.perf_counter()
    done = subprocess.run(args, capture_output=True, text=True, env=env, cwd=stats.parent)
    seconds = time.perf_counter() - t0
    figures = json.loads(stats.read_text()) if stats.exists() else {}
    stats.unlink(missing_ok=True)
    return E2ERun(
        task=task, config=config, repeat=repeat, seconds=seconds,
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
        forced=figures.get("coalesced_tokens", 0), forced_tokens=figures.get("forced_tokens"),
        skeleton_tokens=figures.get("skeleton_tokens"),
        passes_by_size=figures.get("passes_by_size", {}),
        rejections=figures.get("rejections", 0), rejected_seconds=figures.get("rejected_seconds", 0.0),
        runs=figures.get("runs", 1), answering_seconds=figures.get("answering_seconds"),
    )  # fmt: skip


def _served(task: Task, config: str, repeat: int, env: dict[str, str] | None) -> E2ERun:
    """The task's chat request on a warm server started for it: the request's seconds alone,
    and the prompt's and the answer's as the server reports them (the rest is HTTP)."""
    gguf = quietly(models.prepare(models.DEFAULT_MODEL, "llama.cpp")).path
    got = servers.measure(config, servers.request_for(task), servers.BINARY, gguf, env)
    said = got["answer_seconds"] is not None  # the server's own split of the request (else all answer)
    return E2ERun(
        task=task.id, config=config, repeat=repeat, seconds=got["seconds"], load_seconds=0.0,
        prefill_seconds=got["prompt_seconds"] if said else 0.0,
        decode_seconds=got["answer_seconds"] if said else got["seconds"],
        prompt_tokens=got["prompt_tokens"], cached_tokens=got["cached_tokens"],
        completion_tokens=got["tokens"], file_tokens=0, output=got["text"], exit_code=0,
    )  # fmt: skip


def run_all(
    tasks: list[Task], configs: list[str], repeats: int, progress=lambda s: None, baseline: Path | None = None,
    small: bool = False,
) -> list[E2ERun]:  # fmt: skip
    """The runs, in a user cache of their own that starts empty but for the models (as a
    new user's, the model already in place): the first warm-up (FIRST's, when it is one of
    the tasks) is a new user's first command, kept with repeat -1 as every warm-up; the
    baseline's warm-ups (repeat -1 too) follow pedit's. The resident configuration has a
    cache and a runtime directory of its own, so that its first warm-up is a new user's
    first command too, the one that starts the resident model; it is stopped at the end.
    `small`: then the small cases and the edit (e2e_small.py), with the model resident."""
    for python in {sys.executable, *([str(baseline)] if baseline else [])}:
        compiled(python)
    with contextlib.ExitStack() as stack:
        shared = _user(stack, resident=False)  # one user's cache: what pedit's runs learn, serve reads
        envs = {c: _user(stack, resident=True) if c == "resident" else shared for c in configs}
        runs = []
        for config in (c for c in COMMANDS if c in configs):
            for task in sorted(tasks, key=lambda t: t.id != FIRST):  # untimed in the medians
                new = not runs or config == "resident" and not any(x.config == config for x in runs)
                progress(
                    f"warming up: {task.id}, {config}" + (" (a new user's first command)" if new else "")
                )
                runs.append(run_once(task, config, -1, envs[config], baseline))
        for r in range(repeats):
            for task in tasks:
                for config in configs:
                    progress(f"round {r + 1}/{repeats}: {task.id}, {config}")
                    runs.append(run_once(task, config, r, envs[config], baseline))
        if small:
            from . import e2e_small

            env = envs.get("resident") or _user(stack, resident=True)
            runs += e2e_small.run(env, repeats, timed, progress)
    return runs


def compiled(python: str) -> None:
    """The pedit that `python` imports with its bytecode written, as pip's install of it
    has: an editable checkout run under PYTHONDONTWRITEBYTECODE (as this machine's shell
    sets) would otherwise compile every module of it again in every command."""
    code = (
        "import compileall, os, re, pedit; "
        "compileall.compile_dir(os.path.dirname(pedit.__file__), quiet=1, rx=re.compile('corpus'))"
    )  # the corpus's files are data, not modules
    subprocess.run([python, "-c", code], check=True, cwd=tempfile.gettempdir(), capture_output=True)


def _user(stack: contextlib.ExitStack, resident: bool) -> dict[str, str]:
    """The environment of a configuration's runs: a user cache of its own, empty but for the
    models; no answer cache (every command runs its model); a model loaded by each command
    (PEDIT_KEEP_ALIVE=0), or, for the resident configuration, kept resident for the whole
    run in a runtime directory of its own (stopped, and the directory removed, at the end)."""
    cache = stack.enter_context(tempfile.TemporaryDirectory(prefix="pedit-e2e-cache-"))
    (Path(cache) / "pedit").mkdir()
    (Path(cache) / "pedit" / "models").symlink_to(models.models_dir(), target_is_directory=True)
    env = os.environ | {"XDG_CACHE_HOME": cache, "PEDIT_KEEP_ALIVE": "0", "PEDIT_ANSWER_CACHE": "off"}
    if resident:
        run = stack.enter_context(
            tempfile.TemporaryDirectory(prefix="pr", dir="/tmp", ignore_cleanup_errors=True)
        )  # a socket's path is short
        os.chmod(run, 0o700)
        env |= {"XDG_RUNTIME_DIR": run, "PEDIT_KEEP_ALIVE": "-1"}
        stack.callback(_stop_resident, env)
    return env


def _stop_resident(env: dict[str, str]) -> None:
    subprocess.run(
        [sys.executable, "-m", "pedit", "daemon", "stop"], env=env, capture_output=True, timeout=120
    )


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
    from ..app.jobs import Job
    from ..app.options import EngineOptions
    from ..app.templates import templates
    from ..engine.prompt import build_prompt
    from ..tools.options import ToolOptions
    from .corpus import load_tasks

    task = next(t for t in load_tasks() if t.id == task_id)
    backend = quietly(models.load(models.DEFAULT_MODEL))
    job = Job(
        backend,
        templates({}, models.DEFAULT_MODEL)[task.command],
        task.instruction or None,
        EngineOptions(tools=ToolOptions(spelling=False)),
    )
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
    text = path.read_text(encoding="utf-8")
    tokens, inside = skeleton_tokens(backend, text, path.name)
    stats.write_text(json.dumps({"load_seconds": load, "decode_seconds": seconds, "completion_tokens": n,
                                 "file_tokens": tokens, "skeleton_tokens": inside}))  # fmt: skip


def skeleton_tokens(backend, text: str, name: str) -> tuple[int, int]:
    """(the file's tokens, those of them whose bytes lie wholly in its skeleton): the
    share a fix's grammar forces at best (a token that straddles prose and skeleton is the
    model's to draw)."""
    from ..tools import skeleton

    sk = skeleton.of(text, name)
    tokens = backend.tokenize(text)
    # the skeleton's byte ranges, adjacent spans merged: a token over two of them is inside
    offset = [0]  # offset[i]: the byte where character i starts
    for c in text:
        offset.append(offset[-1] + len(c.encode()))
    ranges: list[list[int]] = []
    for s in sk.spans:
        a, b = offset[s.start], offset[s.end]
        if ranges and ranges[-1][1] == a:
            ranges[-1][1] = b
        else:
            ranges.append([a, b])
    at, inside, r = 0, 0, 0
    for t in tokens:
        end = at + len(backend.token_bytes(t))
        while r < len(ranges) and ranges[r][1] <= at:
            r += 1
        inside += r < len(ranges) and ranges[r][0] <= at and end <= ranges[r][1]
        at = end
    return len(tokens), inside


if __name__ == "__main__":
    {"lookup": _peer, "reading": _reading}[sys.argv[1]](sys.argv[2], Path(sys.argv[3]), Path(sys.argv[4]))
