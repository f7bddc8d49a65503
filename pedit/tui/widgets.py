"""The session's widgets: the document (file, stream, or diff with hunks to pick), the
live figures, the history. They render what they are given; no decoding here."""

from __future__ import annotations

from rich.console import Group
from rich.syntax import Syntax
from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Input, Static

from ..app.hunks import Hunk, hunks, merge
from ..app.session import TurnResult
from ..engine.prompt import language
from ..events import Stats
from ..ui.styles import STYLES, speedup_text

STREAM_TAIL = 20_000  # characters of streamed text kept on screen (the rest is in the answer)


class Document(VerticalScroll, can_focus=True):
    """The working text (syntax-highlighted), the answer as it streams, or the answer as a
    diff whose hunks the user picks (space), then applies (enter) or takes whole (a). The
    keys are the app's (PeditApp.VERDICT): it decides on them in the order they come."""

    def __init__(self, filename: str, **kw) -> None:
        super().__init__(**kw)
        self.filename = filename
        self.mode = "file"
        self.body = Static(id="body")
        self.old = self.new = ""
        self.hunks: list[Hunk] = []
        self.chosen: set[int] = set()
        self.cursor = 0
        self._stream = Text()

    def compose(self):
        yield self.body

    # --- modes ---------------------------------------------------------------------------

    def show_file(self, text: str) -> None:
        self.mode = "file"
        lexer = language(self.filename) or "text"
        self.body.update(
            Syntax(
                text or " ",
                lexer,
                line_numbers=True,
                word_wrap=True,
                theme="ansi_dark" if self.app.current_theme.dark else "ansi_light",
            )
        )

    def start_stream(self) -> None:
        self.mode = "stream"
        self._stream = Text()
        self.body.update(self._stream)

    def add_pieces(self, pieces: list[tuple[str, str]]) -> None:
        for text, kind in pieces:
            self._stream.append(text, STYLES.get(kind))
        if len(self._stream) > STREAM_TAIL:
            self._stream = self._stream[-STREAM_TAIL:]
        self.body.update(self._stream)
        self.scroll_end(animate=False)

    def show_diff(self, old: str, new: str) -> None:
        self.mode = "diff"
        self.old, self.new = old, new
        self.hunks = hunks(old, new)
        self.chosen = set(range(len(self.hunks)))
        self.cursor = 0
        self._render_diff()

    @property
    def picked_text(self) -> str:
        return merge(self.old, self.hunks, self.chosen)

    def _render_diff(self) -> None:
        if not self.hunks:
            self.body.update(
                Text("The answer is the same as the text: nothing to change (r to close).", "dim")
            )
            return
        parts = [
            Text(
                f"{len(self.hunks)} change(s), {len(self.chosen)} picked · space toggles · enter applies"
                " the picked · a accepts all · r rejects · e edits the instruction",
                "dim",
            )
        ]
        for i, h in enumerate(self.hunks):
            mark = "[x]" if i in self.chosen else "[ ]"
            head = Text(f"{'>' if i == self.cursor else ' '} {mark} line {h.old_start + 1}", "bold")
            lines = Text()
            for line in h.old:
                lines.append("- " + line.rstrip("\n") + "\n", "red")
            for line in h.new:
                lines.append("+ " + line.rstrip("\n") + "\n", "green")
            parts += [head, lines]
        self.body.update(Group(*parts))

    # --- diff actions --------------------------------------------------------------------

    def action_toggle(self) -> None:
        if self.mode == "diff" and self.hunks:
            self.chosen ^= {self.cursor}
            self._render_diff()

    def action_next_hunk(self) -> None:
        if self.mode == "diff" and self.hunks:
            self.cursor = min(self.cursor + 1, len(self.hunks) - 1)
            self._render_diff()
        else:
            self.scroll_down()

    def action_previous_hunk(self) -> None:
        if self.mode == "diff" and self.hunks:
            self.cursor = max(self.cursor - 1, 0)
            self._render_diff()
        else:
            self.scroll_up()

    def verdict(self, name: str) -> tuple[str | None, bool] | None:
        """What a verdict key keeps: (the text, None to reject; whether to retry), or None
        for a key that moves within the diff."""
        if name in ("toggle", "next_hunk", "previous_hunk"):
            getattr(self, f"action_{name}")()
            return None
        return {"accept_all": (self.new, False), "apply": (self.picked_text, False), "reject": (None, False),
                "retry": (None, True)}[name]  # fmt: skip


def figures(
    stats: Stats | None, tokens: int, elapsed: float, ttft: list[tuple[int, float, int]], model: str
) -> Text:
    """The live panel: model, tok/s, accepted / rejected, passes, speedup, elapsed, and the
    time to first token of each turn (with how many prompt tokens came from the cache)."""
    t = Text()
    t.append(f"{model}\n", "bold")
    rate = tokens / elapsed if elapsed > 0 else 0.0
    t.append(f"{tokens} tokens  {rate:.1f} tok/s\n")
    if stats is not None:
        t.append(f"accepted {stats.accepted_prediction_tokens}", STYLES["predicted"])
        t.append(f" / rejected {stats.rejected_prediction_tokens}\n")
        if stats.coalesced_tokens:
            t.append(f"forced {stats.coalesced_tokens}\n", STYLES["grammar"])
        t.append(f"{stats.forward_passes} forward passes\n")
        t.append(f"speedup {speedup_text(stats.speedup)}\n" if stats.speedup else "speedup -\n")
    t.append(f"elapsed {elapsed:.1f}s\n")
    for turn, seconds, reused in ttft[-4:]:
        t.append(f"turn {turn}: first token {seconds:.2f}s", "bold" if turn == len(ttft) else "")
        t.append(f" ({reused} cached)\n", "dim")
    return t


def history_line(n: int, result: TurnResult, verdict: str) -> Text:
    s = result.stats
    speed = f", {speedup_text(s.speedup)}" if s.speedup else ""
    line = Text(f"{n}. {verdict} ", "bold")
    line.append(result.instruction)
    line.append(f"  ({s.completion_tokens} tok, first {result.first_token_seconds:.2f}s{speed})", "dim")
    return line


class Instruction(Input):
    """The instruction box. It takes its own Enter, in the order of the keys it was given:
    a key's binding is otherwise looked up when the key comes back up to the app, against
    whatever has the focus by then, and an Enter typed before the focus moved could submit
    letters typed after it (issue 54)."""

    async def _on_key(self, event) -> None:
        if event.key == "enter":
            event.stop()
            event.prevent_default()
            await self.action_submit()
            return
        await super()._on_key(event)
