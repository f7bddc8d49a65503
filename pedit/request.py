"""What a shell asks the decoder for: one file, one instruction."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class EditRequest:
    text: str  # the file's current content (decoded text)
    instruction: str
    filename: str = ""  # shown to the model and used to pick the fence's language tag
    system: str | None = None  # overrides the default system prompt
