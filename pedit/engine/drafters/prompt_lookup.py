"""Prompt lookup (Saxena 2023, apoorvumang/prompt-lookup-decoding): copy what followed an
earlier occurrence of the last n tokens, n from max_n down to min_n.

Which match: the longest n first (a longer context is more specific, so what followed it
is more likely to follow again), and among matches of that length the most recent one
(the text the model is writing right now is the best guide to its next tokens: when it is
copying a passage, the latest occurrence is the passage being copied). Index: for every n,
a dict from the n-gram to the end position of its latest occurrence, updated as the
context grows, so a lookup is O(max_n) dict probes.
"""

from __future__ import annotations

from collections.abc import Sequence


class PromptLookup:
    name = "lookup"
    priors = {"lookup:3": (2.0, 1.0), "lookup:2": (1.0, 1.0), "lookup:1": (1.0, 3.0)}

    def __init__(self, max_n: int = 3, min_n: int = 1):
        if not 1 <= min_n <= max_n:
            raise ValueError("need 1 <= min_n <= max_n")
        self.max_n, self.min_n = max_n, min_n
        self._last_end: list[dict[tuple[int, ...], int]] = [{} for _ in range(max_n + 1)]
        self._indexed = 0  # positions [0, _indexed) are in the index
        self.label = "lookup:1"

    def _index_until(self, context: Sequence[int], end: int) -> None:
        for t in range(self._indexed, end):
            for n in range(1, min(self.max_n, t + 1) + 1):
                self._last_end[n][tuple(context[t - n + 1 : t + 1])] = t
        self._indexed = max(self._indexed, end)

    def propose(self, context: Sequence[int], k: int) -> list[int]:
        t = len(context) - 1  # the suffix ends here; index everything before it
        if t < 1 or k < 1:
            return []
        self._index_until(context, t)
        for n in range(min(self.max_n, t), self.min_n - 1, -1):
            end = self._last_end[n].get(tuple(context[t - n + 1 : t + 1]))
            if end is not None:
                self.label = f"lookup:{min(n, 3)}"
                return list(context[end + 1 : end + 1 + k])
        return []
