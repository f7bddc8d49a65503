"""The backend protocols: what the decoder needs from a language model, and nothing more.

Two kinds, each with the loop it needs (engine/edit.py picks it, the one place that asks):
a local backend (LocalBackend: tokens in, logits out; engine/speculative.py's loop) and a
remote one (RemoteBackend: messages in, text deltas and the server's usage out;
engine/remote.py's loop, backends/openai.py).

A local backend owns one sequence in a KV cache. The decoder appends tokens with `eval`, asks for
the logits of the last few positions it appended, and rolls the cache back with `truncate`
when a draft was rejected. The backend keeps the list of the tokens its cache holds
(`held`), so whatever ran before (a paragraph, another file, a session's turn, a server's
request, the cost measurement), the next prompt reads only what it does not share.
Everything is in token ids (plain ints); text only crosses the boundary in `tokenize`,
`token_bytes` and the chat template.

Imports only the standard library (numpy for type hints only): the heavy libraries live in
the backend modules and are imported when a backend is loaded, never when pedit starts.
"""

from __future__ import annotations

import codecs
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypeGuard, runtime_checkable

if TYPE_CHECKING:  # the protocol's arrays; importing pedit.backends loads no numpy
    import numpy as np


@dataclass(frozen=True)
class Capabilities:
    """What a backend can do, declared, so the decoder never guesses from a class name."""

    rollback: bool  # truncate(n) drops KV entries after position n
    device: str = "cpu"  # where the model runs: "cpu", "cuda" (torch), "gpu" (llama.cpp offload)
    # True: a LocalBackend (eval() gives logits); False: a RemoteBackend, a server that
    # returns text (backends/openai.py). Read in one place: engine/edit.local.
    logits: bool = True
    # a Branching backend (eval_branches: several sequences that share the cache's prefix,
    # read in one pass); else a caller truncates and reads again
    branch: bool = False
    # a Stateful backend (save_state, load_state: the cache's cells as bytes and back), so a
    # prompt's shared start is read once per machine (pedit/app/prefixcache.py)
    state: bool = False


class BackendError(RuntimeError):
    """A backend cannot do what was asked (bad model file, context exhausted, ...)."""


class ContextFull(BackendError):
    """Appending the tokens would exceed the context window."""

    def __init__(self, n_past: int, n_new: int, n_ctx: int):
        self.numbers = (n_past, n_new, n_ctx)
        super().__init__(
            f"context window exhausted: {n_past} tokens in the cache + {n_new} new > n_ctx {n_ctx}"
        )
        self.n_past, self.n_new, self.n_ctx = n_past, n_new, n_ctx


@runtime_checkable
class LocalBackend(Protocol):
    name: str
    capabilities: Capabilities
    n_ctx: int  # the context window this backend was opened with
    n_vocab: int  # rows of the logits
    eos_ids: frozenset[int]  # tokens that end generation

    @property
    def n_past(self) -> int:
        """Tokens currently in the KV cache."""

    @property
    def held(self) -> Sequence[int]:
        """The tokens the KV cache holds, in order (n_past of them; do not modify): the
        next run keeps the prefix its prompt shares with them (engine/decode.prefill)."""

    @property
    def first_read(self) -> int:
        """How many of the held tokens one eval from position 0 read, or a loaded state
        held, 0 when that eval's tokens are no longer all held. On a real backend a batch is
        rounded differently from another split of the same tokens (and a near-tie then
        goes the other way), so a prompt's shared start is reused only when it was read
        alone, as a fresh reading would read it (app/jobs.py, app/prefixcache.py)."""

    def tokenize(self, text: str, *, special: bool = False) -> list[int]:
        """Text -> ids, no BOS added. special=True parses control tokens such as <|im_end|>."""

    def count_tokens(self, text: str) -> int:
        """len(tokenize(text)): what a RemoteBackend can only estimate."""

    def token_bytes(self, token: int) -> bytes:
        """The bytes a token stands for; b"" for control tokens. May be part of a UTF-8 char."""

    def detokenize(self, tokens: Sequence[int]) -> str:
        """Ids -> text, control tokens dropped; the inverse of tokenize(special=False)."""

    def render_chat(self, messages: Sequence[dict], *, add_generation_prompt: bool = True) -> str:
        """The model's own chat template applied to [{"role", "content"}, ...]."""

    def eval(self, tokens: Sequence[int], *, n_logits: int = 1) -> np.ndarray:
        """Append tokens at positions n_past.. and return float32 logits [n_logits, n_vocab]
        of the last n_logits of them (row i predicts the token after tokens[-n_logits + i]).
        The caller may modify the array (a keep-bias adds to it in place), and may use it
        only until the next eval, truncate or close: llama.cpp hands out a view of its own
        logits buffer (no copy of (k+1) x n_vocab floats per pass), which the next pass
        overwrites."""

    def truncate(self, n: int) -> None:
        """Keep the first n tokens of the KV cache, drop the rest."""

    def close(self) -> None:
        """Free the model and its cache."""


