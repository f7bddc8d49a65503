"""How one answer is decoded: the engine's options, declared without the engine (no
numpy), so that a shell's settings hold them before a model loads (app/options.py)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .names import DRAFT_MAX, DRAFTERS, FORCED_RUN, SPECULATE

if TYPE_CHECKING:
    from .costmodel import CostModel
    from .grammar import Constraint

# β after a tool's deletion too, by default: chosen on the tuning files, where it fixed 2
# more errors ("to dark", a doubled word) for 1 wrong change ("typicaly" -> "typical");
# docs/quality.md's `+nodeletions` row is the default without it (AMD EPYC, 2026-11-27:
# mean 0.75 -> 0.73, recall 77% -> 75%; natural errors held out 78% either way)
SUGGEST_DELETIONS = True


@dataclass(frozen=True)
class Sampling:
    """How the next token is chosen (sampling.py): greedy at temperature 0, else one seeded draw."""

    temperature: float = 0.0
    top_k: int = 0  # 0: no limit
    top_p: float = 1.0  # 1.0: no nucleus cut
    seed: int | None = None

    def __post_init__(self):
        if self.temperature < 0:
            raise ValueError("temperature must be >= 0")
        if not 0.0 < self.top_p <= 1.0:
            raise ValueError("top_p must be in (0, 1]")
        if self.top_k < 0:
            raise ValueError("top_k must be >= 0")

    @property
    def greedy(self) -> bool:
        return self.temperature == 0.0


@dataclass(frozen=True, kw_only=True)
class EditOptions:
    """How one answer is decoded: the engine's options (a command's are app/options.py's
    EngineOptions.edit; app/jobs.py sets each run's kind, limit, biases and grammar).

    kind: "rewrite" (the file, primed, until the closing fence) or "summary" (new text
    about the file: no predicted draft). speculate: "off" (plain decoding), "fixed" (verify
    every draft up to draft_max), "auto" (the planner picks k from `cost`, measured now if
    not given). keep_bias: β added to the logit of the file's next token (keepbias.py; a
    rewrite only), the same for every speculate mode; suggest_bias: the β on the draft's
    tokens a tool changed (req.draft against req.text; None: keep_bias there too), and
    with suggest_deletions on the token after a tool's deletion too; sure_bias: the β on
    the draft's tokens that differ from req.doubtful (the suggestions the model's reading
    is sure of; None: suggest_bias there too).
    constraint: what the answer must match (a rewrite: the file's text, before its closing
    fence); coalesce: forced tokens cost no pass of their own (speculative.py); forced_run:
    a draft is cut where the grammar would force this many tokens or more, which then ride
    in the next pass without rows of logits (constrained.GrammarRule; 0: never cut)."""

    kind: str = "rewrite"
    max_tokens: int | None = None  # None: room for the answer (default_max_tokens)
    sampling: Sampling = field(default_factory=Sampling)
    speculate: str = "auto"
    drafters: Sequence[str] = DRAFTERS
    draft_max: int = DRAFT_MAX
    cost: CostModel | None = None
    keep_bias: float = 0.0
    suggest_bias: float | None = None
    suggest_deletions: bool = SUGGEST_DELETIONS
    sure_bias: float | None = None  # β where the draft differs from req.doubtful (None: suggest_bias)
    constraint: Constraint | None = None
    coalesce: bool = True
    forced_run: int = FORCED_RUN

    def __post_init__(self):
        if self.speculate not in SPECULATE:
            raise ValueError(f"speculate must be one of {', '.join(SPECULATE)}")
        if self.kind not in ("rewrite", "summary"):
            raise ValueError("kind must be rewrite or summary")
