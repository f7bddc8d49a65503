"""A scripted backend for unit tests of the decoding loop: after the prompt it "wants" to
write a fixed target token sequence and then EOS. Its logits are a function of the prefix
only (one-hot on the target token at the current output position, whatever was written
before), and it counts forward passes. Text handling is the reference backend's."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from pedit.backends.base import Capabilities
from pedit.backends.reference import ReferenceBackend


class ScriptedBackend(ReferenceBackend):
    name = "scripted"
    # no second sequence: its script follows one run's passes, so fix scores no swaps on it
    capabilities = Capabilities(rollback=True)

    def __init__(self, target: Sequence[int], prompt_len: int, *, n_ctx: int = 4096):
        super().__init__(n_ctx=n_ctx)
        self.target = list(target)
        self.prompt_len = prompt_len
        self.eos = self.tokenize("<|im_end|>", special=True)[0]  # ChatML's end of turn
        self.calls: list[tuple[int, int]] = []  # (tokens evaluated, logits asked) per pass

    def eval(self, tokens, *, n_logits=1):
        self.calls.append((len(tokens), n_logits))
        start = self.n_past
        super().eval(tokens, n_logits=1)  # keep the cache bookkeeping of the parent
        rows = []
        for pos in range(start + len(tokens) - n_logits, start + len(tokens)):
            i = pos + 1 - self.prompt_len  # index in the output of the token this row predicts
            row = np.zeros(self.n_vocab, dtype=np.float32)
            row[self.target[i] if 0 <= i < len(self.target) else self.eos] = 10.0
            rows.append(row)
        return np.stack(rows)


class Answering(ScriptedBackend):
    """Answers every rewrite with `answer` (+ fence + end of turn), greedy; calls
    `at_pass(n)` before its n-th forward pass of a run (n = 1 is the prefill: the read of
    the prompt's rest, after its shared start)."""

    def __init__(self, answer: str, fence: str = "```", at_pass=None):
        super().__init__([], prompt_len=0)
        self.target = self.tokenize(answer + fence) + [self.eos]
        self.at_pass = at_pass or (lambda n: None)
        self.passes = 0

    def eval(self, tokens, *, n_logits=1):
        if len(tokens) > 1 and n_logits == 1:  # a prompt (or its start) read: the answer follows
            self.prompt_len, self.passes = self.n_past + len(tokens), 0
        self.passes += 1
        self.at_pass(self.passes)
        return super().eval(tokens, n_logits=n_logits)