Backend = LocalBackend  # what the engine's local loop drives


class Branching(LocalBackend, Protocol):
    """A local backend that reads branches: sequences sharing the cache's prefix, several in
    one pass (llama.cpp: a copy of the prefix's cells, no compute; the reference backend)."""

    branches: int  # how many branches one pass reads (each of a few tokens)

    def eval_branches(self, branches: Sequence[tuple[int, Sequence[int]]]) -> list[np.ndarray]:
        """For each (keep, tokens): eval(tokens, n_logits=len(tokens)) as if the cache held
        only its first `keep` tokens; the cache left exactly as it was (same n_past, same
        entries). The arrays are the caller's (copies)."""


class Stateful(LocalBackend, Protocol):
    """A local backend whose cache can be saved and loaded."""

    def save_state(self) -> bytes:
        """The cache's cells (the tokens of `held`), in the backend's own format."""

    def load_state(self, tokens: Sequence[int], data: bytes) -> None:
        """The cache set to what save_state gave for `tokens` (same model, same context
        size); BackendError if the backend cannot load it (the cache is left empty)."""


def branching(backend: LocalBackend) -> TypeGuard[Branching]:
    return backend.capabilities.branch


def stateful(backend: LocalBackend) -> TypeGuard[Stateful]:
    return backend.capabilities.state


@runtime_checkable
class RemoteBackend(Protocol):
    """A server that writes the answer (backends/openai.py): the engine sends the messages
    and the predicted answer and reads text deltas, then the server's usage. No tokens, no
    logits, no cache of its own here: drafts, grammars and keep-biases are the server's
    business, or none."""

    name: str
    capabilities: Capabilities  # logits=False; device: "remote HOST"
    n_ctx: int  # the server's context window, as it says or as configured
    model: str | None  # the model asked for
    continues: bool  # it continues a final assistant message (the primed fence line)

    def count_tokens(self, text: str) -> int:
        """An estimate: the tokenizer is on the server (sizes chunks and limits)."""

    def stream(
        self,
        messages: Sequence[dict],
        *,
        prime: str = "",
        prediction: str | None = None,
        max_tokens: int,
        temperature: float = 0.0,
        top_p: float = 1.0,
        seed: int | None = None,
    ) -> Iterator:
        """The answer: text deltas (openai.Delta), then the usage (openai.Usage)."""

    def close(self) -> None:
        """Close the connection pool."""


class RemoteError(BackendError):
    """A remote server could not give an answer: one line that says why."""


@dataclass(frozen=True)
class Usage:
    """The server's figures for one answer (OpenAI's usage; None where it gave none)."""

    prompt_tokens: int
    completion_tokens: int
    accepted_prediction_tokens: int | None
    rejected_prediction_tokens: int | None
    forward_passes: int | None = None  # `pedit serve` says, in its extension field
    accepted_by_drafter: dict | None = None


@dataclass(frozen=True)
class Delta:
    """A piece of the answer's text; `source` the drafter that proposed it when the server
    says (`pedit serve`'s extension field), else None; `finish` OpenAI's finish_reason on
    the last one ("stop", "length")."""

    text: str
    source: str | None = None
    finish: str | None = None


AnyBackend = LocalBackend | RemoteBackend  # what a shell loads (app/loading.py)


def check_room(n_past: int, n_new: int, n_ctx: int) -> None:
    if n_past + n_new > n_ctx:
        raise ContextFull(n_past, n_new, n_ctx)


def detokenize_bytes(backend: Backend, tokens: Sequence[int]) -> str:
    """detokenize() for backends whose tokens map to byte strings: join, then decode once."""
    return b"".join(backend.token_bytes(t) for t in tokens).decode("utf-8", errors="replace")


class TextStream:
    """Incremental, UTF-8 safe detokenization: push(token) returns the new complete text.

    A byte-level token can end in the middle of a multi-byte character (an emoji is often
    three or four tokens); the incremental decoder holds those bytes back until the character
    is complete, so the concatenation of everything push() returned equals detokenize(all).
    """

    def __init__(self, backend: Backend):
        self._bytes_of = backend.token_bytes
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def push(self, token: int) -> str:
        return self._decoder.decode(self._bytes_of(token))

    def flush(self) -> str:
        return self._decoder.decode(b"", final=True)
