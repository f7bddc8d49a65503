"""How a pass-shaping policy would have done on real answers, without the timing noise.

`record` runs pedit's commands on corpus tasks (the default model, in this process) and
keeps each speculative answer: its request, its options, and the tokens the model wrote;
`record-serve`, pedit serve's answers to the e2e benchmark's chat requests for them.
`replay` decodes each answer again on a backend that knows the answer (its logits: the
answer's next token, wherever the prefix is the answer's; the real tokenizer), with the
run's own cost model, and prices every pass of the answer with that model:

    seconds = Σ over the answer's passes of t(rows, context)

Passes, rows and accepted tokens are what the engine would do on the model, exactly (a
lossless decoder's passes depend only on the tokens it emits and its planner); the seconds
are the cost model's, not a clock's, so two policies compare without two runs' noise.

    python scripts/replay_passes.py record --tasks prose-darwin,md-click-fix --out rec.pkl
    python scripts/replay_passes.py record-serve --tasks prose-walden --out serve.pkl
    python scripts/replay_passes.py replay train.pkl held.pkl [--markdown docs/planner.md]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import pickle
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from pedit import models
from pedit.bench import corpus
from pedit.engine import edit, planner
from pedit.engine.costmodel import CostModel
from pedit.engine.drafters import compose
from pedit.engine.prompt import build_prompt
from pedit.events import Finished, drain
from pedit.machine.calibration import cpu_name
from pedit.machine.cpus import usable_cpus
from pedit.models.progress import quietly


def record(tasks: str, out: Path) -> None:
    from pedit.app import jobs
    from pedit.cli.app import app

    kept: list[dict] = []
    real = jobs.edit_events

    def spy(backend, req, options, **kw):
        events = real(backend, req, options, **kw)
        if options.kind != "rewrite" or options.speculate != "auto" or not edit.local(backend):
            return events
        cost = options.cost.to_json() if options.cost else None

        def watched():
            for ev in events:
                if isinstance(ev, Finished):
                    kept.append({"task": task.id, "req": req, "options": replace(options, cost=None),
                                 "cost": cost, "answer": list(ev.tokens)})  # fmt: skip
                yield ev

        return watched()

    jobs.edit_events = spy
    for task in corpus.select(corpus.load_tasks(), ids=tasks):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / Path(task.file).name
            path.write_text(task.text(), encoding="utf-8")
            args = [task.command, str(path), *([task.instruction] if task.instruction else []), "--stdout"]
            with (
                open(os.devnull, "w") as null,
                contextlib.redirect_stdout(null),
                contextlib.suppress(SystemExit),
            ):
                app(args, standalone_mode=False)
        print(f"{task.id}: {sum(k['task'] == task.id for k in kept)} answers", file=sys.stderr)
    out.write_bytes(pickle.dumps(kept))


def record_serve(tasks: str, out: Path) -> None:
    """`pedit serve`'s answers to the e2e benchmark's chat requests (bench/servers.py's
    request_for, with the file as `prediction`), as serve/run.py starts them, in this process."""
    from pedit.bench import servers
    from pedit.engine import chat
    from pedit.machine import calibration
    from pedit.serve import run, schema, tools

    backend = quietly(models.load(models.DEFAULT_MODEL))
    cost = calibration.measure_cost(backend)
    kept: list[dict] = []
    for task in corpus.select(corpus.load_tasks(), ids=tasks):
        r = servers.request_for(task)
        prediction = {"type": "content", "content": r["prediction"]}
        body = {"model": models.DEFAULT_MODEL, "temperature": 0, "max_tokens": r["max_tokens"],
                "messages": r["messages"], "prediction": prediction}  # fmt: skip
        call = schema.parse_chat(json.dumps(body).encode(), backend.n_ctx)
        call = replace(call, prediction=tools.propose(call.messages, call.prediction).draft)
        prompt, draft = run.tokens(backend, call)
        for ev in chat.completion_events(backend, prompt, call.options, draft=draft, cost=cost):
            if isinstance(ev, Finished):
                got = {"prompt": prompt, "draft": draft, "options": call.options, "answer": list(ev.tokens)}
                kept.append({"task": task.id, "serve": True, "cost": cost.to_json(), **got})
        print(f"{task.id}: {len(kept[-1]['answer'])} tokens", file=sys.stderr)
    out.write_bytes(pickle.dumps(kept))


class Replay:
    """The real backend's tokenizer; logits that put the recorded answer's next token first."""

    def __init__(self, real, full: list[int], cost: CostModel, start: int):
        self._real, self._full, self._cost, self._start = real, full, cost, start
        self._held: list[int] = []
        self.seconds = 0.0  # the answer's passes, priced
        self.n_ctx, self.n_vocab = real.n_ctx, real.n_vocab
        self.capabilities, self.eos_ids, self.name = real.capabilities, real.eos_ids, real.name

    def __getattr__(self, name):  # tokenize, detokenize, token_bytes, ...
        return getattr(self._real, name)

    @property
    def n_past(self) -> int:
        return len(self._held)

    @property
    def held(self):
        return self._held

    first_read = 0

    def truncate(self, n: int) -> None:
        del self._held[n:]

    def eval(self, tokens, *, n_logits: int = 1) -> np.ndarray:
        at, n = len(self._held), len(tokens)
        if at >= self._start:  # the answer's passes (the prompt's are not priced)
            self.seconds += self._cost.cost(n, at)
        self._held += list(tokens)
        out = np.zeros((n_logits, self.n_vocab), dtype=np.float32)
        for r, t in enumerate(range(at + n - n_logits, at + n)):
            ok = t + 1 < len(self._full) and self._held[: t + 1] == self._full[: t + 1]
            out[r, self._full[t + 1] if ok else 0] = 100.0
        return out


class _Oracle:
    """A planner that knows the answer: the L draft tokens the model will accept, and its
    own token after them, are L + 1 tokens, which it reads in the passes that cost least,

        best(n) = min over 1 <= m <= min(n, DRAFT_MAX + 1) of t(m) + best(n - m),  best(0) = 0

    (a pass of m rows emits m tokens: m - 1 accepted and the model's next), at the current
    context's prices. It verifies the first of those passes' draft tokens, so no pass reads a
    rejected row."""

    def __init__(self, cost: CostModel, *_):
        self.cost = cost

    def choose(self, label: str, available: int, at: int = 0) -> int:
        draft, full = _LAST["draft"], _LAST["backend"]._full
        n = 0  # the draft follows the one token not yet read (at is where that token goes)
        while n < available and at + 1 + n < len(full) and draft[n] == full[at + 1 + n]:
            n += 1
        t = [self.cost.cost(m, at) for m in range(1, min(n + 1, planner.DRAFT_MAX + 1) + 1)]
        best, first = [0.0], [0]
        for i in range(1, n + 2):
            m = min(range(1, min(i, len(t)) + 1), key=lambda m: t[m - 1] + best[i - m])
            best.append(t[m - 1] + best[i - m])
            first.append(m)
        return first[n + 1] - 1


_LAST: dict = {}


def _watch_drafts() -> None:
    real = compose.Composite.choose

    def choose(self, proposals):
        d = real(self, proposals)
        _LAST["draft"] = d.tokens
        return d

    compose.Composite.choose = choose


def _replay(real, a: dict, oracle: bool) -> dict:
    """One recorded answer decoded again (the default planner, or the oracle): its counts
    and its passes priced."""
    from pedit.engine import chat

    serve = a.get("serve", False)
    prompt = a["prompt"] if serve else build_prompt(real, a["req"]).tokens
    full = prompt + a["answer"] + [min(real.eos_ids)]  # the token that ended it was not kept
    cost = CostModel.from_json(a["cost"])
    backend = _LAST["backend"] = Replay(real, full, cost, len(prompt))
    edit.CostPlanner = chat.CostPlanner = _Oracle if oracle else planner.CostPlanner
    if serve:
        events = chat.completion_events(backend, prompt, a["options"], draft=a["draft"], cost=cost)
    else:
        events = edit.edit_events(backend, a["req"], replace(a["options"], cost=cost))
    fin = drain(events)  # the prompt's passes are not priced (Replay.eval)
    if list(fin.tokens) != a["answer"]:
        raise SystemExit(f"{a['task']}: the replay did not write the recorded answer")
    s = fin.stats
    return {"tokens": s.completion_tokens, "passes": s.forward_passes - 1, "rows": s.rows_read,
            "rejected": s.rejected_prediction_tokens, "seconds": backend.seconds}  # fmt: skip


def _add(rows: list[dict]) -> dict:
    return {k: round(sum(r[k] for r in rows), 3) for k in ("tokens", "passes", "rows", "rejected", "seconds")}


def replay(files: list[Path], out: Path | None) -> None:
    """Each file's answers with the planner and with the oracle; `out` (a .md): the report,
    and its figures beside it (.json), which render() turns back into the same text."""
    real = quietly(models.load(models.DEFAULT_MODEL))
    _watch_drafts()
    groups = []
    for f in files:
        answers = pickle.loads(f.read_bytes())
        tasks = []
        for t in dict.fromkeys(a["task"] for a in answers):
            mine = [a for a in answers if a["task"] == t]
            tasks.append({"id": t, "answers": len(mine),
                          "planner": _add([_replay(real, a, oracle=False) for a in mine]),
                          "oracle": _add([_replay(real, a, oracle=True) for a in mine])})  # fmt: skip
            print(t, tasks[-1], file=sys.stderr, flush=True)
        groups.append({"name": f.stem, "serve": any(a.get("serve") for a in answers), "tasks": tasks})
    data = {
        "kind": "replay",
        "machine": {"cpu": cpu_name(), "cores": usable_cpus()},
        "started": time.strftime("%Y-%m-%d %H:%M"),
        "command": f"python scripts/replay_passes.py replay {' '.join(map(str, files))}"
        + (f" --markdown {out}" if out else ""),
        "groups": groups,
    }
    text = render(data)
    print(text)
    if out:
        out.with_suffix(".json").write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
        out.write_text(text, encoding="utf-8")


def render(data: dict) -> str:
    m = data["machine"]
    lines = [
        "# The planner against an oracle",
        "",
        f"<!-- generated by `{data['command']}`; do not edit by hand -->",
        "",
        f"Replayed on {m['cpu']}, {m['cores']} cores, {data['started']}: the answers `replay_passes.py "
        "record` kept from the default model's commands on the corpus tasks, each decoded again with the "
        "default planner and with an oracle that verifies exactly the draft tokens the model accepts. "
        "Every pass of an answer is priced by the cost model that run used: the seconds are the model's, "
        "not a clock's, so two policies compare without two runs' noise. The oracle bounds what any "
        "choice of draft lengths could save, with the drafts as they are.",
        "",
        "| group | task | answers | tokens | planner: passes, rows (rejected), s | oracle: passes, rows, s "
        "| oracle / planner |",
        "|---|---|---:|---:|---|---|---:|",
    ]
    for g in data["groups"]:
        every = {k: _add([t[k] for t in g["tasks"]]) for k in ("planner", "oracle")}
        n = sum(t["answers"] for t in g["tasks"])
        for t in [*g["tasks"], {"id": "**all**", "answers": n, **every}]:
            p, o = t["planner"], t["oracle"]
            lines.append(
                f"| {g['name']} | {t['id']} | {t['answers']} | {p['tokens']} | {p['passes']}, {p['rows']} "
                f"({p['rejected']}), {p['seconds']:.2f} | {o['passes']}, {o['rows']}, {o['seconds']:.2f} | "
                f"{o['seconds'] / p['seconds']:.2f} |"
            )
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("record", "record-serve"):
        r = sub.add_parser(name)
        r.add_argument("--tasks", required=True)
        r.add_argument("--out", type=Path, required=True)
    p = sub.add_parser("replay")
    p.add_argument("files", type=Path, nargs="+")
    p.add_argument("--markdown", type=Path)
    a = ap.parse_args()
    if a.cmd == "record":
        record(a.tasks, a.out)
    elif a.cmd == "record-serve":
        record_serve(a.tasks, a.out)
    else:
        replay(a.files, a.markdown)


if __name__ == "__main__":
    main()
