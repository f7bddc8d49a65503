"""`pedit bench`'s options: the flags' types and the one BenchOptions they become."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer

from ..machine.cpus import CPUS

QUALITY_CONFIGS = ",".join(
    ["spellcheck", "qwen2.5-coder-1.5b", "qwen2.5-coder-1.5b+plain", "qwen2.5-coder-0.5b"]
    + ["qwen2.5-coder-0.5b@transformers"]
)
KINDS = ("llama.cpp", "transformers", "reference")  # the backends bench measures

# The options, one alias each (as cli/options.py), in the order --help lists them.
Quick = Annotated[
    bool, typer.Option(help="The quick subset of tasks, 1 repeat, llama.cpp only.", show_default=False)
]
Quality = Annotated[
    bool,
    typer.Option(
        help="Score the edits instead: every task with a known answer, on --configs (docs/quality.md).",
        show_default=False,
    ),
]
Structured = Annotated[
    bool,
    typer.Option(
        help="Measure structured output instead: JSON edits, extraction into schemas and a regex "
        "task, constrained, coalesced and drafted, against the peers (docs/structured-bench.md).",
        show_default=False,
    ),
]
EndToEnd = Annotated[
    bool,
    typer.Option(
        "--e2e",
        help="Time the default commands end to end instead: a new process per run, the default "
        "model, against --speculate off, llama-cpp-python's prompt lookup, and pedit serve and "
        "llama.cpp's llama-server on the same requests (docs/e2e.md).",
        show_default=False,
    ),
]
Configs = Annotated[
    str | None,
    typer.Option(
        help="With --quality: comma-separated MODEL[@BACKEND][+VARIANT], or spellcheck. "
        f"[default: {QUALITY_CONFIGS}]"
    ),
]
TaskIds = Annotated[
    str | None,
    typer.Option("--tasks", help="Only the tasks whose id contains one of these (comma-separated); "
                 "with --e2e, `small` names its small cases and edit (run with every default run)."),
]
Backends = Annotated[
    str | None, typer.Option(help="Comma-separated. [default: llama.cpp,transformers; --quick: llama.cpp]")
]
Model = Annotated[
    str | None,
    typer.Option("-m", "--model", help="The model for every backend. [default: qwen2.5-coder-1.5b]"),
]
Repeats = Annotated[
    int | None,
    typer.Option(min=0, help="Runs of each config. [default: 2; --quick: 1; 0: only the --seeds check]"),
]
Seeds = Annotated[
    int,
    typer.Option(
        min=0,
        help="Also sample (T=0.7, top-p 0.95) with this many seeds, plain and pedit, and compare the "
        "outputs.",
    ),
]
NoPeers = Annotated[
    bool,
    typer.Option(help="Skip llama-cpp-python's and transformers' own prompt lookup.", show_default=False),
]
Baseline = Annotated[
    Path | None,
    typer.Option(
        dir_okay=False,
        exists=True,
        help="With --e2e: also time the same commands run by this Python, another installation of "
        "pedit (an earlier checkout's .venv/bin/python), interleaved with this one's.",
    ),
]
NCtx = Annotated[int, typer.Option(min=256)]
Threads = Annotated[
    int | None, typer.Option(min=1, max=CPUS, help=f"CPU threads, at most {CPUS} here. [default: all usable]")
]
AsJson = Annotated[
    bool, typer.Option("--json", help="Print the runs and ratios as JSON (no table).", show_default=False)
]
Markdown = Annotated[
    Path | None,
    typer.Option(
        dir_okay=False,
        help="Write the report here (docs/benchmarks.md), its chart beside it (.png) and the raw runs "
        "(.json).",
    ),
]
Readme = Annotated[
    Path | None,
    typer.Option(
        dir_okay=False,
        exists=True,
        help="With --e2e and --markdown: also write the run's small table into this README, between "
        "its '<!-- e2e table -->' and '<!-- /e2e table -->' lines.",
    ),
]
FromJson = Annotated[
    list[Path] | None,
    typer.Option(
        "--from",
        dir_okay=False,
        exists=True,
        help="Render saved runs (the .json --markdown writes; repeat to merge, e.g. one per backend).",
    ),
]


@dataclass(frozen=True, kw_only=True)
class BenchOptions:
    """What the command was asked (the mode aside), handed whole to the mode that runs."""

    quick: bool = False
    configs: str | None = None  # --quality's; None: QUALITY_CONFIGS
    task_ids: str | None = None  # --tasks
    backends: str | None = None  # comma-separated; None: the mode's default
    model: str | None = None  # None: models.DEFAULT_MODEL
    repeats: int | None = None  # None: the mode's default
    seeds: int = 0
    with_peers: bool = True  # not --no-peers
    baseline: Path | None = None  # --e2e's other installation (its Python)
    n_ctx: int = 4096
    threads: int | None = None
    as_json: bool = False
    markdown: Path | None = None
    readme: Path | None = None  # --e2e's: the README whose table (e2e_report.readme) is written
    from_json: tuple[Path, ...] = ()  # --from: saved runs to render instead of measuring
