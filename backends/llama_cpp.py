"""llama.cpp through llama-cpp-python's low-level (ctypes) API.

Why not `llama_cpp.Llama`: it either computes logits for every position of every batch
(`logits_all=True`: ~30% slower prefill and n_ctx x n_vocab floats of memory) or for the last
one only. Speculative verification needs logits for exactly the draft positions, so pedit
fills `llama_batch.logits` itself, and rolls the KV cache back with `llama_memory_seq_rm`.

The chat template is the GGUF's own (`tokenizer.chat_template`), rendered with Jinja.
"""

from __future__ import annotations

import ctypes
import logging
import os
import re
import weakref
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from .base import BackendError, Capabilities, check_room, detokenize_bytes
from .chat import CHATML, ChatTemplate

# sequences eval_branches reads in one llama_decode (besides sequence 0): 9 windows of a
# paragraph's swaps (55 rows) took 0.78 s in one pass, 0.93 s as 7 + 2; a plain step is no
# slower with 16 sequences than with 8, and the context 7 MB larger (default model, 2 AMD EPYC cores)
BRANCHES = 15


def default_threads() -> int:
    """CPUs this process may run on (cgroup/affinity aware), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # macOS, Windows
        return max(1, os.cpu_count() or 1)


def _free(L, model, ctx, batch) -> None:
    L.llama_batch_free(batch)
    L.llama_free(ctx)
    L.llama_model_free(model)


def device() -> str:
    """'gpu (offload)' when this llama-cpp-python build can offload layers (built with
    CMAKE_ARGS="-DGGML_CUDA=on", Metal on macOS...), else 'cpu'."""
    import llama_cpp as L

    return "gpu (offload)" if L.llama_supports_gpu_offload() else "cpu"


def cpu_features() -> list[str]:
    """The instruction sets this build's CPU backend runs, as ggml names them ("AVX2",
    "AVX512", "AVX512_VNNI", "AMX_INT8", "NEON", ...): llama_print_system_info's "X = 1"."""
    import llama_cpp as L

    info = L.llama_print_system_info().decode("utf-8", "replace")
    return re.findall(r"\b(\w+) = 1\b", info)


def _load_model(L, path: Path, n_gpu_layers: int | None):
    """(model, whether any of its layers is on the GPU): all layers on the GPU when this
    llama.cpp build has one (CUDA, Metal...), else none, unless n_gpu_layers says."""
    gpu = bool(L.llama_supports_gpu_offload())
    mp = L.llama_model_default_params()
    mp.n_gpu_layers = (-1 if gpu else 0) if n_gpu_layers is None else n_gpu_layers
    model = L.llama_model_load_from_file(str(path).encode(), mp)
    if not model:
        raise BackendError(f"llama.cpp could not load {path} (not a GGUF model it supports?)")
    return model, bool(gpu and mp.n_gpu_layers)


def _new_context(L, model, *, n_ctx: int, n_batch: int, threads: int):
    """A context of n_ctx tokens (at most the model's training context), batches of n_batch
    (at most n_ctx) and BRANCHES + 1 sequences; the model is freed if it cannot be made."""
    n_train = L.llama_model_n_ctx_train(model)
    cp = L.llama_context_default_params()
    cp.n_ctx = min(n_ctx, n_train) if n_train > 0 else n_ctx
    cp.n_batch = cp.n_ubatch = min(n_batch, cp.n_ctx)  # llama.cpp caps a batch at n_ctx anyway
    cp.n_threads = cp.n_threads_batch = threads
    # sequences for eval_branches, in the same cells (unified: the first keeps all
    # n_ctx of them; a branch shares its prefix's cells and adds only its own)
    cp.n_seq_max, cp.kv_unified = BRANCHES + 1, True
    ctx = L.llama_init_from_model(model, cp)
    if not ctx:
        L.llama_model_free(model)
        raise BackendError(f"llama.cpp could not create a context of {cp.n_ctx} tokens")
    return ctx


def _tokenize(L, vocab, text: str, special: bool) -> list[int]:
    data = text.encode("utf-8")
    cap = len(data) + 16
    while True:
        buf = (L.llama_token * cap)()
        n = L.llama_tokenize(vocab, data, len(data), buf, cap, False, special)
        if n >= 0:
            return list(buf[:n])
        cap = -n


def _piece(L, vocab, token: int, special: bool) -> bytes:
    if token < 0:
        return b""
    buf = ctypes.create_string_buffer(64)
    n = L.llama_token_to_piece(vocab, token, buf, len(buf), 0, special)
    if n < 0:
        buf = ctypes.create_string_buffer(-n)
        n = L.llama_token_to_piece(vocab, token, buf, len(buf), 0, special)
    return buf.raw[:n]


