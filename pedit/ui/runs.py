"""A job's stream (app/outcome.py) consumed by a shell: each run's events, from its Started
to its Finished, shown as the shell shows them (the live view, a budget's check, nothing),
and the job's outcome returned."""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator

from ..app.outcome import Answering, Outcome, Started
from ..events import Event, Finished, drain

Show = Callable[[Iterator[Event], str], Finished]  # one run's events and label -> its Finished


def quietly(events: Iterator[Event], _label: str) -> Finished:
    return drain(events)


def answer(stream: Answering, show: Show = quietly) -> Outcome:
    """The job's outcome, each of its runs shown by `show` (which may raise to stop the
    job: the stream is closed either way)."""
    try:
        while True:
            try:
                ev = next(stream)
            except StopIteration as done:
                return done.value
            if isinstance(ev, Started):
                show(_one_run(stream), ev.label)
    finally:
        stream.close()


def _one_run(stream: Answering) -> Generator[Event, None, None]:
    """The run's events, up to and with its Finished."""
    for ev in stream:
        if isinstance(ev, Started):
            raise RuntimeError("a run ended without a Finished event")
        yield ev
        if isinstance(ev, Finished):
            return
