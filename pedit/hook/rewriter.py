"""The hook's model: the resident one (resident/: no load in the commit, none at all while
it is resident), else one loaded here on first need and closed at the end; and the rewrite
of a staged text under the commit's deadline: only the blocks with staged changes when they
are a small part of the file (changed_spans), else the whole file."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace

from ..app.chunking import blocks
from ..app.config import Settings
from ..app.loading import Loaded, load_with_cost
from ..engine.sampling import Sampling
from ..errors import Cancelled, ModelError, PeditError
from ..events import Event, Finished, Stats, drain
from ..models.progress import quietly
from ..resident.client import Resident, ResidentLost, ResidentUnavailable, resident_for
from ..resident.protocol import Request
from . import git
from .rules import HookConfig, Rule

WHOLE_FILE_SHARE = 0.5  # rewrite the whole file when the changed blocks are more than this


class OverBudget(Exception):
    pass


class Rewriter:
    """The model, loaded on first use, and the rewrite of one text under the deadline."""

    def __init__(
        self, settings: Settings, config: HookConfig, deadline: float, notify: Callable[[str], None]
    ):
        self.settings, self.config, self.deadline, self.notify = settings, config, deadline, notify
        self.stopped = threading.Event()  # set: the runs in flight end at their next event
        self._loaded: Loaded | None = None
        load = resident_for(settings)
        said = lambda line: notify(f"pedit: {line}")  # noqa: E731
        self._resident = Resident(load, settings.keep_alive, log=said) if load else None

    @property
    def model(self) -> str:
        return self.settings.model

    @property
    def backend_name(self) -> str:
        return self.settings.backend

    @property
    def jobs(self) -> int:
        """Files whose model runs go at once: `jobs` (default 4) on a server, 1 on a local
        model; known from the settings, before anything loads."""
        return self.settings.files_at_once(self.settings.on_server)

    def load(self) -> Loaded:
        """The model, loaded on first use (with its cost model, for a local one)."""
        if self._loaded is None:
            kind = "" if self.backend_name == "auto" else f" ({self.backend_name})"
            self.notify(f"pedit: loading {self.model}{kind}")
            try:
                self._loaded = quietly(load_with_cost(self.settings))
            except PeditError as exc:  # an unknown model is a setup problem too: exit 3
                raise ModelError(exc.message) from exc
        return self._loaded

    def stop(self) -> None:
        """End the runs in flight (other threads') at their next event."""
        self.stopped.set()

    def close(self) -> None:
        if self._loaded is not None:
            self._loaded.close()

    def _show(self, events: Iterator[Event], label: str) -> Finished:
        def in_budget(_: Event) -> None:
            if self.stopped.is_set():
                raise Cancelled
            if time.monotonic() > self.deadline:
                raise OverBudget(label)

        return drain(events, in_budget)

    def rewrite(
        self, text: str, name: str, rule: Rule, changed: list[git.Lines] | None
    ) -> tuple[str, list[Stats]]:
        from ..app.jobs import Job
        from ..app.options import EngineOptions
        from ..app.refactor import rewrite
        from ..engine.options import EditOptions
        from ..ui.runs import answer

        sampling = Sampling(temperature=self.config.temperature, seed=self.config.seed)
        options = self.settings.engine_options(EngineOptions(edit=EditOptions(sampling=sampling)))
        # the hook judges a file whole and reports a run it could not use ("not fixed"), so
        # its pieces are not kept one by one as the CLI's are (app/wholefile.rewrite)
        template = replace(self.settings.prompt_templates()[rule.command], judged=False)
        spans = changed_spans(text, changed)
        if self._resident is not None and self._loaded is None:
            req = Request(
                kind="rewrite", template=template, instruction=rule.instruction, options=options,
                system=rule.system, force=False, chunk_tokens=self.settings.chunk_tokens, text=text,
                name=name, count=False, keep_alive=self.settings.keep_alive, spans=spans,
            )  # fmt: skip
            try:
                out = answer(self._resident.begin(req).stream, self._show)
                return out.text, out.stats
            except ResidentUnavailable as exc:  # this commit loads its own model, once
                self.notify(f"pedit: {exc}; loading the model in this process")
                self._resident = None
            except ResidentLost as exc:
                self.notify(f"pedit: the resident model stopped in the middle of {name} ({exc}); runs here")
                self._resident = None
        loaded = self.load()
        job = Job(
            backend=loaded.backend, template=template, instruction=rule.instruction,
            options=options.costed(loaded.cost), system=rule.system, chunk_tokens=self.settings.chunk_tokens,
        )  # fmt: skip
        out = answer(rewrite(job, text, name, spans), self._show)
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
