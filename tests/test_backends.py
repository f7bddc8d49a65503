"""Backend conformance: every backend, on a tiny model, obeys the protocol's invariants."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pedit.backends import Backend, ContextFull, TextStream, open_backend

TEXTS = [
    "The quick brown fox jumps over the lazy dog.\n",
    "def rename(x):\n    count = x + 1\n    return count\n",
    "Naïve café — 東京 👋 emoji and accents\n\n\ttabs  and  spaces ",
    "",
    "<|im_end|> written in a file is text, not a control token",
]

# How close logits must be when the same position is computed in a different batch shape.
# The reference backend is exact by construction; llama.cpp keeps the KV cache in f16.
TOLERANCE = {"reference": 0.0, "llama.cpp": 2e-2, "transformers": 1e-4}


def test_is_a_backend(backend):
    assert isinstance(backend, Backend)  # the local protocol: tokens and logits
    assert backend.count_tokens("Hello, world") == len(backend.tokenize("Hello, world"))
    assert backend.capabilities.rollback and backend.capabilities.device == "cpu"
    assert backend.eos_ids and all(0 <= t < backend.n_vocab for t in backend.eos_ids)
    assert backend.n_ctx == 512 and backend.n_past == 0


@pytest.mark.parametrize("text", TEXTS)
def test_tokenize_detokenize_round_trip(backend, text):
    tokens = backend.tokenize(text)
    assert all(0 <= t < backend.n_vocab for t in tokens)
    assert backend.detokenize(tokens) == text


def test_control_tokens_only_parsed_when_asked(backend):
    text = "<|im_end|>"
    assert backend.detokenize(backend.tokenize(text)) == text
    special = backend.tokenize(text, special=True)
    assert len(special) == 1 and special[0] in backend.eos_ids
    assert backend.token_bytes(special[0]) == b""


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(max_size=60))
def test_text_stream_is_utf8_safe(backend, text):
    """Token by token, the stream's pieces are whole characters and add up to the text."""
    tokens = backend.tokenize(text)
    stream = TextStream(backend)
    pieces = [stream.push(t) for t in tokens] + [stream.flush()]
    assert "".join(pieces) == backend.detokenize(tokens) == text


def test_chat_template_renders_messages(backend):
    msgs = [{"role": "system", "content": "S-MARK"}, {"role": "user", "content": "U-MARK"}]
    text = backend.render_chat(msgs)
    assert text.index("S-MARK") < text.index("U-MARK")
    assert backend.render_chat(msgs, add_generation_prompt=False) != text
    tokens = backend.tokenize(text, special=True)
    assert len(tokens) < len(backend.tokenize(text))  # the markup became control tokens


def _prompt(backend) -> list[int]:
    return backend.tokenize("The quick brown fox jumps over the lazy dog. def rename(x): return x")


def test_eval_shapes_and_positions(backend):
    toks = _prompt(backend)
    logits = backend.eval(toks, n_logits=3)
    assert logits.shape == (3, backend.n_vocab) and logits.dtype == np.float32
    assert np.isfinite(logits).all()
    assert backend.n_past == len(toks)
    with pytest.raises(ValueError):
        backend.eval([], n_logits=1)
    with pytest.raises(ValueError):
        backend.eval(toks[:2], n_logits=3)


def test_eval_truncate_re_eval_is_identical(backend):
    """Roll back over a suffix and evaluate it again in the same batch shape: same logits."""
    toks = _prompt(backend)
    head, tail = toks[:10], toks[10:]
    backend.eval(head)
    first = backend.eval(tail, n_logits=len(tail)).copy()  # valid until the next eval: keep a copy
    backend.truncate(len(head))
    assert backend.n_past == len(head)
    again = backend.eval(tail, n_logits=len(tail))
    np.testing.assert_array_equal(first, again)


def test_truncate_then_diverge_matches_fresh_sequence(backend):
    """After a rollback the cache holds exactly the kept prefix: a different continuation
    gives the logits a fresh sequence would."""
    toks = _prompt(backend)
    other = backend.tokenize(" completely different words")
    backend.eval(toks)
    backend.truncate(8)
    after_rollback = backend.eval(other, n_logits=len(other)).copy()
    backend.truncate(0)
    fresh = backend.eval(toks[:8] + other, n_logits=len(other))
    tol = TOLERANCE[backend.name]
    np.testing.assert_allclose(after_rollback, fresh, atol=tol, rtol=0)


