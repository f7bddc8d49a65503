"""llama.cpp and transformers on the same tiny weights compute the same model.

tests/tiny.py writes one random Llama twice (HF directory, GGUF with llama.cpp's Q/K
permutation); if either backend mishandled positions, rollback, the tokenizer or the chat
template, these comparisons would fail.
"""

from __future__ import annotations

import numpy as np
import pytest

from pedit.backends import open_backend
from pedit.engine.decode import DecodeOptions, generate
from pedit.events import Finished
from pedit.models.convert import convert_gguf, converted_dir
from pedit.models.progress import quietly
from test_backends import TEXTS


@pytest.fixture(scope="module")
def pair(tiny_hf, tiny_gguf):
    hf = open_backend("transformers", tiny_hf, n_ctx=1024)
    lc = open_backend("llama.cpp", tiny_gguf, n_ctx=1024)
    yield hf, lc
    hf.close()
    lc.close()


@pytest.mark.parametrize("text", TEXTS)
def test_same_tokens(pair, text):
    hf, lc = pair
    assert hf.tokenize(text) == lc.tokenize(text)
    assert hf.tokenize(text, special=True) == lc.tokenize(text, special=True)


def test_same_chat_prompt(pair):
    hf, lc = pair
    msgs = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "fix: teh cat"}]
    assert hf.render_chat(msgs) == lc.render_chat(msgs)


def test_same_greedy_continuation(pair):
    hf, lc = pair
    prompt = hf.tokenize(hf.render_chat([{"role": "user", "content": "The quick brown fox"}]), special=True)
    runs = [list(generate(b, prompt, DecodeOptions(max_tokens=48)))[-1] for b in pair]
    assert all(isinstance(r, Finished) for r in runs)
    assert runs[0].tokens == runs[1].tokens and len(runs[0].tokens) > 0
    assert runs[0].text == runs[1].text


def test_logits_agree(pair):
    hf, lc = pair
    toks = hf.tokenize(TEXTS[0] + TEXTS[1])
    for b in pair:
        b.truncate(0)
    a, c = (b.eval(toks, n_logits=len(toks)) for b in pair)
    assert np.abs(a - c).max() < 5e-2  # llama.cpp: f16 KV cache
    assert (a.argmax(1) == c.argmax(1)).all()


def test_gguf_converted_for_transformers_is_the_same_model(tiny_hf, tiny_gguf, tmp_path):
    out = quietly(convert_gguf(tiny_gguf, converted_dir(tiny_gguf, tmp_path)))
    assert (out / "config.json").is_file() and quietly(convert_gguf(tiny_gguf, out)) == out  # cached
    original, converted = open_backend("transformers", tiny_hf), open_backend("transformers", out)
    toks = original.tokenize(TEXTS[1])
    assert converted.tokenize(TEXTS[1]) == toks
    np.testing.assert_allclose(
        original.eval(toks, n_logits=len(toks)), converted.eval(toks, n_logits=len(toks)), atol=1e-5
    )
