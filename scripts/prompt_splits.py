"""One prompt read in different cuts into batches, then plain greedy decoding: on a real
backend each cut is rounded differently, and a near-tie can go the other way (the reason
a command reads its prompt's start alone, engine/decode.hold; docs/engine.md).

    python scripts/prompt_splits.py [-m MODEL] [--file pedit/bench/corpus/walden.txt]
"""

from __future__ import annotations

import argparse
from itertools import pairwise
from pathlib import Path

from pedit import models
from pedit.app.jobs import Job
from pedit.app.options import EngineOptions
from pedit.app.templates import BUILTIN
from pedit.engine.decode import DecodeOptions, generate
from pedit.engine.prompt import build_prompt
from pedit.engine.sampling import Sampling
from pedit.events import drain
from pedit.models.progress import quietly
from pedit.tools.options import ToolOptions


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-m", "--model", default=models.DEFAULT_MODEL)
    ap.add_argument("--file", type=Path, default=Path("pedit/bench/corpus/walden.txt"))
    a = ap.parse_args()
    backend = quietly(models.load(a.model))
    job = Job(backend, BUILTIN["fix"], None, EngineOptions(tools=ToolOptions(spelling=False)))
    prompt = build_prompt(backend, job.request(a.file.read_text(encoding="utf-8"), a.file.name)).tokens
    stem = len(job.stem(prompt, "rewrite"))
    cuts = {
        "whole": [],
        "start, then the rest": [stem],
        "all but the last token, then it": [len(prompt) - 1],
        "start, the rest, the last token": [stem, len(prompt) - 1],
    }
    options = DecodeOptions(2 * len(prompt), Sampling(temperature=0))
    answers = {}
    for name, at in cuts.items():
        backend.truncate(0)
        for a0, a1 in pairwise([0, *at]):  # the cuts before the prefill reads the rest
            backend.eval(prompt[a0:a1])
        answers[name] = tuple(drain(generate(backend, prompt, options)).tokens)
        print(f"{name}: {len(answers[name])} tokens")
    n = len(set(answers.values()))
    print(f"{n} different answers from {len(cuts)} cuts ({len(prompt)}-token prompt)")


if __name__ == "__main__":
    main()
