"""Predicted output (OpenAI "Predicted Outputs", seed 002): the original file is the draft.

State: a cursor into the draft (the index of the token the output should produce next),
whether the output is in sync with the draft, and an anchor: the cursor as of the last
token that confirmed the sync. Every emitted token that equals draft[cursor] advances the
cursor (and the anchor with it, once the sync is confirmed); any other token (the model
inserted, deleted or replaced something) puts the drafter out of sync.

Re-sync. While out of sync, the drafter looks for the place in the draft where the output
tokens written so far end: a position q with draft[q] == out[-1], draft[q-1] == out[-2]...
and resumes copying at q + 1. Candidates are ranked by
  1. match length, counted up to `far_match` tokens (a 3-token match beats a 1-token one);
  2. distance: the nearest position at or after the anchor first, then the nearest before;
and a candidate counts only if it matches at least 1 token when it lies within `window`
tokens after the anchor (a local insertion, deletion or replacement) or at least
`far_match` tokens anywhere else (a jump). Distances count from the anchor, not from the
cursor, so a re-sync that the next token contradicts (a word of new text that happens to
occur in the file) does not drag the search forward. A re-sync on fewer than `far_match`
tokens stays tentative (its proposals are labelled "predicted:resync", so the planner
bets on them only as far as such re-syncs have proved right) until enough further tokens
agree. So after an edit pedit resumes copying as soon
as one or a few tokens agree, where OpenAI's implementation appears to need about 32.

This also covers a preamble or an extra code fence before the file (the output starts out
of sync, then re-syncs on the file's first tokens) and token-boundary differences at an
edit (the same text tokenized differently re-syncs on the next token both share).
"""

from __future__ import annotations

from collections.abc import Sequence


class PredictedOutput:
    name = "predicted"
    # in sync: an unchanged stretch of the file is usually copied on; just re-synced after
    # an edit: the planner learns how often the re-sync point was right
    priors = {"predicted": (9.0, 1.0), "predicted:resync": (2.0, 1.0)}

    def __init__(
        self,
        draft: Sequence[int],
        start: int,
        *,
        window: int = 32,
        far_match: int = 3,
        max_match: int = 8,
    ):
        self.draft = list(draft)
        self.start = start  # context index of the first output token
        self.window, self.far_match, self.max_match = window, far_match, max(max_match, far_match)
        self.cursor = self.anchor = 0
        self.in_sync = True
        self.label = "predicted"
        self._tentative = 0  # agreeing tokens still needed to confirm the last re-sync
        self._seen = start
        self._where: dict[int, list[int]] = {}
        for i, tok in enumerate(self.draft):
            self._where.setdefault(tok, []).append(i)

    def _ingest(self, context: Sequence[int]) -> None:
        for x in context[self._seen :]:
            if self.in_sync and self.cursor < len(self.draft) and self.draft[self.cursor] == x:
                self.cursor += 1
                self._tentative = max(0, self._tentative - 1)
                if not self._tentative:
                    self.anchor = self.cursor
            else:
                self.in_sync = False
        self._seen = len(context)

    def resync_position(self, output: Sequence[int]) -> tuple[int, int] | None:
        """(where copying should resume after `output`, match length), or None."""
        if not output:
            return None
        best_key, best = None, None
        n_out = len(output)
        for q in self._where.get(output[-1], ()):
            length = 1
            while (
                length < self.max_match
                and length < n_out
                and q - length >= 0
                and self.draft[q - length] == output[-1 - length]
            ):
                length += 1
            p = q + 1
            local = self.anchor <= p <= self.anchor + self.window
            if length < (1 if local else self.far_match):
                continue
            after = p >= self.anchor
            key = (-min(length, self.far_match), 0 if after else 1, abs(p - self.anchor))
            if best_key is None or key < best_key:
                best_key, best = key, (p, length)
        return best

    def propose(self, context: Sequence[int], k: int) -> list[int]:
        self._ingest(context)
        if not self.in_sync:
            found = self.resync_position(context[self.start :])
            if found is None:
                return []
            self.cursor, length = found
            self.in_sync, self._tentative = True, max(0, self.far_match - length)
            if not self._tentative:
                self.anchor = self.cursor
        self.label = "predicted:resync" if self._tentative else "predicted"
        return self.draft[self.cursor : self.cursor + k]
