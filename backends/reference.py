"""The reference backend: a tiny numpy language model whose logits depend only on the prefix.

It exists so that the decoder can be tested exactly: evaluating a token gives the same
logits whether it arrives alone, in a batch of draft tokens, or after a rollback, because
position t's logits are a pure function of tokens[0..t]. Real backends only approximate
that (batch shape changes floating-point reductions), which is why losslessness is *proved*
here and *measured* on llama.cpp and transformers.

Model, per position t with token x_t:
    h_t      = tanh(A @ h_{t-1} + E[x_t])                    # h: [d], h_{-1} = 0
    logits_t = W @ h_t + b + copy * onehot(y_t)              # [n_vocab]
where y_t is the token that followed the most recent earlier occurrence of the longest
suffix of x_0..x_t (up to COPY_CONTEXT tokens) seen before, if any: an induction-head-like copy term,
so that the model tends to repeat text from its prompt the way an editing model does, the
random term now and then wins (an "edit"), and drafts get realistic hits and misses.

Tokenizer: 256 byte tokens, three ChatML control tokens, then a few dozen common chunks
matched greedily, longest first, so the same text can be spelled by different token
sequences (the token-boundary case a draft must survive).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from .base import BackendError, Capabilities, check_room, detokenize_bytes
from .chat import CHATML, ChatTemplate

BRANCHES = 15  # branches eval_branches counts as one pass (llama.cpp's figure)

COPY_CONTEXT = 24  # the copy term matches up to this many tokens of context
SPECIALS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")
# fmt: off
CHUNKS = (
    " the", " and", " of", " to", " in", " is", " a", " that", " for", " it", " with",
    " as", " on", " be", " this", " are", "ing", "ed", "er", "th", "he", "in", "re",
    "an", "on", "at", "en", "es", "or", "te", "ion", "tion", "ly", "'s", ". ", ", ",
    "\n\n", "\n", "    ", "  ", "def ", "return", "self", "import ", "class ", " = ",
    "():", "```", "# ", "## ", "user", "assistant", "system",
)
# fmt: on


class ReferenceBackend:
    """Tiny deterministic model. Weights come from `seed`; `copy` is the induction strength."""

    name = "reference"
    capabilities = Capabilities(rollback=True, branch=True, state=True)
    branches = BRANCHES

    def __init__(
        self, *, n_ctx: int = 8192, seed: int = 0, dim: int = 24, copy: float = 10.0, n_threads=None
    ):
        # n_threads is accepted (and ignored) so that every backend takes the same options.
        self.n_ctx = n_ctx
        self._vocab = [bytes([i]) for i in range(256)] + [b""] * len(SPECIALS)
        self._vocab += [c.encode() for c in CHUNKS]
        self.n_vocab = len(self._vocab)
        self._special_ids = {s: 256 + i for i, s in enumerate(SPECIALS)}
        self.eos_ids = frozenset({self._special_ids["<|endoftext|>"], self._special_ids["<|im_end|>"]})
        chunk_ids = {c.encode(): 256 + len(SPECIALS) + i for i, c in enumerate(CHUNKS)}
        self._chunk_ids = chunk_ids
        longest_first = sorted(chunk_ids, key=len, reverse=True)
        self._chunk_re = re.compile(b"|".join(map(re.escape, longest_first)) + b"|.", re.S)
        self._special_re = re.compile("(" + "|".join(map(re.escape, SPECIALS)) + ")")

        rng = np.random.default_rng(seed)
        self._E = rng.normal(0.0, 1.0, (self.n_vocab, dim))
        self._A = rng.normal(0.0, 1.0 / np.sqrt(dim), (dim, dim))
        # Scales chosen so that greedy decoding copies its context where it can, and
        # sampling at T=1 leaves the copy a few times per few hundred tokens.
        self._W = rng.normal(0.0, 0.15, (self.n_vocab, dim))
        self._b = rng.normal(0.0, 0.3, self.n_vocab)
        self._copy = copy
        self._chat = ChatTemplate(CHATML, eos_token="<|im_end|>")
        self._tokens: list[int] = []
        self._first = 0  # first_read
        self._states: list[np.ndarray] = []  # h_t for every cached position

    # --- text ---------------------------------------------------------------------------
    def tokenize(self, text: str, *, special: bool = False) -> list[int]:
        parts = self._special_re.split(text) if special else [text]
        out: list[int] = []
        for part in parts:
            if special and part in self._special_ids:
                out.append(self._special_ids[part])
                continue
            for chunk in self._chunk_re.findall(part.encode("utf-8")):
                out.append(self._chunk_ids.get(chunk, chunk[0]))
        return out

    def count_tokens(self, text: str) -> int:
        return len(self.tokenize(text))

    def token_bytes(self, token: int) -> bytes:
        return self._vocab[token]

    def detokenize(self, tokens: Sequence[int]) -> str:
        return detokenize_bytes(self, tokens)

    def render_chat(self, messages, *, add_generation_prompt: bool = True) -> str:
        return self._chat.render(messages, add_generation_prompt=add_generation_prompt)

    # --- the model ----------------------------------------------------------------------
    @property
    def n_past(self) -> int:
        return len(self._tokens)

    @property
    def held(self) -> Sequence[int]:
        return self._tokens

    @property
    def first_read(self) -> int:
        return self._first

    def eval(self, tokens: Sequence[int], *, n_logits: int = 1) -> np.ndarray:
        tokens = [int(t) for t in tokens]
        if not tokens or not 1 <= n_logits <= len(tokens):
            raise ValueError(f"eval: {len(tokens)} tokens, n_logits={n_logits}")
        if any(not 0 <= t < self.n_vocab for t in tokens):
            raise ValueError("eval: token id out of range")
        check_room(len(self._tokens), len(tokens), self.n_ctx)
        if not self._tokens:
            self._first = len(tokens)
        first_out = len(self._tokens) + len(tokens) - n_logits
        h = self._states[-1] if self._states else np.zeros(self._A.shape[0])
        rows = []
        for t in tokens:
            h = np.tanh(self._A @ h + self._E[t])
            self._tokens.append(t)
            self._states.append(h)
            if len(self._tokens) > first_out:
                rows.append(self._logits(h))
        return np.stack(rows).astype(np.float32)

    def _logits(self, h: np.ndarray) -> np.ndarray:
        logits = self._W @ h + self._b
        nxt = self._copied_next()
        if nxt is not None:
            logits[nxt] += self._copy
        return logits

    def _copied_next(self) -> int | None:
        """y_t: the token after the most recent earlier occurrence of the longest suffix
        (up to COPY_CONTEXT tokens) of the prefix, like prompt lookup; None if no match."""
        toks = self._tokens
        arr = np.asarray(toks)
        t = len(toks) - 1
        ends = np.flatnonzero(arr[:t] == arr[t])  # earlier occurrences j of x_t, j < t
        for k in range(1, COPY_CONTEXT):
            longer = ends[ends >= k]
            longer = longer[arr[longer - k] == arr[t - k]] if t >= k else longer[:0]
            if not longer.size:
                break
            ends = longer
        return int(arr[ends[-1] + 1]) if ends.size else None

    def eval_branches(self, branches: Sequence[tuple[int, Sequence[int]]]) -> list[np.ndarray]:
        """Each branch: eval after the first `keep` tokens (every row's logits), the cache
        put back as it was."""
        return [self._branch(keep, tokens) for keep, tokens in branches]

    def _branch(self, keep: int, tokens: Sequence[int]) -> np.ndarray:
        if not 0 < keep <= len(self._tokens):
            raise ValueError(f"eval_branches: keep={keep} of {len(self._tokens)}")
        saved, first = (self._tokens[keep:], self._states[keep:]), self._first
        self.truncate(keep)
        try:
            return self.eval(tokens, n_logits=len(tokens))
        finally:
            self.truncate(keep)
            self._tokens += saved[0]
            self._states += saved[1]
            self._first = first

    def truncate(self, n: int) -> None:
        if n < 0:
            raise ValueError("truncate: n must be >= 0")
        del self._tokens[n:]
        del self._states[n:]
        if n < self._first:
            self._first = 0

    def save_state(self) -> bytes:
        """The hidden states, float64 (exact)."""
        return np.asarray(self._states, dtype=np.float64).tobytes()

    def load_state(self, tokens: Sequence[int], data: bytes) -> None:
        self.truncate(0)
        dim = self._A.shape[0]
        if len(data) != len(tokens) * dim * 8:
            raise BackendError(f"a saved state of {len(data)} bytes is not {len(tokens)} tokens' states")
        states = np.frombuffer(data, dtype=np.float64).reshape(len(tokens), dim)
        self._tokens = [int(t) for t in tokens]
        self._states = list(states.copy())
        self._first = len(self._tokens)

    def close(self) -> None:
        self.truncate(0)