def test_held_is_what_the_cache_holds(backend):
    """`held` follows eval, truncate and a branch: the tokens of the cache, in order (what
    the next prompt's prefill keeps), as plain ints; a prompt longer than a batch too."""
    toks = _prompt(backend)
    backend.truncate(0)
    assert list(backend.held) == [] and backend.n_past == 0
    backend.eval(toks, n_logits=2)
    backend.truncate(5)
    backend.eval(toks[5:9])
    assert list(backend.held) == toks[:9] and backend.n_past == 9
    if backend.capabilities.branch:
        backend.eval_branches([(4, toks[:3])])
        assert list(backend.held) == toks[:9]
    long = (toks * 40)[: backend.n_ctx // 2]
    backend.truncate(0)
    backend.eval(long)
    assert list(backend.held) == long and backend.n_past == len(long)
    assert all(type(t) is int for t in backend.held)


def test_branches_read_after_a_prefix_and_leave_the_cache_as_it_was(backend):
    """eval_branches (where declared): each branch's logits are what a rollback to its
    prefix and a fresh read give, more branches than one pass reads included, and
    afterwards the cache holds the whole sequence still (its next logits are what they
    were)."""
    if not backend.capabilities.branch:
        pytest.skip(f"{backend.name} reads no branch (the caller truncates)")
    toks = _prompt(backend)
    words = [" completely different words", " and", " something else again, longer"]
    branches = [
        (1 + j % (len(toks) - 1), backend.tokenize(words[j % 3])) for j in range(backend.branches + 2)
    ]
    backend.eval(toks)
    got = backend.eval_branches(branches)
    assert backend.n_past == len(toks) and list(backend.held) == toks
    backend.truncate(len(toks) - 1)
    after = backend.eval(toks[-1:]).copy()
    tol = TOLERANCE[backend.name]
    assert len(got) == len(branches)
    for (keep, other), branched in zip(branches, got, strict=True):
        backend.truncate(0)
        fresh = backend.eval(toks[:keep] + other, n_logits=len(other))
        np.testing.assert_allclose(branched, fresh, atol=tol, rtol=0)
    backend.truncate(0)
    whole = backend.eval(toks).copy()
    np.testing.assert_allclose(after, whole, atol=tol, rtol=0)


def test_batched_logits_match_one_token_steps(backend):
    """Logits for all positions of a batch (what verification uses) agree with feeding the
    tokens one at a time (plain decoding): exactly on reference, closely elsewhere."""
    toks = _prompt(backend)
    batched = backend.eval(toks, n_logits=len(toks)).copy()
    backend.truncate(0)
    stepwise = np.concatenate([backend.eval([t]).copy() for t in toks])
    tol = TOLERANCE[backend.name]
    np.testing.assert_allclose(batched, stepwise, atol=tol, rtol=0)
    # What the bound means for decoding: with every logit within tol, the choice can differ
    # only where the step's top two are within 2 * tol (a near-tie); everywhere else it is
    # the same token (on reference, tol 0: at every position without an exact tie).
    top2 = np.sort(stepwise, axis=1)[:, -2:]
    clear = top2[:, 1] - top2[:, 0] > 2 * tol
    assert clear.sum() >= len(toks) // 2  # the check sees most positions, not only ties
    assert (batched.argmax(1) == stepwise.argmax(1))[clear].all()


def test_context_limit_is_a_clear_error(backend):
    toks = (_prompt(backend) * 100)[: backend.n_ctx]
    backend.eval(toks[:-1])
    with pytest.raises(ContextFull, match="context window"):
        backend.eval(toks[-1:] + toks[-1:])
    backend.eval(toks[-1:])  # exactly full is fine
    assert backend.n_past == backend.n_ctx


def test_reference_logits_depend_only_on_the_prefix():
    """The property the exact tests rely on: any batching, any rollback, same bits."""
    a = open_backend("reference")
    toks = a.tokenize("speculative decoding is lossless on the reference backend")
    whole = a.eval(toks, n_logits=len(toks)).copy()
    for split in (1, 5, 17):
        a.truncate(0)
        parts = [
            a.eval(toks[:split], n_logits=split).copy(),
            a.eval(toks[split:], n_logits=len(toks) - split),
        ]
        np.testing.assert_array_equal(np.concatenate(parts), whole)


def test_llama_cpp_batches_never_exceed_a_small_context(tiny_gguf):
    """n_ctx 257: llama.cpp pads the context (to 512 here) but caps its batch at the 257
    asked for; eval must give llama_decode no more than that at once, since more aborts
    the process (GGML_ASSERT n_tokens_all <= n_batch). So it runs in a child process; its
    logits match a context whose batch takes the whole prompt at once."""
    code = (
        "import sys, numpy as np\n"
        "from pedit.backends import open_backend\n"
        "small, big = (open_backend('llama.cpp', sys.argv[1], n_ctx=n) for n in (257, 512))\n"
        "toks = (small.tokenize('The quick brown fox jumps over the lazy dog. ') * 100)[: small.n_ctx]\n"
        "assert len(toks) > 257, len(toks)\n"
        "a, b = small.eval(toks, n_logits=3), big.eval(toks, n_logits=3)\n"
        "np.testing.assert_allclose(a, b, atol=2e-2, rtol=0)\n"
        "print(small.n_past, small.n_ctx)\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", code, str(tiny_gguf)], capture_output=True, text=True, timeout=300
    )
    assert r.returncode == 0, r.stderr[-3000:]
    n_past, n_ctx = map(int, r.stdout.split())
    assert n_past == n_ctx >= 257
