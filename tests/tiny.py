"""Tiny random models built in the test session: one set of weights, two file formats.

* a byte-level BPE tokenizer trained in-process with `tokenizers` (ChatML control tokens);
* a random `LlamaForCausalLM` saved as a Hugging Face directory (transformers backend);
* the *same* weights written as a GGUF with `gguf.GGUFWriter` (llama.cpp backend), with
  the Q/K row permutation llama.cpp's converter applies (convert_hf_to_gguf.py `permute`),
  so both backends compute the same function and can be compared.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
CHATML = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)
CORPUS = [
    "The quick brown fox jumps over the lazy dog. Their is many reasons why peoples enjoys reading.",
    "def rename(x):\n    count = x + 1\n    return count\n\nclass Editor:\n    pass\n",
    "# A heading\n\nSome *Markdown* text with `code`, lists:\n\n- one\n- two\n",
    "A good book takes you to another world, and it teaches you new things every day.",
    "Speculative decoding verifies many draft tokens in one forward pass. Naïve café — 東京 👋",
] * 20

DIM, LAYERS, HEADS, KV_HEADS, FFN, CTX = 64, 2, 4, 2, 128, 2048


def train_tokenizer(vocab_size: int = 400):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIALS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(CORPUS, trainer)
    return tok


def build_hf_model(out: Path, seed: int = 0) -> Path:
    """A random Llama in a Hugging Face directory, with the trained tokenizer and ChatML."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    tok = train_tokenizer()
    vocab = tok.get_vocab_size()
    eos = tok.token_to_id("<|im_end|>")
    config = LlamaConfig(
        vocab_size=vocab,
        hidden_size=DIM,
        intermediate_size=FFN,
        num_hidden_layers=LAYERS,
        num_attention_heads=HEADS,
        num_key_value_heads=KV_HEADS,
        max_position_embeddings=CTX,
        rms_norm_eps=1e-6,
        rope_theta=10000.0,
        tie_word_embeddings=False,
        initializer_range=0.2,
        bos_token_id=tok.token_to_id("<|endoftext|>"),
        eos_token_id=eos,
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config).eval()
    model.save_pretrained(out)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        eos_token="<|im_end|>",
        bos_token="<|endoftext|>",
        additional_special_tokens=["<|im_start|>"],
    )
    fast.chat_template = CHATML
    fast.save_pretrained(out)
    return out


def _permute(w: np.ndarray, n_head: int) -> np.ndarray:
    """HF -> llama.cpp row order for Q and K (rotate-half pairs -> interleaved pairs)."""
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def write_gguf(hf_dir: Path, out: Path) -> Path:
    """The HF directory's weights and tokenizer as an F32 llama GGUF."""
    import gguf
    from safetensors.numpy import load_file

    sd = load_file(str(hf_dir / "model.safetensors"))
    tj = json.loads((hf_dir / "tokenizer.json").read_text())
    vocab = {**tj["model"]["vocab"], **{t["content"]: t["id"] for t in tj["added_tokens"]}}
    tokens = [t for t, _ in sorted(vocab.items(), key=lambda kv: kv[1])]
    assert [vocab[t] for t in tokens] == list(range(len(tokens)))
    merges = [m if isinstance(m, str) else " ".join(m) for m in tj["model"]["merges"]]
    types = [gguf.TokenType.CONTROL if t in SPECIALS else gguf.TokenType.NORMAL for t in tokens]

    w = gguf.GGUFWriter(str(out), "llama")
    w.add_name("pedit-tiny-llama")
    w.add_context_length(CTX)
    w.add_embedding_length(DIM)
    w.add_block_count(LAYERS)
    w.add_feed_forward_length(FFN)
    w.add_head_count(HEADS)
    w.add_head_count_kv(KV_HEADS)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_rope_dimension_count(DIM // HEADS)
    w.add_rope_freq_base(10000.0)
    w.add_file_type(0)  # all F32
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("gpt-2")
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges(merges)
    w.add_bos_token_id(vocab["<|endoftext|>"])
    w.add_eos_token_id(vocab["<|im_end|>"])
    w.add_add_bos_token(False)
    w.add_chat_template(CHATML)

    f32 = lambda name: sd[name].astype(np.float32)  # noqa: E731
    w.add_tensor("token_embd.weight", f32("model.embed_tokens.weight"))
    w.add_tensor("output_norm.weight", f32("model.norm.weight"))
    w.add_tensor("output.weight", f32("lm_head.weight"))
    for i in range(LAYERS):
        p, b = f"model.layers.{i}.", f"blk.{i}."
        w.add_tensor(b + "attn_norm.weight", f32(p + "input_layernorm.weight"))
        w.add_tensor(b + "attn_q.weight", _permute(f32(p + "self_attn.q_proj.weight"), HEADS))
        w.add_tensor(b + "attn_k.weight", _permute(f32(p + "self_attn.k_proj.weight"), KV_HEADS))
        w.add_tensor(b + "attn_v.weight", f32(p + "self_attn.v_proj.weight"))
        w.add_tensor(b + "attn_output.weight", f32(p + "self_attn.o_proj.weight"))
        w.add_tensor(b + "ffn_norm.weight", f32(p + "post_attention_layernorm.weight"))
        w.add_tensor(b + "ffn_gate.weight", f32(p + "mlp.gate_proj.weight"))
        w.add_tensor(b + "ffn_up.weight", f32(p + "mlp.up_proj.weight"))
        w.add_tensor(b + "ffn_down.weight", f32(p + "mlp.down_proj.weight"))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return out


def model_work(make):
    """A stand-in for models.load (model work, models/progress.py) whose value is make()."""

    def load(*args, **kwargs):
        return make()
        yield

    return load
