"""A grammar as the decoding loop's rule (speculative.Rule): the glue between the matcher
(grammar.py, llguidance) and speculative.speculative_generate.

The rule: forced tokens are emitted with no draw (coalescence: they ride in the next pass,
whose logits are needed only for its last position: .txt's "Coalescence"); otherwise one
draw from the row masked by the grammar. Drafts are cut at the first token the grammar
rejects (valid_prefix), so every draft token a row is verified against is one the masked
distribution can produce, and the walk asks the grammar again after each accepted token
(verify returns y None): tokens it forces there are in the cache already if the draft had
them. The matcher only ever consumes emitted tokens: no roll-back.
"""

from __future__ import annotations

from collections.abc import Container, Sequence

import numpy as np

from .grammar import Matcher
from .sampling import Sampling, sample


def draw(row: np.ndarray, matcher: Matcher, s: Sampling, rng: np.random.Generator) -> int:
    """The rule's drawn token from one row of logits ([n_vocab], modified in place).
    Greedy: the raw argmax when the grammar allows it (masking cannot change it), else the
    masked argmax."""
    if s.greedy:
        y = int(np.argmax(row))
        if matcher.allows(y):
            return y
    return sample(matcher.mask(row), s, rng)


class GrammarRule:
    """What a grammar lets the answer emit next (speculative.Rule)."""

    def __init__(self, matcher: Matcher, forced_run: int = 0):
        self.matcher = matcher
        self.forced_run = forced_run  # 0: drafts are cut only where the grammar rejects them

    @property
    def done(self) -> bool:
        return self.matcher.done

    def forced(self) -> list[int]:
        return self.matcher.forced()

    def valid_prefix(self, tokens: Sequence[int]) -> int:
        """The draft's tokens to verify: those the grammar allows, up to the first where it
        forces a run of FORCED_RUN tokens or more (a document's skeleton): that run is emitted
        with no draw and rides in the next pass with no row of logits, where a draft's row
        has one (the cut changes which pass reads a token, never which token is emitted)."""
        n = self.matcher.valid_prefix(tokens)
        if self.forced_run <= 0 or n < 2:
            return n
        return self.matcher.free_prefix(tokens[:n], self.forced_run)

    def consume(self, tokens: Sequence[int]) -> None:
        self.matcher.consume(tokens)

    def verify(
        self,
        rows: np.ndarray,
        draft: Sequence[int],
        at: int,
        s: Sampling,
        rng: np.random.Generator,
        stop: Container,
    ) -> tuple[int, int | None]:
        """One row at a time: the grammar's state moves with each accepted token."""
        y = draw(rows[at], self.matcher, s, rng)
        if at < len(draft) and y == draft[at] and y not in stop:
            return 1, None
        return 0, y
