"""transformers + torch: any causal LM in a Hugging Face model directory.

fp32 on CPU (the only dtype whose CPU kernels are fast and exact enough here), bf16 on CUDA
when the GPU supports it. The KV cache is one `DynamicCache`; rollback is
`DynamicCache.crop(-k)` (transformers 5.x takes the number of tokens to remove, negative).
`logits_to_keep` makes the LM head run on the positions asked for only.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from .base import BackendError, Capabilities, check_room, detokenize_bytes
from .chat import CHATML, ChatTemplate


def _byte_decoder() -> dict[str, int]:
    """GPT-2's byte-level alphabet, inverted: printable stand-in char -> byte value."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1))
    bs += list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {chr(c): b for b, c in zip(bs, cs, strict=True)}


def token_byte_table(tokenizer) -> list[bytes]:
    """bytes of every token id; b"" for special tokens. Byte-level BPE (GPT-2, Qwen, SmolLM,
    Llama 3) is exact; SentencePiece vocabularies map "▁" to a space and <0xNN> to a byte."""
    decoder = json.loads(tokenizer.backend_tokenizer.to_str()).get("decoder") or {}
    byte_level = "ByteLevel" in json.dumps(decoder)
    table_bytes = _byte_decoder()
    special = set(tokenizer.all_special_ids)
    added = {i for i, t in tokenizer.added_tokens_decoder.items() if t.special}
    size = max(len(tokenizer), max(tokenizer.get_vocab().values()) + 1)
    pieces = tokenizer.convert_ids_to_tokens(list(range(size)))
    table = []
    for i, piece in enumerate(pieces):
        if piece is None or i in special or i in added:
            table.append(b"")
        elif byte_level and all(c in table_bytes for c in piece):
            table.append(bytes(table_bytes[c] for c in piece))
        elif len(piece) == 6 and piece.startswith("<0x") and piece.endswith(">"):
            table.append(bytes([int(piece[3:5], 16)]))
        else:
            table.append(piece.replace("▁", " ").encode("utf-8"))
    return table


def device() -> str:
    """'cuda (GPU name)' when torch sees a CUDA device (a CUDA build of torch), else 'cpu'."""
    import torch

    if torch.cuda.is_available():
        return f"cuda ({torch.cuda.get_device_name(0)})"
    return "cpu"


class TransformersBackend:
    name = "transformers"

    def __init__(
        self,
        path: str | os.PathLike,
        *,
        n_ctx: int = 8192,
        device: str | None = None,
        n_threads: int | None = None,
    ):
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer, DynamicCache

        path = Path(path)
        if not (path / "config.json").is_file():
            raise BackendError(f"not a Hugging Face model directory (no config.json): {path}")
        device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        if device == "cuda":
            dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        else:
            dtype = torch.float32
        if n_threads:
            torch.set_num_threads(n_threads)
        self._torch = torch
        self._tok = AutoTokenizer.from_pretrained(path)
        self._model = AutoModelForCausalLM.from_pretrained(path, dtype=dtype).to(device).eval()
        self._new_cache = lambda: DynamicCache(config=self._model.config)
        self._cache = self._new_cache()
        self._device = device
        self._held: list[int] = []  # the tokens in the cache, in order
        self._first = 0  # first_read
        config = self._model.config
        self.path = path
        self.n_ctx = min(n_ctx, getattr(config, "max_position_embeddings", n_ctx) or n_ctx)
        self.n_vocab = int(self._model.get_output_embeddings().weight.shape[0])
        self.capabilities = Capabilities(rollback=True, device=device)
        self.eos_ids = frozenset(_eos_ids(self._model, self._tok))
        self._bytes = token_byte_table(self._tok)
        self._bytes += [b""] * (self.n_vocab - len(self._bytes))  # padded LM heads
        template = self._tok.chat_template
        self._chat = None if template else ChatTemplate(CHATML, eos_token=self._tok.eos_token or "")

    # --- text ---------------------------------------------------------------------------
    def tokenize(self, text: str, *, special: bool = False) -> list[int]:
        enc = self._tok(text, add_special_tokens=False, split_special_tokens=not special)
        return list(enc["input_ids"])

    def count_tokens(self, text: str) -> int:
        return len(self.tokenize(text))

    def token_bytes(self, token: int) -> bytes:
        return self._bytes[token]

    def detokenize(self, tokens: Sequence[int]) -> str:
        return detokenize_bytes(self, tokens)

    def render_chat(self, messages, *, add_generation_prompt: bool = True) -> str:
        if self._chat is not None:
            return self._chat.render(messages, add_generation_prompt=add_generation_prompt)
        return self._tok.apply_chat_template(
            list(messages), tokenize=False, add_generation_prompt=add_generation_prompt
        )

    # --- the model ----------------------------------------------------------------------
    @property
    def model(self):
        """The torch model itself (the benchmark runs transformers' own generate() on it)."""
        return self._model

    @property
    def tokenizer(self):
        """The Hugging Face tokenizer (the benchmark's Outlines peer wraps it with the model)."""
        return self._tok

    @property
    def torch(self):
        return self._torch

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
        torch = self._torch
        ids = torch.tensor([list(tokens)], dtype=torch.long, device=self._device)
        with torch.inference_mode():
            out = self._model(
                input_ids=ids, past_key_values=self._cache, use_cache=True, logits_to_keep=n_logits
            )
        if not self._held:
            self._first = n
        self._held += tokens
        # out.logits: [1, n_logits, n_vocab]
        return out.logits[0, -n_logits:].float().cpu().numpy()

    def truncate(self, n: int) -> None:
        if n < 0:
            raise ValueError("truncate: n must be >= 0")
        if n >= self.n_past:
            return
        if n == 0:
            self._cache = self._new_cache()
        else:
            self._cache.crop(n - self.n_past)  # negative: remove that many from the end
        del self._held[n:]
        if n < self._first:
            self._first = 0

    def close(self) -> None:
        self._cache = None
        self._model = None


def _eos_ids(model, tokenizer) -> set[int]:
    ids: set[int] = set()
    for source in (getattr(model, "generation_config", None), model.config, tokenizer):
        value = getattr(source, "eos_token_id", None)
        if isinstance(value, int):
            ids.add(value)
        elif isinstance(value, (list, tuple)):
            ids.update(int(v) for v in value)
    if not ids:
        raise BackendError("the model declares no end-of-sequence token")
    return ids
