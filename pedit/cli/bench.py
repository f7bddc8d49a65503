"""`pedit bench`: the benchmark command (the work is in pedit/bench/)."""

from __future__ import annotations

import datetime
import json
import shlex
import sys
from pathlib import Path
from typing import Annotated

import typer

from ..errors import UsageError

QUALITY_CONFIGS = ",".join(
    ["spellcheck", "qwen2.5-coder-1.5b", "qwen2.5-coder-1.5b+plain", "qwen2.5-coder-0.5b"]
    + ["qwen2.5-coder-0.5b@transformers"]
)


def bench_command(
    quick: Annotated[
        bool, typer.Option(help="The quick subset of tasks, 1 repeat, llama.cpp only.", show_default=False)
    ] = False,
    quality: Annotated[
        bool,
        typer.Option(
            help="Score the edits instead: every task with a known answer, on --configs (docs/quality.md).",
            show_default=False,
        ),
    ] = False,
    structured: Annotated[
        bool,
        typer.Option(
            help="Measure structured output instead: JSON edits, extraction into schemas and a regex "
            "task, constrained, coalesced and drafted, against the peers (docs/structured-bench.md).",
            show_default=False,
        ),
    ] = False,
    e2e: Annotated[
        bool,
        typer.Option(
            "--e2e",
            help="Time the default commands end to end instead: a new process per run, the default "
            "model, against --speculate off and llama-cpp-python's prompt lookup (docs/e2e.md).",
            show_default=False,
        ),
    ] = False,
    configs: Annotated[
        str | None,
        typer.Option(
            help="With --quality: comma-separated MODEL[@BACKEND][+VARIANT], or spellcheck. "
            f"[default: {QUALITY_CONFIGS}]"
        ),
    ] = None,
    task_ids: Annotated[
        str | None,
        typer.Option("--tasks", help="Only the tasks whose id contains one of these (comma-separated)."),
    ] = None,
    backends: Annotated[
        str | None,
        typer.Option(help="Comma-separated. [default: llama.cpp,transformers; --quick: llama.cpp]"),
    ] = None,
    model: Annotated[
        str | None,
        typer.Option("-m", "--model", help="The model for every backend. [default: qwen2.5-coder-1.5b]"),
    ] = None,
    repeats: Annotated[
        int | None,
        typer.Option(min=0, help="Runs of each config. [default: 2; --quick: 1; 0: only the --seeds check]"),
    ] = None,
    seeds: Annotated[
        int,
        typer.Option(
            min=0,
            help="Also sample (T=0.7, top-p 0.95) with this many seeds, plain and pedit, and compare the "
            "outputs.",
        ),
    ] = 0,
    no_peers: Annotated[
        bool,
        typer.Option(help="Skip llama-cpp-python's and transformers' own prompt lookup.", show_default=False),
    ] = False,
    n_ctx: Annotated[int, typer.Option(min=256)] = 4096,
    threads: Annotated[int | None, typer.Option(min=1, help="CPU threads. [default: all usable]")] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the runs and ratios as JSON (no table).", show_default=False)
    ] = False,
    markdown: Annotated[
        Path | None,
        typer.Option(
            dir_okay=False,
            help="Write the report here (docs/benchmarks.md), its chart beside it (.png) and the raw runs "
            "(.json).",
        ),
    ] = None,
    from_json: Annotated[
        list[Path] | None,
        typer.Option(
            "--from",
            dir_okay=False,
            exists=True,
            help="Render saved runs (the .json --markdown writes; repeat to merge, e.g. one per backend).",
        ),
    ] = None,
):
    """Measure pedit against plain decoding and the peers on the bundled edit tasks.

    Every configuration runs on every task, interleaved in one process: plain decoding
    (the baseline), pedit with each drafter alone and all together, and the peers on
    the same model and prompt. Ratios are against plain decoding measured in the same
    run; output is checked token for token against plain's (and, with --seeds, with
    sampling: plain and pedit drawing with the same seed).
    """
    from rich.console import Console

    from ..bench import report
    from ..bench.corpus import load_tasks, select

    err = Console(stderr=True)
    from_json = from_json or []
    if quality:
        return _quality(configs, quick, task_ids, n_ctx, threads, as_json, markdown, from_json, err)
    if e2e:
        return _e2e(task_ids, repeats, no_peers, as_json, markdown, from_json, err)
    if structured:
        options = (task_ids, backends, model, repeats, not no_peers, n_ctx, threads)
        return _structured(options, as_json, markdown, from_json, err)
    if from_json:
        data = report.merge([json.loads(p.read_text()) for p in from_json])
    else:
        tasks = select(load_tasks(), quick=quick, ids=task_ids)
        if not tasks:
            raise UsageError(f"no task matches {task_ids!r}")
        kinds = (backends or ("llama.cpp" if quick else "llama.cpp,transformers")).split(",")
        repeats = (1 if quick else 2) if repeats is None else repeats
        if repeats == 0 and seeds == 0:
            raise UsageError("--repeats 0 runs only the sampling check: give --seeds N too")
        data = _run(tasks, kinds, model, repeats, seeds, not no_peers, n_ctx, threads, err)
    if as_json:
        typer.echo(json.dumps(data, indent=1))
    else:
        out = Console()
        for d in data["results"]:
            out.print(report.rich_table(report.BackendResult.from_dict(d)))
            categories = {t["id"]: t["category"] for t in data["tasks"]}
            repeated = report.repeated_edit_tasks(data["tasks"])
            for goal, measured, met in report.goals(report.BackendResult.from_dict(d), categories, repeated):
                out.print(f"  {'met' if met else 'NOT met'}: {goal}: {measured}")
    if markdown:
        _write_report(markdown, data, report, err)


