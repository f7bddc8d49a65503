"""What the decoder yields. Shells render these; the decoder never prints."""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True, slots=True)
class Stats:
    """One run, with OpenAI's usage names where they exist."""

    prompt_tokens: int
    completion_tokens: int
    forward_passes: int  # backend eval calls, the prefill included
    prefill_seconds: float
    decode_seconds: float
    stop_reason: str  # "eos", "fence", "max_tokens", "context"

    @property
    def prefill_tokens_per_second(self) -> float:
        return self.prompt_tokens / self.prefill_seconds if self.prefill_seconds else 0.0

    @property
    def decode_tokens_per_second(self) -> float:
        return self.completion_tokens / self.decode_seconds if self.decode_seconds else 0.0

    def to_dict(self) -> dict:
        d = asdict(self)
        d["prefill_tokens_per_second"] = self.prefill_tokens_per_second
        d["decode_tokens_per_second"] = self.decode_tokens_per_second
        return d


@dataclass(frozen=True, slots=True)
class Prefilled:
    prompt_tokens: int
    seconds: float


@dataclass(frozen=True, slots=True)
class TokenGenerated:
    """A token the model produced (plain decoding: every token)."""

    token: int
    text: str  # the new complete text it adds (may be "" mid-character)


@dataclass(frozen=True, slots=True)
class Finished:
    tokens: tuple[int, ...]  # every generated token, stop token excluded
    text: str  # their text
    stats: Stats


Event = Prefilled | TokenGenerated | Finished
