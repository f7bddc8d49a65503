"""The live view of a run on a terminal: the text as it streams, who wrote each token, and
a status line. It consumes the decoder's events and returns the Finished one.

Each token in its provenance style (styles.py). Completed lines settle into the
scrollback; only the line being written and the status line are redrawn (at most 20 times
a second).
"""

from __future__ import annotations

import time
from collections.abc import Iterator

from rich.console import Console, Group
from rich.live import Live
from rich.style import Style
from rich.text import Text

from ..events import Event, Finished, Progress, Stats, TextReceived, TokenGenerated, TokensAccepted, drain
from .styles import STYLES, speedup_text


def status(stats: Stats | None, tokens: int, elapsed: float, expected: int | None, label: str) -> Text:
    """tokens · tok/s · speedup · accepted/rejected · passes · elapsed · ETA."""
    rate = tokens / elapsed if elapsed > 0 else 0.0
    parts = [f"{label}: {tokens} tokens", f"{rate:.0f} tok/s"]
    if stats is not None:
        if stats.speedup:
            overall = speedup_text(stats.overall_speedup)
            parts.append(f"{speedup_text(stats.speedup)} plain ({overall} with the prompt)")
        accepted, rejected = stats.accepted_prediction_tokens, stats.rejected_prediction_tokens
        parts.append(f"drafts {accepted} accepted / {rejected} rejected")
        if stats.coalesced_tokens:
            parts.append(f"{stats.coalesced_tokens} forced")
        parts.append(f"{stats.forward_passes} passes")
    parts.append(f"{elapsed:.1f}s")
    if expected and rate > 0 and tokens < expected:
        parts.append(f"ETA {(expected - tokens) / rate:.0f}s")
    return Text(" · ".join(parts), style="dim")


class LiveView:
    """Render one run's events on `console` (stderr). show_text=False: the status only
    (the text goes elsewhere, e.g. to stdout with --stdout)."""

    def __init__(self, console: Console, *, show_text: bool = True, expected: int | None = None):
        self.console, self.show_text, self.expected = console, show_text, expected

    def run(self, events: Iterator[Event], label: str) -> Finished:
        if not self.console.is_terminal:
            return drain(events)
        line = Text()
        stats, tokens, start, finished = None, 0, time.perf_counter(), None
        with Live(console=self.console, refresh_per_second=20, transient=True) as live:
            for ev in events:
                if isinstance(ev, TokenGenerated | TokensAccepted):
                    kind = "generated" if isinstance(ev, TokenGenerated) else ev.source
                    tokens += 1 if isinstance(ev, TokenGenerated) else len(ev.tokens)
                    if self.show_text:
                        line = self._add(live, line, ev.text, STYLES.get(kind, STYLES["generated"]))
                elif isinstance(ev, TextReceived):  # from a server: its own token count comes last
                    tokens += 1
                    if self.show_text:
                        line = self._add(live, line, ev.text, STYLES.get(ev.source or "", STYLES["remote"]))
                elif isinstance(ev, Progress):
                    stats = ev.stats
                elif isinstance(ev, Finished):
                    finished = ev
                    break
                elapsed = time.perf_counter() - start
                bar = status(stats, tokens, elapsed, self.expected, label)
                live.update(Group(line, bar) if self.show_text else bar)
        if self.show_text and line.plain:
            self.console.print(line)
        if finished is None:
            raise AssertionError("the decoder ended without a Finished event")
        return finished

    def _add(self, live: Live, line: Text, text: str, style: Style) -> Text:
        """Append text; print every completed line above the live area."""
        *done, rest = text.split("\n")
        for piece in done:
            line.append(piece, style)
            live.console.print(line, soft_wrap=True)
            line = Text()
        line.append(rest, style)
        return line