def _chat_template(L, model, vocab) -> ChatTemplate:
    """The GGUF's own chat template (ChatML when it has none), with its BOS and EOS text."""
    template = L.llama_model_chat_template(model, None)
    return ChatTemplate(
        template.decode("utf-8") if template else CHATML,
        bos_token=_piece(L, vocab, L.llama_vocab_bos(vocab), True).decode("utf-8", "replace"),
        eos_token=_piece(L, vocab, L.llama_vocab_eos(vocab), True).decode("utf-8", "replace"),
    )


def _fill(batch, entries: Sequence[tuple[int, int, int, bool]]) -> None:
    """The batch: (token, position, sequence, logits wanted) per row."""
    batch.n_tokens = len(entries)
    for i, (tok, pos, seq, out) in enumerate(entries):
        batch.token[i] = tok
        batch.pos[i] = pos
        batch.n_seq_id[i] = 1
        batch.seq_id[i][0] = seq
        batch.logits[i] = out


class LlamaCppBackend:
    name = "llama.cpp"

    def __init__(
        self,
        path: str | os.PathLike,
        *,
        n_ctx: int = 8192,
        n_threads: int | None = None,
        n_batch: int = 512,
        n_gpu_layers: int | None = None,
        verbose: bool = False,
    ):
        import llama_cpp as L  # imported here so that `pedit --help` never loads the library

        # llama-cpp-python prints llama.cpp's log through this logger; above CRITICAL silences all of it.
        logging.getLogger("llama-cpp-python").setLevel(logging.DEBUG if verbose else logging.CRITICAL + 1)
        self._L = L
        path = Path(path)
        if not path.is_file():
            raise BackendError(f"model file not found: {path}")
        L.llama_backend_init()
        model, on_gpu = _load_model(L, path, n_gpu_layers)
        vocab = L.llama_model_get_vocab(model)
        threads = n_threads or default_threads()
        ctx = _new_context(L, model, n_ctx=n_ctx, n_batch=n_batch, threads=threads)
        # What the context really took (llama.cpp may lower n_batch further): eval never
        # gives llama_decode more tokens than this at once (more aborts the process).
        n_batch = int(L.llama_n_batch(ctx))
        batch = L.llama_batch_init(n_batch, 0, 1)
        self._model, self._vocab, self._ctx, self._batch = model, vocab, ctx, batch
        self._finalizer = weakref.finalize(self, _free, L, model, ctx, batch)
        self._mem = L.llama_get_memory(ctx)
        self._n_batch = n_batch
        self._held: list[int] = []  # the tokens of sequence 0's cells, in order
        self._first = 0  # first_read
        self._pieces: dict[int, bytes] = {}
        self.path = path
        self.library_version = getattr(L, "__version__", "")  # a saved state's format follows it
        self.n_threads = threads
        self.n_ctx = int(L.llama_n_ctx(ctx))
        self.n_vocab = int(L.llama_vocab_n_tokens(vocab))
        device = "gpu" if on_gpu else "cpu"
        self.capabilities = Capabilities(rollback=True, device=device, branch=True, state=True)
        self.branches = BRANCHES
        self.eos_ids = frozenset(t for t in range(self.n_vocab) if L.llama_vocab_is_eog(vocab, t))
        self._chat = _chat_template(L, model, vocab)

    # --- text ---------------------------------------------------------------------------
    def tokenize(self, text: str, *, special: bool = False) -> list[int]:
        return _tokenize(self._L, self._vocab, text, special)

    def count_tokens(self, text: str) -> int:
        return len(self.tokenize(text))

    def token_bytes(self, token: int) -> bytes:
        piece = self._pieces.get(token)
        if piece is None:
            piece = self._pieces[token] = _piece(self._L, self._vocab, token, False)
        return piece

    def detokenize(self, tokens: Sequence[int]) -> str:
        return detokenize_bytes(self, tokens)

    def render_chat(self, messages, *, add_generation_prompt: bool = True) -> str:
        return self._chat.render(messages, add_generation_prompt=add_generation_prompt)

    # --- the model ----------------------------------------------------------------------
    @property
    def n_past(self) -> int:
        return len(self._held)

    @property
    def held(self) -> Sequence[int]:
        return self._held

    @property
    def first_read(self) -> int:
        return self._first

    def eval(self, tokens: Sequence[int], *, n_logits: int = 1) -> np.ndarray:
        n = len(tokens)
        if not n or not 1 <= n_logits <= n:
            raise ValueError(f"eval: {n} tokens, n_logits={n_logits}")
        check_room(self.n_past, n, self.n_ctx)
        L = self._L
        if not self._held:
            self._first = n
        first_out = n - n_logits  # index in `tokens` of the first position whose logits we return
        if n <= self._n_batch:  # one llama_decode: its own logits buffer, no copy
            self._decode(tokens, first_out)
            rows = L.llama_get_logits(self._ctx)  # the flagged rows, contiguous, in batch order
            self._held += tokens
            return np.ctypeslib.as_array(rows, shape=(n_logits, self.n_vocab))
        out = np.empty((n_logits, self.n_vocab), dtype=np.float32)
        for start in range(0, n, self._n_batch):  # a prompt longer than n_batch goes in slices
            chunk = tokens[start : start + self._n_batch]
            self._decode(chunk, first_out - start)
            for i in range(max(0, first_out - start), len(chunk)):
                row = L.llama_get_logits_ith(self._ctx, i)
                out[start + i - first_out] = np.ctypeslib.as_array(row, shape=(self.n_vocab,))
            self._held += chunk
        return out

    def eval_branches(self, branches: Sequence[tuple[int, Sequence[int]]]) -> list[np.ndarray]:
        """Branch j gets sequence j+1, holding the cells of sequence 0's first `keep` tokens
        (a copy of their metadata, no compute); up to BRANCHES of them are read in one
        llama_decode (as many tokens as a batch takes), every row's logits kept; then the
        branch sequences are dropped: sequence 0 is as it was."""
        for keep, tokens in branches:
            if not tokens or len(tokens) > self._n_batch or not 0 < keep <= self.n_past:
                raise ValueError(f"eval_branches: keep={keep} of {self.n_past}, {len(tokens)} tokens")
        out: list[np.ndarray] = []
        group: list[tuple[int, Sequence[int]]] = []
        for branch in branches:
            size = sum(len(t) for _, t in group) + len(branch[1])
            if group and (len(group) == BRANCHES or size > self._n_batch):
                out += self._read_branches(group)
                group = []
            group.append(branch)
        return out + (self._read_branches(group) if group else [])

    def _read_branches(self, group: list[tuple[int, Sequence[int]]]) -> list[np.ndarray]:
        n = sum(len(t) for _, t in group)
        check_room(self.n_past, n, self.n_ctx)  # the branches' cells come out of the same n_ctx
        L, mem = self._L, self._mem
        for s, (keep, _) in enumerate(group, 1):
            L.llama_memory_seq_cp(mem, 0, s, 0, keep)
        try:
            entries = [(tok, keep + i, s, True) for s, (keep, toks) in enumerate(group, 1)
                       for i, tok in enumerate(toks)]  # fmt: skip
            _fill(self._batch, entries)
            rc = L.llama_decode(self._ctx, self._batch)
            if rc != 0:
                raise BackendError(f"llama_decode failed with code {rc} (reading branches)")
            rows = np.ctypeslib.as_array(L.llama_get_logits(self._ctx), shape=(n, self.n_vocab))
            cuts = np.cumsum([len(t) for _, t in group])[:-1]
            return [r.copy() for r in np.split(rows, cuts)]
        finally:
            for s in range(1, len(group) + 1):
                L.llama_memory_seq_rm(mem, s, -1, -1)

    def _decode(self, chunk: Sequence[int], first_out: int) -> None:
        """llama_decode `chunk` at n_past.. in sequence 0, with logits from index first_out on."""
        start, batch = self.n_past, self._batch
        batch.n_tokens = len(chunk)
        for i, tok in enumerate(chunk):  # the hot path: no per-token objects
            batch.token[i], batch.pos[i], batch.n_seq_id[i] = tok, start + i, 1
            batch.seq_id[i][0], batch.logits[i] = 0, i >= first_out
        rc = self._L.llama_decode(self._ctx, self._batch)
        if rc != 0:
            self._L.llama_memory_seq_rm(self._mem, 0, start, -1)
            raise BackendError(f"llama_decode failed with code {rc}")

    def truncate(self, n: int) -> None:
        if n < 0:
            raise ValueError("truncate: n must be >= 0")
        if n >= self.n_past:
            return
        if not self._L.llama_memory_seq_rm(self._mem, 0, n, -1):
            raise BackendError(f"llama.cpp could not roll the KV cache back to {n} tokens")
        del self._held[n:]
        if n < self._first:
            self._first = 0

    def save_state(self) -> bytes:
        """Sequence 0's cells, serialized by llama.cpp (llama_state_seq_get_data)."""
        L = self._L
        size = L.llama_state_seq_get_size(self._ctx, 0)
        buf = (ctypes.c_uint8 * size)()
        n = L.llama_state_seq_get_data(self._ctx, buf, size, 0)
        if not n:
            raise BackendError("llama.cpp could not save the cache's state")
        return ctypes.string_at(buf, n)

    def load_state(self, tokens: Sequence[int], data: bytes) -> None:
        self.truncate(0)
        buf = (ctypes.c_uint8 * len(data)).from_buffer_copy(data)
        if not self._L.llama_state_seq_set_data(self._ctx, buf, len(data), 0):
            self._L.llama_memory_seq_rm(self._mem, 0, -1, -1)
            raise BackendError("llama.cpp could not load the saved state")
        self._held = [int(t) for t in tokens]
        self._first = len(self._held)

    def close(self) -> None:
        self._finalizer()
