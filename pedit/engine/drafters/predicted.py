"""Predicted output (OpenAI "Predicted Outputs", as reverse-engineered by its users): the
original file is the draft.

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

Learned substitutions. A confirmed re-sync tells what the model did: it wrote `new` where
the draft had `old`,
    old = draft[d : r],  new = out[o : s]
with d the cursor and o the output position where the sync was lost, and r, s where the
agreeing run that re-synced it starts (common ends trimmed; an insertion or a deletion is
keyed on the word before it: `a )` -> `a : float )` is the rule `a` -> `a : float`).
A short substitution (old of 1-8 tokens, new of 1-16) becomes a rule, and the rest of the
draft is drafted through it:
at every later place where `old` occurs at token boundaries (its first and last bytes do
not continue a word in the tokens beside it), the proposal is `new`, then the draft after
`old`. So a rename costs one rejected draft, at its first occurrence, instead of one per
occurrence. Until the model has written a rule's `new` once, a proposal ends after it, so
a one-off edit that is not repeated costs only those few tokens where its rule is wrong.
Where the model rejects a learned draft, the original draft is used at that place (the
fallback), and a rule rejected twice is forgotten. A later edit of the same
`old` replaces its rule. Drafts never change the output, only how fast it is verified.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

MAX_OLD, MAX_NEW = 8, 16  # the longest substitution learned, in tokens
FORGET_AFTER = 2  # rejections that unlearn a rule


@dataclass
class Rule:
    old: tuple[int, ...]
    new: tuple[int, ...]
    rejected: int = 0
    written: int = 0  # places where the model wrote `new` as drafted


def _wordy(b: bytes) -> bool:
    """Does this byte continue a word (a letter, digit, underscore, or part of a non-ASCII
    character)?"""
    return b.isalnum() or b == b"_" or (len(b) == 1 and b[0] >= 0x80)


class LearnedEdits:
    """The substitutions learned from the model's own edits of the draft (old tokens -> new),
    each applied only at word boundaries, and forgotten after FORGET_AFTER rejections."""

    def __init__(self, draft: list[int], window: int, token_bytes: Callable[[int], bytes] | None):
        self.draft, self.window, self._bytes = draft, window, token_bytes
        self.rules: dict[tuple[int, ...], Rule] = {}
        self._by_first: dict[int, list[tuple[int, ...]]] = {}
        self._fallback: set[int] = set()  # draft positions where a learned draft was rejected

    def learn(self, lost: tuple[int, int], run: tuple[int, int], out: Sequence[int]) -> None:
        """A re-sync held: learn the substitution between the loss (draft, output index)
        and the re-synced run's start."""
        (d, o), (r, s) = lost, run
        old, new = list(self.draft[d:r]), list(out[o:s])
        while old and new and old[-1] == new[-1]:
            old.pop(), new.pop()
        lead = 0
        while lead < min(len(old), len(new)) and old[lead] == new[lead]:
            lead += 1
        old, new = tuple(old[lead:]), tuple(new[lead:])
        at = d + lead  # where `old` starts in the draft
        if not old or not new:  # an insertion or a deletion: keyed on the word before it
            key = self.draft[at - 1] if at > 0 else None
            if key is None or len(old) + len(new) > MAX_OLD or not self._word_end(key):
                return  # after a newline or a bracket it would be drafted everywhere
            old, new = (key, *old), (key, *new)
        if not (0 < len(old) <= MAX_OLD and 0 < len(new) <= MAX_NEW) or r - d > self.window:
            return
        if old not in self.rules:
            self._by_first.setdefault(old[0], []).append(old)
            self._by_first[old[0]].sort(key=len, reverse=True)  # the longest match first
        self.rules[old] = Rule(old, new)

    def rejected(self, rule: Rule, at: int) -> None:
        self._fallback.add(at)
        rule.rejected += 1
        if rule.rejected >= FORGET_AFTER and self.rules.get(rule.old) is rule:
            del self.rules[rule.old]
            self._by_first[rule.old[0]].remove(rule.old)

    def at(self, j: int) -> Rule | None:
        """The learned rule whose `old` starts at draft position j at token boundaries."""
        if not self.rules or j in self._fallback or j >= len(self.draft):
            return None
        for old in self._by_first.get(self.draft[j], ()):
            if tuple(self.draft[j : j + len(old)]) == old and self._at_boundaries(j, j + len(old)):
                return self.rules[old]
        return None

    def _word_end(self, token: int) -> bool:
        return self._bytes is None or _wordy(self._bytes(token)[-1:])

    def _at_boundaries(self, i: int, j: int) -> bool:
        if self._bytes is None:
            return True
        first, last = self._bytes(self.draft[i])[:1], self._bytes(self.draft[j - 1])[-1:]
        before = self._bytes(self.draft[i - 1])[-1:] if i > 0 else b""
        after = self._bytes(self.draft[j])[:1] if j < len(self.draft) else b""
        return not (_wordy(first) and _wordy(before)) and not (_wordy(last) and _wordy(after))


