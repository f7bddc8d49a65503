"""The peers, run on the same model file and the same prompt tokens as pedit.

- llama-cpp-python's own speculative path: `Llama(draft_model=LlamaPromptLookupDecoding(
  num_pred_tokens=k))`, greedy (`temp=0`), k=10 (its default) and k=2 (its advice for CPUs).
  It is a second `Llama` on the GGUF pedit's backend loaded (same weights, same threads).
- transformers' `generate(prompt_lookup_num_tokens=k)`, greedy, on the very torch model the
  transformers backend holds, k=10 and 20.

A peer knows nothing of pedit's closing fence, so it runs for exactly as many tokens as
plain decoding produced (or to EOS) and its tokens are compared with plain's. Figures
are taken with instruments, not estimated: forward passes counted on the model's
entry point (`Llama.eval`, a forward hook), draft tokens verified = what each pass
evaluated beyond its one new token, accepted = output tokens - decode passes (every
pass yields its accepted drafts plus one token of its own). Prefill time is until the
first output token (for transformers' assisted generation the first pass also verifies
a draft), decode time is from there to the last token.
"""

from __future__ import annotations

import time
from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class PeerResult:
    tokens: tuple[int, ...]
    forward_passes: int  # prefill included
    verified: int  # draft tokens evaluated in decode passes
    prefill_seconds: float
    decode_seconds: float
    estimated_plain_seconds: float = 0.0  # a peer shows no live speedup

    @property
    def accepted(self) -> int:
        return max(0, len(self.tokens) - self.forward_passes)

    @property
    def rejected(self) -> int:
        return max(0, self.verified - self.accepted)


PEERS = {
    "llama.cpp": (("llama-cpp-python lookup k=10", 10), ("llama-cpp-python lookup k=2", 2)),
    "transformers": (("transformers lookup 10", 10), ("transformers lookup 20", 20)),
}


class LlamaCppPeer:
    """llama-cpp-python's high-level Llama with prompt-lookup drafting."""

    def __init__(self, backend, n_ctx: int = 2048):
        from llama_cpp import Llama

        # logits_all (forced by a draft model) keeps n_ctx x n_vocab floats: keep n_ctx modest.
        self.llm = Llama(
            model_path=str(backend.path), n_ctx=n_ctx, n_threads=backend.n_threads,
            n_batch=512, logits_all=True, verbose=False,
        )  # fmt: skip
        self.eos = backend.eos_ids

    def run(self, prompt: list[int], n: int, k: int) -> PeerResult:
        from llama_cpp.llama_speculative import LlamaPromptLookupDecoding

        llm = self.llm
        llm.draft_model = LlamaPromptLookupDecoding(num_pred_tokens=k)
        sizes: list[int] = []
        inner = type(llm).eval

        def counted(tokens):
            sizes.append(len(tokens))
            return inner(llm, tokens)

        llm.eval = counted
        llm.reset()  # no prefix reuse from the previous run: every run pays its prefill
        out: list[int] = []
        t0 = time.perf_counter()
        first = t0
        try:
            for token in llm.generate(prompt, temp=0.0, top_k=1, top_p=1.0, min_p=0.0, repeat_penalty=1.0):
                if token in self.eos:
                    break
                out.append(token)
                if len(out) == 1:
                    first = time.perf_counter()
                if len(out) >= n:
                    break
        finally:
            del llm.eval
        end = time.perf_counter()
        verified = sum(s - 1 for s in sizes[1:])
        return PeerResult(
            tokens=tuple(out), forward_passes=len(sizes), verified=verified,
            prefill_seconds=first - t0, decode_seconds=end - first,
        )  # fmt: skip

    def close(self) -> None:
        self.llm.close()


class TransformersPeer:
    """transformers' generate() with prompt-lookup candidates, on the backend's own model."""

    def __init__(self, backend):
        self.backend = backend

    def run(self, prompt: list[int], n: int, k: int) -> PeerResult:
        from transformers import GenerationConfig

        torch, model = self.backend.torch, self.backend.model
        sizes: list[int] = []
        marks: list[float] = []

        def hook(module, args, kwargs):
            ids = kwargs.get("input_ids", args[0] if args else None)
            sizes.append(int(ids.shape[1]) if ids is not None else 1)

        class Clock:  # a transformers streamer: put() gets the prompt, then each step's tokens
            def put(self, value):
                marks.append(time.perf_counter())

            def end(self):
                pass

        eos = sorted(self.backend.eos_ids)
        config = GenerationConfig(
            max_new_tokens=n, do_sample=False, prompt_lookup_num_tokens=k,
            eos_token_id=eos, pad_token_id=eos[0],
        )  # fmt: skip
        ids = torch.tensor([prompt], dtype=torch.long, device=model.device)
        handle = model.register_forward_pre_hook(hook, with_kwargs=True)
        t0 = time.perf_counter()
        try:
            with torch.inference_mode():
                seq = model.generate(
                    ids, attention_mask=torch.ones_like(ids), generation_config=config, streamer=Clock()
                )
        finally:
            handle.remove()
        end = time.perf_counter()
        out = [int(t) for t in seq[0, len(prompt) :].tolist()]
        while out and out[-1] in self.backend.eos_ids:
            out.pop()
        first = marks[1] if len(marks) > 1 else end
        verified = sum(s - 1 for s in sizes[1:])
        return PeerResult(
            tokens=tuple(out), forward_passes=len(sizes), verified=verified,
            prefill_seconds=first - t0, decode_seconds=end - first,
        )  # fmt: skip

    def close(self) -> None:
        pass


def open_peer(backend):
    """The peer runner for a backend, or None (the reference backend has no peer)."""
    if backend.name == "llama.cpp":
        return LlamaCppPeer(backend)
    if backend.name == "transformers":
        return TransformersPeer(backend)
    return None
