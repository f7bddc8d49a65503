"""An editing session on one file: turns of instruction -> rewrite, each answer the draft of
the next, the backend's cache kept between turns. No UI: the TUI is a shell on this.

    text_0 --turn 1--> answer_1 --accept (all or some hunks)--> text_1 --turn 2--> ...

A turn's prompt is the conversation of the accepted turns (prompt.messages), so turn n+1
begins with exactly the tokens turn n left in the backend's cache (its prompt and its
answer) and only the new instruction is evaluated before the first token: the prefill
reuses the shared prefix (decode.prefill). The draft of turn n+1 is the working text,
that is the accepted answer of turn n ("iterating on prior responses", Predicted Outputs).
A rejected turn leaves no trace in the conversation, and a retry with another instruction
reads only that instruction: the file comes before it (FILE_FIRST). When the conversation
would take more than half of the context, it starts again from the working text.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

from ..backends import AnyBackend
from ..checks.guard import incomplete
from ..engine.costmodel import CostModel, repriced
from ..engine.decode import PromptTooLong
from ..engine.edit import EditOptions, edit_events, local, prompt_size
from ..engine.grammar import json_grammar
from ..engine.prompt import REWRITE_SYSTEM
from ..events import Event, Finished, Stats, TextReceived, TokenGenerated, TokensAccepted
from ..machine.calibration import measure_cost
from ..request import EditRequest, Exchange
from .options import EngineOptions


# The file, then the instruction (EditRequest.file_first): a retry ("e" in the interactive
# session: the answer rejected, the instruction edited) shares the whole file with the turn
# before it and reads only from the instruction on; the command's prompts keep the
# instruction first, which their pieces and files share (docs/resident.md)
FILE_FIRST = True


class SessionError(Exception):
    """A turn that cannot run (the file does not fit in the context, a turn already pending)."""


@dataclass(frozen=True, kw_only=True)
class TurnResult:
    instruction: str
    before: str  # the working text the turn rewrote
    answer: str  # the model's whole answer (the file it wrote)
    stats: Stats  # the engine's figures (prompt tokens, those found in the cache, ...)
    first_token_seconds: float  # from the start of the turn to its first token

    @property
    def prompt_tokens(self) -> int:
        return self.stats.prompt_tokens

    @property
    def reused_tokens(self) -> int:
        """Prompt tokens found in the backend's cache (what the turns before left there)."""
        return self.stats.cached_tokens


@dataclass(frozen=True)
class _Accepted:
    exchange: Exchange
    before: str


