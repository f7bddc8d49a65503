"""What a shell asks the decoder for: one file, one instruction (and, in a session, the
turns before it)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Exchange:
    """An earlier turn of a session: what was asked and the text the user accepted."""

    instruction: str
    result: str


@dataclass(frozen=True)
class EditRequest:
    text: str  # the file's current content (decoded text)
    instruction: str
    filename: str = ""  # shown to the model and used to pick the fence's language tag
    system: str | None = None  # overrides the default system prompt
    # A session's accepted turns, oldest first: the conversation so far. The first turn
    # was asked about `start`; `text` is then the last turn's result.
    history: tuple[Exchange, ...] = ()
    start: str = ""
    # The answer's draft, if not `text`: the predicted output copies it and the keep-bias
    # leans towards it (fix: `text` with spelling suggestions, spelling.py). With β = 0 it
    # changes the speed only, never the answer.
    draft: str | None = None
    # What the tools expect the answer to be, if not `draft`: the predicted output copies it,
    # the keep-bias does not lean on it, so it changes the speed only, never the answer
    # (fix: `draft` with the swaps the model probably makes, confusables.GUESS).
    guess: str | None = None
    # `draft` without the suggestions the tools and the model's reading are both sure of
    # (fix: Δ >= confusables.SURE_THRESHOLD), if any: the keep-bias leans harder on what differs from
    # it (EditOptions.sure_bias); like `draft`, it moves the answer, and plain decoding
    # leans the same way (lossless)
    doubtful: str | None = None
    # The file before the instruction in the first user message (prompt.messages): a
    # session's retry with another instruction then shares the file with the turn before
    # it and reads only from the instruction on (decode.prefill)
    file_first: bool = False
