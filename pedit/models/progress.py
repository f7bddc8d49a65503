"""How long-running model work (hashing, assembly, conversion, loading) reports its
progress, UI-free: as steps the work yields, which a shell shows (ui/render.shown) or
drops (`quietly`).

    size = yield from task(Began("verifying a.gguf", total=n), hashing(path))

Began opens a task (total None: no measurable progress, a spinner), Advanced says how far
it is, Ended closes it (ok False: it failed; the exception follows, or was handled by the
work itself).
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import TypeVar

from ..events import finish

R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class Began:
    description: str
    total: int | None = None
    unit: str = "bytes"


@dataclass(frozen=True, slots=True)
class Advanced:
    done: int


@dataclass(frozen=True, slots=True)
class Ended:
    ok: bool = True


Step = Began | Advanced | Ended


def task(began: Began, body: Generator[Step, None, R]) -> Generator[Step, None, R]:
    """`body` as one task: Began, its own steps, then Ended (ok False if it raised)."""
    yield began
    try:
        value = yield from body
    except Exception:
        yield Ended(ok=False)
        raise
    yield Ended()
    return value


def running(work: Callable[[], R]) -> Generator[Step, None, R]:
    """`work()` as a task's body with no measurable progress."""
    return work()
    yield  # a generator: the task's Began comes before work() runs


def quietly(work: Generator[Step, None, R]) -> R:
    """`work` run to its end, its steps unseen; its value."""
    return finish(work)
