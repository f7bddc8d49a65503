"""The plain decoding loop: stop conditions, event stream, counts, seeds."""

from __future__ import annotations

import pytest

from pedit.backends import open_backend
from pedit.engine.decode import DecodeOptions, PromptTooLong, generate
from pedit.engine.prompt import FenceStream
from pedit.engine.sampling import Sampling
from pedit.events import Finished, Prefilled, TokenGenerated
from scripted import ScriptedBackend


def run(backend, prompt, **kw):
    until = kw.pop("until", None)
    return list(generate(backend, prompt, DecodeOptions(**kw), until=until))


def test_event_stream_shape_and_eos():
    b = ScriptedBackend([], 0)
    prompt = b.tokenize("Say hello.")
    b.prompt_len = len(prompt)
    b.target = b.tokenize("hello, world")
    events = run(b, prompt, max_tokens=100)
    assert isinstance(events[0], Prefilled) and events[0].prompt_tokens == len(prompt)
    assert isinstance(events[-1], Finished)
    generated = [e for e in events if isinstance(e, TokenGenerated)]
    fin = events[-1]
    assert [e.token for e in generated] == list(fin.tokens) == b.target
    assert fin.text == "".join(e.text for e in generated) == "hello, world"
    assert fin.stats.stop_reason == "eos" and fin.stats.completion_tokens == len(b.target)
    # one pass for the prompt, one per generated token (the last one reveals EOS)
    assert fin.stats.forward_passes == len(b.calls) == len(b.target) + 1
    assert b.calls[0] == (len(prompt), 1) and all(c == (1, 1) for c in b.calls[1:])


def test_max_tokens_stops_without_an_extra_pass():
    b = ScriptedBackend([], 0)
    prompt = b.tokenize("x")
    b.prompt_len, b.target = len(prompt), b.tokenize("a long answer that goes on")
    fin = run(b, prompt, max_tokens=5)[-1]
    assert fin.stats.stop_reason == "max_tokens" and len(fin.tokens) == 5
    assert fin.stats.forward_passes == 5


def test_fence_ends_the_run_and_is_stripped():
    b = ScriptedBackend([], 0)
    prompt = b.tokenize("x")
    b.prompt_len, b.target = len(prompt), b.tokenize("fixed text\n```\nand a remark nobody wants")
    fin = run(b, prompt, max_tokens=100, until=FenceStream("```"))[-1]
    assert fin.text == "fixed text\n" and fin.stats.stop_reason == "fence"
    assert b.detokenize(fin.tokens) == "fixed text\n```\n"


def test_context_exhaustion_stops_cleanly():
    b = open_backend("reference", n_ctx=64)
    prompt = b.tokenize("x" * 40)
    fin = run(b, prompt, max_tokens=1000)[-1]
    assert fin.stats.stop_reason == "context" and b.n_past == 64
    assert len(prompt) + len(fin.tokens) == 65  # the last token is sampled, not evaluated


def test_prompt_longer_than_the_context_is_refused():
    b = open_backend("reference", n_ctx=16)
    with pytest.raises(PromptTooLong, match="context window"):
        run(b, b.tokenize("y" * 40), max_tokens=5)


def test_seeded_sampling_is_reproducible():
    b = open_backend("reference")
    prompt = b.tokenize("Once upon a time")
    s = lambda seed: Sampling(temperature=2.0, seed=seed)  # noqa: E731
    a = run(b, prompt, max_tokens=40, sampling=s(1))[-1].tokens
    assert run(b, prompt, max_tokens=40, sampling=s(1))[-1].tokens == a
    assert any(run(b, prompt, max_tokens=40, sampling=s(k))[-1].tokens != a for k in (2, 3, 4))


def test_rerun_on_a_used_backend_starts_from_scratch():
    b = open_backend("reference")
    prompt = b.tokenize("The cat sat")
    first = run(b, prompt, max_tokens=30)[-1]
    b.eval(b.tokenize(" unrelated junk in the cache"))
    assert run(b, prompt, max_tokens=30)[-1].tokens == first.tokens


def test_the_speedup_with_the_prompt_counts_the_prompt_once_on_both_sides():
    from pedit.events import Stats

    figures = {"prompt_tokens": 100, "completion_tokens": 50, "forward_passes": 5, "prefill_seconds": 2.0}
    s = Stats(**figures, decode_seconds=1.0, stop_reason="fence", speedup=3.0)  # plain: 3.0 s
    assert s.overall_speedup == pytest.approx((2.0 + 3.0) / (2.0 + 1.0))
    assert (
        Stats(**figures, decode_seconds=1.0, stop_reason="fence").overall_speedup is None
    )  # no baseline: no figure