def _run(tasks, kinds, model, repeats, seeds, with_peers, n_ctx, threads, err) -> dict:
    from dataclasses import asdict

    from .. import models
    from ..bench.run import machine, run_backend
    from ..ui.render import RichReporter

    started = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    results = []
    reporter = RichReporter(err)
    for kind in kinds:
        if kind not in ("llama.cpp", "transformers", "reference"):
            raise UsageError(f"unknown backend {kind!r}")
        spec = model or models.DEFAULT_MODEL
        options = {"n_ctx": n_ctx, "n_threads": threads} if kind != "reference" else {}
        backend = models.load(spec, kind, reporter, **options)
        try:
            with err.status("") as status:
                result = run_backend(
                    backend, spec if kind != "reference" else "reference", tasks, repeats,
                    with_peers=with_peers, seeds=seeds, progress=lambda s: status.update(s),
                )  # fmt: skip
        finally:
            backend.close()
        results.append(result.to_dict())
    return {
        "command": _command(),
        "started": started,
        "machine": machine(),
        "repeats": repeats,
        "seeds": seeds,
        "tasks": [asdict(t) for t in tasks],
        "results": results,
    }


def _quality(configs, quick, task_ids, n_ctx, threads, as_json, markdown, from_json, err) -> None:
    from dataclasses import asdict

    from rich.console import Console

    from .. import models
    from ..bench import quality_report as qr
    from ..bench.corpus import load_tasks, select
    from ..bench.quality_run import Config, QualityRun, run_all, scored
    from ..bench.run import machine
    from ..ui.render import RichReporter

    if from_json:
        data = qr.merge([json.loads(p.read_text()) for p in from_json])
    else:
        tasks = [t for t in select(load_tasks(), quick=quick, ids=task_ids) if scored(t)]
        if not tasks:
            raise UsageError(f"no scored task matches {task_ids!r}")
        try:
            chosen = [Config.parse(c.strip()) for c in (configs or QUALITY_CONFIGS).split(",") if c.strip()]
        except ValueError as exc:
            raise UsageError(str(exc)) from exc
        reporter = RichReporter(err)

        def load(config):
            options = {"n_ctx": n_ctx, "n_threads": threads}
            return models.load(config.model, config.backend, reporter, **options)

        started = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
        with err.status("") as status:
            runs = run_all(chosen, tasks, load=load, progress=lambda s: status.update(s))
        data = {
            "kind": "quality", "command": _command(), "started": started, "machine": machine(),
            "default": models.DEFAULT_MODEL, "tasks": [asdict(t) for t in tasks],
            "runs": [asdict(r) for r in runs],
        }  # fmt: skip
    if as_json:
        typer.echo(json.dumps(data, indent=1))
    else:
        runs = [QualityRun(**r) for r in data["runs"]]
        out = Console()
        out.print(qr.rich_table(runs))
        heldout = {t["id"] for t in data["tasks"] if t.get("heldout")}
        for goal, measured, met in qr.goals(runs, data.get("default"), heldout):
            out.print(f"  {'met' if met else 'NOT met'}: {goal}: {measured}")
    if markdown:
        _write_report(markdown, data, qr, err)


