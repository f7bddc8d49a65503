"""A model loaded for the shells (CLI, TUI, hook, server): the backend the settings name,
its cost model, and whether it runs on a server.

The cost model (the planner's, engine/costmodel.py) is measured when there is something to
plan: speculation on (speculate != "off") and a local backend (one that gives logits; a
server's loop plans nothing). It comes from the user cache (calibration.measure_cost) when
this model ran on this machine before; the passes this process makes go back into that
cache when the model is closed (calibration.keep).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass

from .. import models
from ..backends import AnyBackend, Backend
from ..engine import grammar
from ..engine.costmodel import CostModel
from ..engine.edit import local
from ..machine import calibration, vocabulary
from ..models.progress import Began, Step, running, task
from .config import Settings

MEASURING = "timing the model (once per model and machine)"


@dataclass(frozen=True, kw_only=True)
class Loaded:
    backend: AnyBackend
    cost: CostModel | None = None  # None: nothing to plan (speculation off, or a server)
    remote: bool = False  # a server's model: text back, not logits (engine/remote.py's loop)
    seconds: float = 0.0  # the load (a server's: connecting and listing its models)

    def close(self) -> None:
        try:
            calibration.keep(self.cost)  # what this run's passes cost, for the next run's plans
        finally:
            self.backend.close()


def load_with_cost(
    settings: Settings,
    *,
    api_key: str | None = None,
    model: str | None = None,
    beside: Callable[[], object] | None = None,
) -> Generator[Step, None, Loaded]:
    """`model` (default: the settings' model) on the settings' backend, with its cost model;
    its steps (models/progress.py) are the load's and a measurement's (not a cost the
    cache has), for the shell to show or drop (quietly);
    `api_key`: a server's (-b openai), else models.load_remote reads the environment;
    `beside`: work done in a thread while the model loads (llama.cpp's load holds no GIL),
    joined before the cost model is timed, so no timing shares the cores with it."""
    t0 = time.perf_counter()
    helper = _start(beside)
    try:
        backend = yield from models.load(
            model or settings.model, settings.backend,
            n_ctx=settings.n_ctx, n_threads=settings.threads, base_url=settings.base_url,
            api_key=api_key, timeout=settings.timeout, deadline=settings.deadline,
        )  # fmt: skip
    finally:
        if helper is not None:
            helper.join()
    seconds = time.perf_counter() - t0
    remote = not local(backend)  # the shells' "is it a server?", answered by the engine's one place
    if not remote:  # a grammar's tokenizer is built from the token table cached on disk
        grammar.provide_tokens(backend, vocabulary.table)
    try:
        cost = (yield from _cost(backend)) if settings.speculate != "off" and not remote else None
    except BaseException:
        backend.close()
        raise
    return Loaded(backend=backend, cost=cost, remote=remote, seconds=seconds)


def _start(work: Callable[[], object] | None) -> threading.Thread | None:
    """`work` running in a daemon thread; what it raises is dropped: it is only done early,
    and whoever needs it meets the error again where it can be reported."""
    if work is None:
        return None

    def quiet() -> None:
        with contextlib.suppress(Exception):  # met again on first use
            work()

    thread = threading.Thread(target=quiet, name="pedit-beside-load", daemon=True)
    thread.start()
    return thread


def _cost(backend: Backend) -> Generator[Step, None, CostModel]:
    """The cached cost model, or one measured now (a task only then)."""
    found = calibration.cached_cost(backend)
    if found is not None:
        return found
    return (yield from task(Began(MEASURING, None), running(lambda: calibration.measure_cost(backend))))
