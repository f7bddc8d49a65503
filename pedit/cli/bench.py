"""`pedit bench`: the benchmark command (the work is in pedit/bench/).

The options become one BenchOptions, handed whole to the mode asked for: the speed suite
(the default), --quality, --structured or --e2e. Each mode has the same three steps: its
data (measured here, or --from saved runs merged), shown (--json, or the goals), and its
report written (--markdown: _write_report).
"""

from __future__ import annotations

import datetime
import json
import shlex
import sys
from collections.abc import Callable
from pathlib import Path

import typer

from ..errors import UsageError
from .bench_options import (
    KINDS,
    QUALITY_CONFIGS,
    AsJson,
    Backends,
    Baseline,
    BenchOptions,
    Configs,
    EndToEnd,
    FromJson,
    Markdown,
    Model,
    NCtx,
    NoPeers,
    Quality,
    Quick,
    Readme,
    Repeats,
    Seeds,
    Structured,
    TaskIds,
    Threads,
)


def bench_command(
    quick: Quick = False,
    quality: Quality = False,
    structured: Structured = False,
    e2e: EndToEnd = False,
    configs: Configs = None,
    task_ids: TaskIds = None,
    backends: Backends = None,
    model: Model = None,
    repeats: Repeats = None,
    seeds: Seeds = 0,
    no_peers: NoPeers = False,
    baseline: Baseline = None,
    n_ctx: NCtx = 4096,
    threads: Threads = None,
    as_json: AsJson = False,
    markdown: Markdown = None,
    readme: Readme = None,
    from_json: FromJson = None,
):
    """Measure pedit against plain decoding and the peers on the bundled edit tasks.

    Every configuration runs on every task, interleaved in one process: plain decoding
    (the baseline), pedit with each drafter alone and all together, and the peers on
    the same model and prompt. Ratios are against plain decoding measured in the same
    run; output is checked token for token against plain's (and, with --seeds, with
    sampling: plain and pedit drawing with the same seed).
    """
    from rich.console import Console

    options = BenchOptions(
        quick=quick, configs=configs, task_ids=task_ids, backends=backends, model=model, repeats=repeats,
        seeds=seeds, with_peers=not no_peers, baseline=baseline, n_ctx=n_ctx, threads=threads,
        as_json=as_json, markdown=markdown, readme=readme, from_json=tuple(from_json or ()),
    )  # fmt: skip
    if readme is not None and not (e2e and markdown):
        raise UsageError("--readme goes with --e2e and --markdown")
    if baseline is not None and not e2e:
        raise UsageError("--baseline goes with --e2e")
    mode = _quality if quality else _e2e if e2e else _structured if structured else _speed
    mode(options, Console(stderr=True))


def _speed(options: BenchOptions, err) -> None:
    """Plain decoding, pedit's drafters and the peers, timed (docs/benchmarks.md)."""
    from ..bench import report

    data = report.merge(_saved(options)) if options.from_json else _speed_runs(options, err)
    _show_and_write(data, options, report, err, _speed_goals)


def _speed_runs(options: BenchOptions, err) -> dict:
    from dataclasses import asdict

    from .. import models
    from ..bench.corpus import load_tasks, select
    from ..bench.run import machine, run_backend

    tasks = select(load_tasks(), quick=options.quick, ids=options.task_ids)
    if not tasks:
        raise UsageError(f"no task matches {options.task_ids!r}")
    kinds = (options.backends or ("llama.cpp" if options.quick else "llama.cpp,transformers")).split(",")
    repeats = (1 if options.quick else 2) if options.repeats is None else options.repeats
    if repeats == 0 and options.seeds == 0:
        raise UsageError("--repeats 0 runs only the sampling check: give --seeds N too")
    spec = options.model or models.DEFAULT_MODEL
    started = _now()

    def work(kind, backend, progress) -> dict:
        result = run_backend(
            backend, spec if kind != "reference" else "reference", tasks, repeats,
            with_peers=options.with_peers, seeds=options.seeds, progress=progress,
        )  # fmt: skip
        return result.to_dict()

    results = _each_backend(kinds, spec, options, err, work)
    return {
        "command": _command(), "started": started, "machine": machine(), "repeats": repeats,
        "seeds": options.seeds, "tasks": [asdict(t) for t in tasks], "results": results,
    }  # fmt: skip


def _speed_goals(data: dict, out) -> None:
    """Per backend: its table of speedups, then each goal, met or not."""
    from ..bench import report

    categories = {t["id"]: t["category"] for t in data["tasks"]}
    repeated = report.repeated_edit_tasks(data["tasks"])
    for d in data["results"]:
        result = report.BackendResult.from_dict(d)
        out.print(report.rich_table(result))
        for goal, measured, met in report.goals(result, categories, repeated):
            out.print(f"  {'met' if met else 'NOT met'}: {goal}: {measured}")


