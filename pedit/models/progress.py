"""How long-running model work (assembly, conversion, loading) reports progress, UI-free.

`reporter.task(description, total, unit)` is a context manager yielding `update(done)`;
`total=None` means "no measurable progress" (a spinner). The CLI implements it with rich
progress bars, tests and the hook with nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Protocol


class Reporter(Protocol):
    def task(self, description: str, total: int | None = None, unit: str = "bytes"): ...


class _NullReporter:
    @contextmanager
    def task(
        self, description: str, total: int | None = None, unit: str = "bytes"
    ) -> Iterator[Callable[[int], None]]:
        yield lambda done: None


NULL_REPORTER: Reporter = _NullReporter()