def _structured(options, as_json, markdown, from_json, err) -> None:
    from dataclasses import asdict

    from rich.console import Console

    from .. import models
    from ..bench import structured_report as sr
    from ..bench.run import machine, versions
    from ..bench.structured import load_structured, run_structured
    from ..ui.render import RichReporter

    task_ids, backends, model, repeats, with_peers, n_ctx, threads = options
    if from_json:
        data = sr.merge([json.loads(p.read_text()) for p in from_json])
    else:
        wanted = [w.strip() for w in (task_ids or "").split(",") if w.strip()]
        tasks = [t for t in load_structured() if not wanted or any(w in t.id for w in wanted)]
        if not tasks:
            raise UsageError(f"no structured task matches {task_ids!r}")
        spec = model or models.DEFAULT_MODEL
        started = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
        results = []
        for kind in (backends or "llama.cpp,transformers").split(","):
            if kind not in ("llama.cpp", "transformers", "reference"):
                raise UsageError(f"unknown backend {kind!r}")
            opts = {"n_ctx": n_ctx, "n_threads": threads} if kind != "reference" else {}
            backend = models.load(spec, kind, RichReporter(err), **opts)
            try:
                with err.status("") as status:
                    _, runs = run_structured(
                        backend, tasks, 1 if repeats is None else repeats, with_peers=with_peers,
                        progress=lambda s: status.update(s),
                    )  # fmt: skip
            finally:
                backend.close()
            about = {"backend": kind, "model": spec if kind != "reference" else "reference"}
            about |= {"versions": versions(kind), "device": backend.capabilities.device}
            results.append({**about, "runs": [asdict(r) for r in runs]})
        data = {
            "kind": "structured", "command": _command(), "started": started, "machine": machine(),
            "model": spec, "repeats": 1 if repeats is None else repeats,
            "tasks": [asdict(t) for t in tasks], "results": results,
        }  # fmt: skip
    if as_json:
        typer.echo(json.dumps(data, indent=1))
    else:
        out = Console()
        for result in data["results"]:
            for goal, measured, met in sr.goals(result, data["tasks"]):
                out.print(f"  {result['backend']}: {'met' if met else 'NOT met'}: {goal}: {measured}")
    if markdown:
        _write_report(markdown, data, sr, err)


def _e2e(task_ids, repeats, no_peers, as_json, markdown, from_json, err) -> None:
    from dataclasses import asdict

    from rich.console import Console

    from .. import models
    from ..bench import e2e
    from ..bench.corpus import load_tasks, select
    from ..bench.run import machine

    if from_json:
        try:
            data = e2e.merge([json.loads(p.read_text()) for p in from_json])
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    else:
        tasks = select(load_tasks(), quick=False, ids=task_ids or e2e.TASKS)
        if not tasks:
            raise UsageError(f"no task matches {task_ids!r}")
        configs = [c for c in e2e.CONFIGS if not (no_peers and c == "lookup")]
        started = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
        rounds = 3 if repeats is None else repeats
        with err.status("") as status:
            runs = e2e.run_all(tasks, configs, rounds, progress=lambda s: status.update(s))
        data = {
            "kind": "e2e", "command": _command(), "started": started, "machine": machine(),
            "model": models.DEFAULT_MODEL, "repeats": rounds, "tasks": [asdict(t) for t in tasks],
            "runs": e2e.to_dict(runs),
        }  # fmt: skip
    if as_json:
        typer.echo(json.dumps(data, indent=1))
    else:
        for goal, measured, met in e2e.goals(data):
            Console().print(f"  {'met' if met else 'NOT met'}: {goal}: {measured}")
    if markdown:
        _write_report(markdown, data, e2e, err)


def _write_report(markdown: Path, data: dict, module, err) -> None:
    """The report (module.markdown), its chart (module.chart) beside it as .png, and the
    raw runs as .json, which --from renders again."""
    png, raw = markdown.with_suffix(".png"), markdown.with_suffix(".json")
    raw.write_text(json.dumps(data, indent=1) + "\n")
    data = {**data, "rendered": _command()}  # the step that wrote the report, for its header
    drawn = module.chart(data, png)
    markdown.write_text(module.markdown(data, png.name if drawn else None))
    err.print(f"wrote {', '.join(map(str, [markdown, *([png] if drawn else []), raw]))}")


def _command() -> str:
    """How this run was asked for, for the report (tests call the command in-process)."""
    named = Path(sys.argv[0]).name == "pedit" or sys.argv[0].endswith("pedit/__main__.py")  # python -m
    return "pedit " + shlex.join(sys.argv[1:]) if named and sys.argv[1:2] == ["bench"] else "pedit bench"