def _quality(options: BenchOptions, err) -> None:
    """Every task with a known answer, scored, on each of --configs (docs/quality.md)."""
    from ..bench import quality_report as qr

    data = qr.merge(_saved(options)) if options.from_json else _quality_runs(options, err)
    _show_and_write(data, options, qr, err, _quality_goals)


def _quality_runs(options: BenchOptions, err) -> dict:
    from dataclasses import asdict

    from .. import models
    from ..bench.corpus import load_tasks, select
    from ..bench.quality_run import Config, run_all, scored
    from ..bench.run import machine

    tasks = [t for t in select(load_tasks(), quick=options.quick, ids=options.task_ids) if scored(t)]
    if not tasks:
        raise UsageError(f"no scored task matches {options.task_ids!r}")
    names = [c.strip() for c in (options.configs or QUALITY_CONFIGS).split(",") if c.strip()]
    try:
        chosen = [Config.parse(name) for name in names]
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    sizes = {"n_ctx": options.n_ctx, "n_threads": options.threads}  # on every backend, reference too
    started = _now()
    with err.status("") as status:
        runs = run_all(
            chosen, tasks, load=lambda config: _load(config.model, config.backend, err, **sizes),
            progress=lambda s: status.update(s),
        )  # fmt: skip
    return {
        "kind": "quality", "command": _command(), "started": started, "machine": machine(),
        "default": models.DEFAULT_MODEL, "tasks": [asdict(t) for t in tasks],
        "runs": [asdict(r) for r in runs],
    }  # fmt: skip


def _quality_goals(data: dict, out) -> None:
    """The table of scores per configuration, then each goal, met or not."""
    from ..bench import quality_report as qr
    from ..bench.quality_run import QualityRun

    runs = [QualityRun(**r) for r in data["runs"]]
    out.print(qr.rich_table(runs))
    for goal, measured, met in qr.goal_rows(data):
        out.print(f"  {'met' if met else 'NOT met'}: {goal}: {measured}")


def _structured(options: BenchOptions, err) -> None:
    """Structured output, constrained, coalesced and drafted, and the peers (docs/structured-bench.md)."""
    from ..bench import structured_report as sr

    data = sr.merge(_saved(options)) if options.from_json else _structured_runs(options, err)
    _show_and_write(data, options, sr, err, _structured_goals)


def _structured_runs(options: BenchOptions, err) -> dict:
    from dataclasses import asdict

    from .. import models
    from ..bench.run import machine, versions
    from ..bench.structured import load_structured, run_structured
    from ..machine import build

    wanted = [w.strip() for w in (options.task_ids or "").split(",") if w.strip()]
    tasks = [t for t in load_structured() if not wanted or any(w in t.id for w in wanted)]
    if not tasks:
        raise UsageError(f"no structured task matches {options.task_ids!r}")
    spec = options.model or models.DEFAULT_MODEL
    repeats = 1 if options.repeats is None else options.repeats
    started = _now()

    def work(kind, backend, progress) -> dict:
        _, runs = run_structured(backend, tasks, repeats, with_peers=options.with_peers, progress=progress)
        about = {"backend": kind, "model": spec if kind != "reference" else "reference"}
        about |= {"versions": versions(kind), "device": build.device(backend)}
        return {**about, "runs": [asdict(r) for r in runs]}

    kinds = (options.backends or "llama.cpp,transformers").split(",")
    results = _each_backend(kinds, spec, options, err, work)
    return {
        "kind": "structured", "command": _command(), "started": started, "machine": machine(),
        "model": spec, "repeats": repeats, "tasks": [asdict(t) for t in tasks], "results": results,
    }  # fmt: skip


def _structured_goals(data: dict, out) -> None:
    from ..bench import structured_report as sr

    for result in data["results"]:
        for goal, measured, met in sr.goals(result, data["tasks"]):
            out.print(f"  {result['backend']}: {'met' if met else 'NOT met'}: {goal}: {measured}")


def _e2e(options: BenchOptions, err) -> None:
    """The default commands timed end to end, a process per run (docs/e2e.md)."""
    from ..bench import e2e_report

    if options.from_json:
        try:
            data = e2e_report.merge(_saved(options))
        except ValueError as exc:  # a file that is not JSON, or runs that do not merge
            raise UsageError(str(exc)) from None
    else:
        data = _e2e_runs(options, err)
    _show_and_write(data, options, e2e_report, err, _e2e_goals)


