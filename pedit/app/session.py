"""An editing session on one file: turns of instruction -> rewrite, each answer the draft of
the next, the backend's cache kept between turns. No UI: the TUI is a shell on this.

    text_0 --turn 1--> answer_1 --accept (all or some hunks)--> text_1 --turn 2--> ...

A turn's prompt is the conversation of the accepted turns (prompt.messages), so turn n+1
begins with exactly the tokens turn n left in the backend's cache (its prompt and its
answer) and only the new instruction is evaluated before the first token: the prefill
reuses the shared prefix (decode.prefill). The draft of turn n+1 is the working text,
that is the accepted answer of turn n ("iterating on prior responses", Predicted Outputs).
A rejected turn leaves no trace in the conversation; when the conversation would take
more than half of the context, it starts again from the working text.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

from ..backends import Backend
from ..engine.costmodel import CostModel
from ..engine.edit import edit_events
from ..engine.prompt import REWRITE_SYSTEM, build_prompt
from ..engine.remote import remote_size
from ..events import Event, Finished, Prefilled, Stats, TextReceived, TokenGenerated, TokensAccepted
from ..request import EditRequest, Exchange
from .calibration import measure_cost
from .jobs import EngineOptions, incomplete, json_grammar


class SessionError(Exception):
    """A turn that cannot run (the file does not fit in the context, a turn already pending)."""


@dataclass(frozen=True)
class TurnResult:
    instruction: str
    before: str  # the working text the turn rewrote
    answer: str  # the model's whole answer (the file it wrote)
    stats: Stats
    first_token_seconds: float  # from the start of the turn to its first token
    reused_tokens: int  # prompt tokens found in the backend's cache
    prompt_tokens: int


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
        backend: Backend,
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
        req = EditRequest(self.text, instruction, self.filename, self.system, history, start)
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
        remote = not self.backend.capabilities.logits
        prompt = [] if remote else build_prompt(self.backend, req).tokens
        size = self._prompt_size(req) if remote else len(prompt)
        if size >= self.backend.n_ctx:
            raise SessionError(
                f"{self.filename or 'the file'} takes {size} tokens with the prompt, more than the"
                f" model's context ({self.backend.n_ctx}); use the pedit command, which works in chunks"
            )
        if not req.history:
            self._from = len(self._done)  # a new conversation (or the old one was too long)
        if self.options.cost is None and self.options.speculate == "auto" and not remote:
            self.options = replace(self.options, cost=measure_cost(self.backend))
        o = self.options
        t0 = time.perf_counter()
        first = reused = None
        finished: Finished | None = None
        events = edit_events(
            self.backend, req, max_tokens=o.max_tokens, sampling=o.sampling, speculate=o.speculate,
            drafters=o.drafters, draft_max=o.draft_max, cost=o.cost,
            keep_bias=o.keep_bias or 0.0, coalesce=o.coalesce,
            constraint=json_grammar(req.text, self.filename) if o.json_auto and not remote else None,
        )  # fmt: skip
        for event in events:
            if isinstance(event, Prefilled):
                reused = event.reused
            elif first is None and isinstance(event, TokenGenerated | TokensAccepted | TextReceived):
                first = time.perf_counter() - t0
            elif isinstance(event, Finished):
                finished = event
            yield event
            if cancelled():
                events.close()
                break
        if finished is None:
            return
        incomplete(self.filename or "the file", req.text, finished)  # never offered as a rewrite
        result = TurnResult(
            instruction, self.text, finished.text, finished.stats,
            first if first is not None else time.perf_counter() - t0, reused or 0, len(prompt),
        )  # fmt: skip
        self.turns.append(result)
        self.pending = result

    def _prompt_size(self, req: EditRequest) -> int:
        """The prompt's tokens (a remote backend's estimate: engine/remote.py)."""
        if self.backend.capabilities.logits:
            return len(build_prompt(self.backend, req).tokens)
        return remote_size(self.backend, req, "rewrite")

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

    def switch_backend(self, backend: Backend, cost: CostModel | None = None) -> None:
        """Another model (its own cache: nothing of the old one is reused)."""
        self.backend = backend
        self.options = replace(self.options, cost=cost)
