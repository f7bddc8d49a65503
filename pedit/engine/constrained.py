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

    def __init__(self, matcher: Matcher):
        self.matcher = matcher

    @property
    def done(self) -> bool:
        return self.matcher.done

    def forced(self) -> list[int]:
        return self.matcher.forced()

    def valid_prefix(self, tokens: Sequence[int]) -> int:
        return self.matcher.valid_prefix(tokens)

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