def _e2e_runs(options: BenchOptions, err) -> dict:
    from dataclasses import asdict

    from .. import models
    from ..bench import e2e
    from ..bench.corpus import load_tasks, select
    from ..bench.run import machine

    ids = [i.strip() for i in (options.task_ids or e2e.TASKS).split(",") if i.strip()]
    small = options.task_ids is None or e2e.SMALL in ids  # the small cases and the edit (e2e_small.py)
    wanted = ",".join(i for i in ids if i != e2e.SMALL)
    tasks = select(load_tasks(), quick=False, ids=wanted) if wanted else []
    if not tasks and not small:
        raise UsageError(f"no task matches {options.task_ids!r}")
    configs = e2e.configs(options.with_peers, baseline=options.baseline is not None)
    if options.with_peers and not set(e2e.servers.PEERS) <= set(configs):
        err.print(f"no llama-server at {e2e.servers.BINARY} (bash scripts/build_llama_server.sh builds it): "
                  "its configurations are left out")  # fmt: skip
    started = _now()
    rounds = 3 if options.repeats is None else options.repeats
    with err.status("") as status:
        runs = e2e.run_all(
            tasks, configs, rounds, progress=lambda s: status.update(s), baseline=options.baseline, small=small
        )
    return {
        "kind": "e2e", "command": _command(), "started": started, "machine": machine(), "bytecode": True,
        "pedit": e2e.version(Path(sys.executable)),  # the commit measured
        **({"baseline": e2e.version(options.baseline)} if options.baseline else {}),
        **({"peer_build": e2e.servers.peer_build()} if options.with_peers else {}),
        "model": models.DEFAULT_MODEL, "repeats": rounds, "tasks": [asdict(t) for t in tasks],
        "runs": e2e.to_dict(runs),
    }  # fmt: skip


def _e2e_goals(data: dict, out) -> None:
    from ..bench import e2e_report

    for goal, measured, met in e2e_report.goals(data):
        out.print(f"  {'met' if met else 'NOT met'}: {goal}: {measured}")


def _saved(options: BenchOptions) -> list[dict]:
    """The runs --from names, read back (a mode's merge makes them one)."""
    return [json.loads(p.read_text()) for p in options.from_json]


def _show_and_write(data: dict, options: BenchOptions, module, err, show: Callable) -> None:
    """--json prints the data, else show(data, console) prints the goals; --markdown writes
    the report."""
    from rich.console import Console

    if options.as_json:
        typer.echo(json.dumps(data, indent=1))
    else:
        show(data, Console())
    if options.markdown:
        _write_report(options.markdown, data, module, err)
    if options.readme:
        _write_readme(options.readme, {**data, "rendered": _command()}, module, err)


def _each_backend(kinds: list[str], spec: str, options: BenchOptions, err, work: Callable) -> list:
    """work(kind, backend, progress) with the model `spec` on each backend kind in turn,
    the backend closed after; `progress` updates a status line on stderr."""
    out = []
    for kind in kinds:
        if kind not in KINDS:
            raise UsageError(f"unknown backend {kind!r}")
        sizes = {"n_ctx": options.n_ctx, "n_threads": options.threads} if kind != "reference" else {}
        backend = _load(spec, kind, err, **sizes)
        try:
            with err.status("") as status:
                out.append(work(kind, backend, lambda s: status.update(s)))
        finally:
            backend.close()
    return out


def _load(spec: str, kind: str, err, **sizes):
    """The model `spec` on backend `kind`, its loading shown on stderr; `sizes`: n_ctx and
    n_threads. The one place bench loads a model (for app/loading.py's load_with_cost to
    take over)."""
    from .. import models
    from ..ui.render import shown

    return shown(models.load(spec, kind, **sizes), err)


def _now() -> str:
    return datetime.datetime.now().strftime("%Y-%m-%d %H:%M")


def _write_report(markdown: Path, data: dict, module, err) -> None:
    """The report (module.markdown), its chart (module.chart) beside it as .png, and the
    raw runs as .json, which --from renders again."""
    png, raw = markdown.with_suffix(".png"), markdown.with_suffix(".json")
    raw.write_text(json.dumps(data, indent=1) + "\n")
    data = {**data, "rendered": _command()}  # the step that wrote the report, for its header
    drawn = module.chart(data, png)
    markdown.write_text(module.markdown(data, png.name if drawn else None))
    err.print(f"wrote {', '.join(map(str, [markdown, *([png] if drawn else []), raw]))}")


def _write_readme(readme: Path, data: dict, module, err) -> None:
    """The report's table for README (module.readme) between the README's markers."""
    from ..bench.readme import replace_block

    try:
        text = replace_block(readme.read_text(encoding="utf-8"), module.readme(data))
    except ValueError as exc:
        raise UsageError(f"{readme}: {exc}") from None
    readme.write_text(text, encoding="utf-8")
    err.print(f"wrote the table in {readme}")


def _command() -> str:
    """How this run was asked for, for the report (tests call the command in-process)."""
    named = Path(sys.argv[0]).name == "pedit" or sys.argv[0].endswith("pedit/__main__.py")  # python -m
    return "pedit " + shlex.join(sys.argv[1:]) if named and sys.argv[1:2] == ["bench"] else "pedit bench"