class Session:
    """The working text and the accepted turns (undo / redo); the backend keeps what its
    cache holds (backend.held), so a turn reads only what it adds. Not thread-safe: one
    turn at a time, accept/reject when it is done."""

    def __init__(
        self,
        backend: AnyBackend,
        text: str,
        filename: str = "",
        *,
        options: EngineOptions | None = None,
        system: str | None = None,
    ):
        self.backend, self.filename = backend, filename
        self.options = options or EngineOptions()
        self.system = system or REWRITE_SYSTEM
        self.text = self.saved = text
        self.pending: TurnResult | None = None  # a finished turn not yet accepted or rejected
        self.turns: list[TurnResult] = []  # every finished turn, for the history view
        self._done: list[_Accepted] = []  # accepted turns, oldest first
        self._undone: list[_Accepted] = []
        self._from = 0  # the conversation is _done[_from:] (it restarts when too long)

    # --- turns ---------------------------------------------------------------------------

    def request(self, instruction: str) -> EditRequest:
        turns = self._done[self._from :]
        history = tuple(a.exchange for a in turns)
        start = turns[0].before if turns else ""
        req = EditRequest(
            self.text, instruction, self.filename, system=self.system, history=history, start=start,
            file_first=FILE_FIRST,
        )  # fmt: skip
        if history and self._prompt_size(req) > self.backend.n_ctx // 2:
            req = replace(req, history=(), start="")  # too long: start again from the working text
        return req

    def run(self, instruction: str, cancelled: Callable[[], bool] = lambda: False) -> Iterator[Event]:
        """The events of one turn. When it finishes, `pending` holds its result; stopping
        early (`cancelled()` true, or closing the generator) leaves the text unchanged."""
        if self.pending is not None:
            raise SessionError("accept or reject the last answer first")
        if not instruction.strip():
            raise SessionError("type an instruction")
        req = self.request(instruction)
        if not req.history:
            self._from = len(self._done)  # a new conversation (or the old one was too long)
        if self.options.edit.cost is None and self.options.edit.speculate == "auto" and local(self.backend):
            self.options = self.options.costed(measure_cost(self.backend))
        elif self.options.edit.cost is not None:  # priced again by the turns before this one
            self.options = self.options.costed(repriced(self.options.edit.cost))
        t0 = time.perf_counter()
        first = finished = None
        try:
            events = edit_events(self.backend, req, self._options(req))
            for event in events:
                if first is None and isinstance(event, TokenGenerated | TokensAccepted | TextReceived):
                    first = time.perf_counter() - t0
                elif isinstance(event, Finished):
                    finished = event
                yield event
                if cancelled():
                    events.close()
                    break
        except PromptTooLong as exc:  # found by the engine before the prompt is read
            raise SessionError(
                f"{self.filename or 'the file'} takes {exc.n_new} tokens with the prompt, more than the"
                f" model's context ({exc.n_ctx}); use the pedit command, which works in chunks"
            ) from None
        if finished is None:
            return
        if refusal := incomplete(req.text, finished):  # never offered as a rewrite
            raise refusal.error(self.filename or "the file")
        took = first if first is not None else time.perf_counter() - t0
        result = TurnResult(
            instruction=instruction,
            before=self.text,
            answer=finished.text,
            stats=finished.stats,
            first_token_seconds=took,
        )
        self.turns.append(result)
        self.pending = result

    def _options(self, req: EditRequest) -> EditOptions:
        o = self.options
        json = json_grammar(req.text, self.filename) if o.json_auto and local(self.backend) else None
        return replace(o.edit, keep_bias=o.keep_bias or 0.0, suggest_bias=None, constraint=json)

    def _prompt_size(self, req: EditRequest) -> int:
        """The prompt's tokens (a remote backend's estimate: engine/remote.py)."""
        return prompt_size(self.backend, req, "rewrite")

    # --- the answer ----------------------------------------------------------------------

    def accept(self, text: str | None = None) -> None:
        """Make the pending answer (or `text`: the answer with only some hunks applied) the
        working text; the next turn drafts from it and continues the conversation."""
        result = self._take_pending()
        new = result.answer if text is None else text
        self._done.append(_Accepted(Exchange(result.instruction, new), self.text))
        self._undone.clear()
        self.text = new

    def reject(self) -> None:
        self._take_pending()

    def _take_pending(self) -> TurnResult:
        if self.pending is None:
            raise SessionError("no answer to accept or reject")
        result, self.pending = self.pending, None
        return result

    # --- undo / redo, saving ---------------------------------------------------------------

    def undo(self) -> bool:
        if not self._done or self.pending is not None:
            return False
        turn = self._done.pop()
        self._undone.append(turn)
        self.text = turn.before
        self._from = min(self._from, len(self._done))
        return True

    def redo(self) -> bool:
        if not self._undone or self.pending is not None:
            return False
        turn = self._undone.pop()
        self._done.append(turn)
        self.text = turn.exchange.result
        return True

    @property
    def unsaved(self) -> bool:
        return self.text != self.saved

    def mark_saved(self) -> None:
        self.saved = self.text

    def switch_backend(self, backend: AnyBackend, cost: CostModel | None = None) -> None:
        """Another model (its own cache: nothing of the old one is reused)."""
        self.backend = backend
        self.options = self.options.costed(cost)
