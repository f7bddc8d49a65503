"""A summary streamed to standard output as the model writes it."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator

from ..events import Event, TextReceived, TokenGenerated, TokensAccepted


class StrippedStream:
    """A summary's text to stdout as it is generated, written as `text.strip() + "\\n"`
    (what wholefile.summarize returns) reads: leading whitespace dropped, trailing whitespace
    held back until more text follows it."""

    def __init__(self, write: Callable[[str], object] | None = None):
        self._write = write or _stdout
        self.started, self.held = False, ""

    def tee(self, events: Iterator[Event]) -> Iterator[Event]:
        for ev in events:
            if isinstance(ev, TokenGenerated | TokensAccepted | TextReceived):
                self.write(ev.text)
            yield ev

    def write(self, text: str) -> None:
        if not self.started:
            text = text.lstrip()
            if not text:
                return
            self.started = True
        body = text.rstrip()
        if body:
            self._write(self.held + body)
            self.held = text[len(body) :]
        else:
            self.held += text

    def close(self) -> None:
        self._write("\n")


def _stdout(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()
