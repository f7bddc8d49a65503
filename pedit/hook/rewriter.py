"""The hook's model: loaded on first need, closed at the end, and the rewrite of a staged
text under the commit's deadline: only the blocks with staged changes when they are a
small part of the file (changed_spans), else the whole file."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import replace

from .. import models
from ..app.chunking import blocks
from ..app.templates import templates
from ..engine.sampling import Sampling
from ..errors import ModelError, PeditError
from ..events import Event, Finished, Stats, drain
from . import git
from .rules import HookConfig, Rule

WHOLE_FILE_SHARE = 0.5  # rewrite the whole file when the changed blocks are more than this


class OverBudget(Exception):
    pass


class Rewriter:
    """The model, loaded on first use, and the rewrite of one text under the deadline."""

    def __init__(self, settings, config: HookConfig, deadline: float, notify: Callable[[str], None]):
        self.settings, self.config, self.deadline, self.notify = settings, config, deadline, notify
        self._backend = None
        self._cost = None

    @property
    def model(self) -> str:
        return str(self.settings.get("model"))

    @property
    def backend_name(self) -> str:
        return str(self.settings.get("backend"))

    @property
    def jobs(self) -> int:
        """Files whose model runs go at once: `jobs` (default 4) on a server, 1 on a local model."""
        if self.backend_name != "openai":
            return 1
        from ..app.config import JOBS_REMOTE

        return self.settings.get("jobs") or JOBS_REMOTE

    def load(self):
        """The backend, loaded on first use (and its cost model, for a local one)."""
        if self._backend is None:
            from ..app.calibration import measure_cost

            kind = "" if self.backend_name == "auto" else f" ({self.backend_name})"
            self.notify(f"pedit: loading {self.model}{kind}")
            s = self.settings
            try:
                self._backend = models.load(
                    self.model, s.get("backend"), n_ctx=s.get("n_ctx"), n_threads=s.get("threads"),
                    base_url=s.get("base_url"), timeout=s.get("timeout"), deadline=s.get("deadline"),
                )  # fmt: skip
            except PeditError as exc:  # an unknown model is a setup problem too: exit 3
                raise ModelError(exc.message) from exc
            if s.get("speculate") != "off" and self._backend.capabilities.logits:
                self._cost = measure_cost(self._backend)
        return self._backend

    def close(self) -> None:
        if self._backend is not None:
            self._backend.close()

    def _render(self, events: Iterator[Event], label: str) -> Finished:
        def in_budget(_: Event) -> None:
            if time.monotonic() > self.deadline:
                raise OverBudget(label)

        return drain(events, in_budget)

    def rewrite(
        self, text: str, name: str, rule: Rule, changed: list[git.Lines] | None
    ) -> tuple[str, list[Stats]]:
        from ..app.jobs import EngineOptions, Job

        backend = self.load()
        c, s = self.config, self.settings
        sampling = Sampling(temperature=c.temperature, seed=c.seed)
        options = EngineOptions(
            sampling=sampling, speculate=s.get("speculate"), draft_max=s.get("draft_max"), cost=self._cost,
            keep_bias=s.get("keep_bias"), spelling=s.get("spelling"),
        )  # fmt: skip
        # the hook judges a file whole and reports a run it could not use ("not fixed"), so
        # its pieces are not kept one by one as the CLI's are (jobs.Job.plain_rewrite)
        template = replace(templates(s.templates)[rule.command], judged=False)
        job = Job(
            backend, template, rule.instruction, options, rule.system, chunk_tokens=s.get("chunk_tokens")
        )
        out = job.rewrite(text, name, self._render, changed_spans(text, changed))
        return out.text, out.stats


def changed_spans(text: str, changed: list[git.Lines] | None) -> list[tuple[int, int]] | None:
    """Character spans of the natural blocks (chunking.blocks) holding a staged change,
    adjacent ones joined; None when the whole file should be rewritten (a new file, or
    changes in more than WHOLE_FILE_SHARE of it)."""
    if changed is None:
        return None
    spans, line, offset = [], 0, 0
    for block in blocks(text):
        n = block.count("\n") or 1
        hit = any(
            (r.start < line + n and r.start + r.count > line) if r.count else (line <= r.start <= line + n)
            for r in changed
        )
        if hit:
            if spans and spans[-1][1] == offset:
                spans[-1] = (spans[-1][0], offset + len(block))
            else:
                spans.append((offset, offset + len(block)))
        line += block.count("\n")
        offset += len(block)
    if sum(e - s for s, e in spans) > WHOLE_FILE_SHARE * len(text):
        return None
    return spans
