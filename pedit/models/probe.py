"""The child side of the llama.cpp build check (buildcheck.py): a tiny random Qwen2 model
quantized by the build itself, loaded and run through pedit's own backend.

`python -P -m pedit.models.probe DIR` writes DIR/probe-f32.gguf (numpy, no gguf package),
quantizes it with llama.cpp to Q4_K_M (llama_model_quantize), opens it with
LlamaCppBackend and runs a batch, one token and a branch read: the quantized matmuls (batch
and single row) a command runs first. A build that cannot run here dies of a signal
(SIGSEGV, SIGILL); a normal exit, whatever its code, is not that.

The shapes pick the bundled models' tensor types: rows of 256 (FFN) quantize to Q4_K and
Q6_K as in qwen2.5-coder-1.5b; rows of 384 (DIM) are not a multiple of 256, so llama.cpp
falls back to Q5_0 and Q8_0 as in qwen2.5-coder-0.5b (896-wide). Every output dimension is
a multiple of 32, so builds that repack weights (AVX2 8x8, AMX tiles) repack them all.
"""

from __future__ import annotations

import struct
import sys
from pathlib import Path

import numpy as np

DIM, FFN, LAYERS, HEADS, KV_HEADS, VOCAB, CTX = 384, 768, 4, 3, 1, 512, 256
SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
Q4_K_M = 15  # llama_ftype LLAMA_FTYPE_MOSTLY_Q4_K_M

# GGUF v3 value types (gguf.md): uint32, int32, float32, bool, string, array
U32, I32, F32, BOOL, STR, ARR = 4, 5, 6, 7, 8, 9


def _string(s: str) -> bytes:
    data = s.encode("utf-8")
    return struct.pack("<Q", len(data)) + data


def _value(v) -> tuple[int, bytes]:
    if isinstance(v, bool):
        return BOOL, struct.pack("<?", v)
    if isinstance(v, int):
        return U32, struct.pack("<I", v)
    if isinstance(v, float):
        return F32, struct.pack("<f", v)
    if isinstance(v, str):
        return STR, _string(v)
    kind = I32 if isinstance(v[0], int) else STR
    items = b"".join(struct.pack("<i", x) if kind == I32 else _string(x) for x in v)
    return ARR, struct.pack("<IQ", kind, len(v)) + items


def write_gguf(path: Path, kv: dict, tensors: dict[str, np.ndarray], align: int = 32) -> Path:
    """A GGUF v3 file of F32 tensors: header, key-values, tensor infos (dims innermost
    first), then the data, each tensor aligned to `align` bytes."""
    out = bytearray(b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kv)))
    for key, v in kv.items():
        kind, data = _value(v)
        out += _string(key) + struct.pack("<I", kind) + data
    offset, blobs = 0, []
    for name, t in tensors.items():
        out += _string(name) + struct.pack("<I", t.ndim) + struct.pack(f"<{t.ndim}Q", *t.shape[::-1])
        out += struct.pack("<IQ", 0, offset)  # type F32, offset in the data section
        blob = np.ascontiguousarray(t, dtype="<f4").tobytes()
        blobs.append(blob + bytes(-len(blob) % align))
        offset += len(blobs[-1])
    out += bytes(-len(out) % align)
    path.write_bytes(bytes(out) + b"".join(blobs))
    return path


def _byte_alphabet() -> list[str]:
    """GPT-2's byte -> printable character map (bytes_to_unicode), 256 single tokens."""
    keep = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    extra = iter(range(256, 512))
    return [chr(b) if b in keep else chr(next(extra)) for b in range(256)]


def probe_model(path: Path, seed: int = 0) -> Path:
    """The tiny Qwen2 model, random F32 weights, a byte-level vocabulary of VOCAB tokens."""
    rng = np.random.default_rng(seed)
    w = lambda *shape: rng.standard_normal(shape, dtype=np.float32) * np.float32(0.05)  # noqa: E731
    kv_dim = DIM // HEADS * KV_HEADS
    tensors = {"token_embd.weight": w(VOCAB, DIM), "output_norm.weight": np.ones(DIM, np.float32)}
    tensors["output.weight"] = w(VOCAB, DIM)
    for i in range(LAYERS):
        b = f"blk.{i}."
        tensors |= {
            b + "attn_norm.weight": np.ones(DIM, np.float32), b + "ffn_norm.weight": np.ones(DIM, np.float32),
            b + "attn_q.weight": w(DIM, DIM), b + "attn_q.bias": w(DIM),
            b + "attn_k.weight": w(kv_dim, DIM), b + "attn_k.bias": w(kv_dim),
            b + "attn_v.weight": w(kv_dim, DIM), b + "attn_v.bias": w(kv_dim),
            b + "attn_output.weight": w(DIM, DIM),
            b + "ffn_gate.weight": w(FFN, DIM), b + "ffn_up.weight": w(FFN, DIM),
            b + "ffn_down.weight": w(DIM, FFN),
        }  # fmt: skip
    tokens = _byte_alphabet() + ["ĠĠ"] + SPECIALS
    tokens += [f"<|pad{i}|>" for i in range(VOCAB - len(tokens))]
    types = [3 if t in SPECIALS else 1 for t in tokens]  # CONTROL, NORMAL
    kv = {
        "general.architecture": "qwen2", "general.name": "pedit build check", "general.file_type": 0,
        "qwen2.context_length": CTX, "qwen2.embedding_length": DIM, "qwen2.block_count": LAYERS,
        "qwen2.feed_forward_length": FFN, "qwen2.attention.head_count": HEADS,
        "qwen2.attention.head_count_kv": KV_HEADS, "qwen2.attention.layer_norm_rms_epsilon": 1e-6,
        "qwen2.rope.freq_base": 10000.0,
        "tokenizer.ggml.model": "gpt2", "tokenizer.ggml.pre": "qwen2", "tokenizer.ggml.tokens": tokens,
        "tokenizer.ggml.token_type": types, "tokenizer.ggml.merges": ["Ġ Ġ"],
        "tokenizer.ggml.bos_token_id": tokens.index("<|endoftext|>"),
        "tokenizer.ggml.eos_token_id": tokens.index("<|im_end|>"), "tokenizer.ggml.add_bos_token": False,
    }  # fmt: skip
    return write_gguf(path, kv, tensors)


def quantize(src: Path, dst: Path) -> Path:
    """src quantized to Q4_K_M by this llama.cpp build (with its fallbacks for odd rows)."""
    import llama_cpp as L

    params = L.llama_model_quantize_default_params()
    params.ftype = Q4_K_M
    if L.llama_model_quantize(str(src).encode(), str(dst).encode(), params) != 0:
        raise RuntimeError(f"llama.cpp could not quantize {src}")
    return dst


def run(folder: Path) -> None:
    """The pass: load the quantized probe, then what a command's first passes do."""
    from pedit.backends.llama_cpp import LlamaCppBackend

    model = quantize(probe_model(folder / "probe-f32.gguf"), folder / "probe-q4_k_m.gguf")
    backend = LlamaCppBackend(model, n_ctx=CTX)
    try:
        prompt = [(7 * i) % 256 for i in range(48)]
        backend.eval(prompt, n_logits=8)  # a batch: the quantized GEMMs of a prompt
        backend.eval([42])  # one token: the GEMVs of decoding
        backend.eval_branches([(40, [1, 2, 3]), (44, [4, 5])])  # a branch read
    finally:
        backend.close()


if __name__ == "__main__":
    run(Path(sys.argv[1]))