class PredictedOutput:
    name = "predicted"
    # in sync: an unchanged stretch of the file is usually copied on; just re-synced after
    # an edit: the planner learns how often the re-sync point was right
    # (the in-sync label's next tokens from their own prior, a mean of 0.99 with the weight of
    # ten tokens: long passes soon where the file is copied on, soon unlearnt where it is not)
    priors = {
        "predicted": (9.0, 1.0, 9.9, 0.1), "predicted:resync": (2.0, 1.0), "predicted:learned": (4.0, 1.0),
    }  # fmt: skip

    def __init__(
        self,
        draft: Sequence[int],
        start: int,
        *,
        window: int = 32,
        far_match: int = 3,
        max_match: int = 8,
        learn: bool = True,
        token_bytes: Callable[[int], bytes] | None = None,
    ):
        """learn: draft through learned substitutions (KeepBias's cursor does not: its bias
        is towards the file). token_bytes: a token's bytes, to find word boundaries (without
        it every token is a word of its own)."""
        self.draft = list(draft)
        self.start = start  # context index of the first output token
        self.window, self.far_match, self.max_match = window, far_match, max(max_match, far_match)
        self.cursor = self.anchor = 0
        self.in_sync = True
        self.streak = 0  # output tokens followed in sync since the sync was last lost
        self.label = "predicted"
        self._tentative = 0  # agreeing tokens still needed to confirm the last re-sync
        self._seen = start
        # far candidates need far_match tokens of agreement: index the draft by its n-grams
        # of that length (by their last position), so a search costs the window plus the
        # n-gram's occurrences, not every occurrence of a common token
        self._grams: dict[tuple[int, ...], list[int]] = {}
        n = self.far_match
        for i in range(n - 1, len(self.draft)):
            self._grams.setdefault(tuple(self.draft[i - n + 1 : i + 1]), []).append(i)
        self.learn = learn
        self.edits = LearnedEdits(self.draft, window, token_bytes)
        self._sub: tuple[int, Rule, int] | None = None  # a substitution being written: (at, rule, done)
        self._lost: tuple[int, int] | None = None  # (cursor, output index) where the sync was lost
        self._run: tuple[int, int] | None = None  # (draft, output index) where the re-sync run starts

    @property
    def rules(self) -> dict[tuple[int, ...], Rule]:
        return self.edits.rules

    # --- following the output -------------------------------------------------------------

    def _ingest(self, context: Sequence[int]) -> None:
        for i in range(self._seen, len(context)):
            if self.in_sync:
                self._step(context[i], i - self.start, context)
        self._seen = len(context)

    def _step(self, x: int, o: int, context: Sequence[int]) -> None:
        """One output token `x` (output index o) while in sync."""
        self.streak += 1  # back to 0 when the token loses the sync (_lose)
        if self._sub is not None:
            at, rule, done = self._sub
            if x == rule.new[done]:
                self._sub = (at, rule, done + 1) if done + 1 < len(rule.new) else None
                if self._sub is None:
                    rule.written += 1
                    self._advance(at + len(rule.old), context)
                return
            self._sub = None
            self.edits.rejected(rule, at)
            self._lose(at, o - done)  # the edit made here starts where the substitution began
            return
        rule = self.edits.at(self.cursor)
        if rule is not None:
            if x == rule.new[0]:
                if len(rule.new) == 1:
                    rule.written += 1
                    self._advance(self.cursor + len(rule.old), context)
                else:
                    self._sub = (self.cursor, rule, 1)
                return
            self.edits.rejected(rule, self.cursor)  # then compared with the file's own tokens
        if self.cursor < len(self.draft) and self.draft[self.cursor] == x:
            self._advance(self.cursor + 1, context)
        else:
            self._lose(self.cursor, o)

    def _advance(self, cursor: int, context: Sequence[int]) -> None:
        self.cursor = cursor
        if self._tentative:
            self._tentative -= 1
            if not self._tentative:
                self._confirmed(context)
        if not self._tentative:
            self.anchor = self.cursor

    def _lose(self, cursor: int, o: int) -> None:
        self.in_sync, self.streak = False, 0
        if self._lost is None:  # a re-sync that was not confirmed keeps the first loss
            self._lost = (cursor, o)

    def _confirmed(self, context: Sequence[int]) -> None:
        """The re-sync held: learn the substitution between the loss and the re-synced run."""
        lost, run = self._lost, self._run
        self._lost = self._run = None
        if self.learn and lost is not None and run is not None:
            self.edits.learn(lost, run, context[self.start :])

    # --- drafting -------------------------------------------------------------------------

    def resync_position(self, output: Sequence[int]) -> tuple[int, int] | None:
        """(where copying should resume after `output`, match length), or None."""
        if not output:
            return None
        best_key, best = None, None
        n_out = len(output)
        last, n = output[-1], self.far_match
        near = [
            q
            for q in range(max(0, self.anchor - 1), min(len(self.draft), self.anchor + self.window))
            if self.draft[q] == last
        ]
        far = self._grams.get(tuple(output[-n:]), ()) if n_out >= n else ()
        for q in sorted(set(near).union(far)):
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
            self._run = (self.cursor - length, len(context) - self.start - length)
            if not self._tentative:
                self.anchor = self.cursor
                self._confirmed(context)
        tokens, learned = self._walk(k)
        self.label = (
            "predicted:resync" if self._tentative else "predicted:learned" if learned else "predicted"
        )
        return tokens

    def _walk(self, k: int) -> tuple[list[int], bool]:
        """Up to k tokens from the cursor on, through the learned rules (and whether any
        applied)."""
        tokens: list[int] = []
        j, learned = self.cursor, False
        if self._sub is not None:
            at, rule, done = self._sub
            tokens, j, learned = list(rule.new[done:]), at + len(rule.old), True
        if not self.edits.rules:
            return (tokens + self.draft[j : j + k])[:k], learned
        while len(tokens) < k and j < len(self.draft):
            rule = self.edits.at(j) if self.learn else None
            if rule is None:
                tokens.append(self.draft[j])
                j += 1
            else:
                tokens.extend(rule.new)
                j += len(rule.old)
                learned = True
                if not rule.written:  # unproven (a one-off edit?): risk only its own tokens
                    break
        return tokens[:k], learned
