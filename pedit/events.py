"""What the decoder yields. Shells render these; the decoder never prints."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass(frozen=True, slots=True)
class Stats:
    """One run, with OpenAI's usage names where they exist."""

    prompt_tokens: int
    completion_tokens: int
    forward_passes: int  # backend eval calls, the prefill included
    prefill_seconds: float
    decode_seconds: float  # from the end of the prefill to the last token
    stop_reason: str  # "eos", "fence", "max_tokens", "context" ("" while running)
    accepted_prediction_tokens: int = 0  # draft tokens the model accepted
    rejected_prediction_tokens: int = 0  # draft tokens verified and rejected
    accepted_by_drafter: dict[str, int] = field(default_factory=dict)
    plain_step_seconds: float | None = None  # a plain one-token step, measured in this run
    speedup: float | None = None  # completion_tokens * plain_step_seconds / decode_seconds

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
    reused: int = 0  # prompt tokens already in the backend's cache (not evaluated again)


@dataclass(frozen=True, slots=True)
class TokenGenerated:
    """A token the model produced itself (plain decoding: every token; speculative: the
    token after a rejected draft, or the free extra token after an accepted one)."""

    token: int
    text: str  # the new complete text it adds (may be "" mid-character)


@dataclass(frozen=True, slots=True)
class TokensAccepted:
    """Draft tokens the model verified and accepted, all proposed by one drafter."""

    tokens: tuple[int, ...]
    text: str
    source: str  # "predicted", "lookup", "ngram", ...


@dataclass(frozen=True, slots=True)
class Progress:
    """After every forward pass: the run so far (stop_reason is "")."""

    stats: Stats


@dataclass(frozen=True, slots=True)
class Finished:
    tokens: tuple[int, ...]  # every generated token, stop token excluded
    text: str  # their text
    stats: Stats


Event = Prefilled | TokenGenerated | TokensAccepted | Progress | Finished
