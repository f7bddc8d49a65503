"""Verification (pure), the cost model and the planner."""

from __future__ import annotations

import numpy as np
import pytest

from pedit.engine.costmodel import CostModel
from pedit.engine.drafters.compose import NO_DRAFT, Draft
from pedit.engine.planner import Acceptance, CostPlanner, FixedPlanner
from pedit.engine.sampling import Sampling
from pedit.engine.verify import verify
from pedit.machine.calibration import cached


def one_hot_rows(tokens, vocab=10):
    rows = np.full((len(tokens), vocab), -5.0, dtype=np.float32)
    rows[np.arange(len(tokens)), tokens] = 5.0
    return rows


def test_greedy_accepts_the_agreeing_prefix_and_adds_the_models_token():
    rows = one_hot_rows([3, 4, 5, 6])  # the model wants 3, 4, 5 then 6
    rng = np.random.default_rng(0)
    assert verify(rows, [3, 4, 5], Sampling(), rng) == (3, 6)  # all accepted + free token
    assert verify(rows, [3, 9, 5], Sampling(), rng) == (1, 4)  # first mismatch: its own
    assert verify(rows[:1], [], Sampling(), rng) == (0, 3)  # k = 0: a plain step
    assert verify(rows, [3, 4, 5], Sampling(), rng, stop={4}) == (1, 4)  # EOS ends the walk
    with pytest.raises(ValueError):
        verify(rows, [3], Sampling(), rng)


def test_sampling_draws_once_per_emitted_token():
    rng_logits = np.random.default_rng(1)
    rows = rng_logits.normal(0, 2, (6, 50)).astype(np.float32)
    s = Sampling(temperature=1.0, seed=0)
    for draft in ([], [1, 2, 3, 4, 5]):
        rng, twin = np.random.default_rng(9), np.random.default_rng(9)
        m, y = verify(rows[: len(draft) + 1], draft, s, rng)
        # the twin, drawing plainly row by row, emits the same m + 1 tokens ...
        from pedit.engine.sampling import sample

        plain = [sample(rows[i], s, twin) for i in range(m + 1)]
        assert plain == [*draft[:m], y]
        # ... and both generators are now in the same state: one draw per emitted token
        assert rng.random() == twin.random()


def test_sampling_accepts_a_draft_equal_to_the_draws():
    rows = np.random.default_rng(2).normal(0, 1, (5, 30)).astype(np.float32)
    s = Sampling(temperature=0.7, seed=0)
    from pedit.engine.sampling import sample

    twin = np.random.default_rng(4)
    draws = [sample(rows[i], s, twin) for i in range(5)]
    assert verify(rows, draws[:4], s, np.random.default_rng(4)) == (4, draws[4])


def test_cost_model_envelope_and_extrapolation():
    c = CostModel.table({1: 1.0, 2: 2.4, 4: 3.0, 8: 2.9, 16: 6.0})
    assert c.cost(1) == 1.0
    assert c.cost(2) == 2.4
    assert c.cost(3) == c.cost(5) == 2.9  # 8 is measured cheaper than 4: pad up to 8
    assert c.cost(16) == 6.0 and c.cost(32) == 12.0  # linear beyond the grid
    assert c.limit() == pytest.approx(8 / 2.9)
    assert CostModel.from_json(c.to_json()) == c
    with pytest.raises(ValueError):
        CostModel((2, 4), (1.0, 2.0))


def test_planner_drafts_only_when_it_pays():
    cpu = CostModel.table({1: 1.0, 2: 2.4, 8: 4.5, 16: 6.0, 32: 12.0, 64: 22.0})
    gpu = CostModel.table({1: 1.0, 64: 1.3})
    for alpha, expect_cpu in ((0.5, 0), (0.8, 0), (0.97, 15)):
        acc = Acceptance({"x": (alpha * 1000, (1 - alpha) * 1000)})
        assert CostPlanner(cpu, acc).choose("x", 60) == expect_cpu
        assert CostPlanner(gpu, acc).choose("x", 60) > 0  # batches are nearly free
        assert CostPlanner(cpu, acc).choose("x", 0) == 0
    assert FixedPlanner().choose("x", 7) == 7


def test_acceptance_scores_every_proposal_against_what_was_emitted():
    acc = Acceptance({"a": (1.0, 1.0), "b": (1.0, 1.0)}, decay=1.0)
    acc.observe([Draft([1, 2, 3, 4], "A", "a"), Draft([9, 2], "B", "b"), NO_DRAFT], emitted=[1, 2, 7])
    # a: first 1 ok (1 trial, 1 success); then 2 ok, 3 != 7 (next: 2 trials, 1 success)
    # b: first 9 != 1 (1 trial, 0 successes); nothing after a rejected token is scored
    assert acc.rates("a") == pytest.approx(((1 + 1) / (2 + 1), (1 + 1) / (2 + 2)))
    assert acc.rates("b") == pytest.approx((1 / 3, 0.5))
    assert acc.expected("a", 2) == pytest.approx(2 / 3 * (1 + 0.5))
    assert acc.expected("a", 0) == 0.0
    decaying = Acceptance({"a": (1.0, 1.0)}, decay=0.5)
    decaying.observe([Draft([1], "A", "a")], [1])
    decaying.observe([Draft([1], "A", "a")], [2])
    assert decaying.rates("a")[0] == pytest.approx((1 + 0.5) / (2 + 1.5))
    assert acc.rates("never seen") == (0.5, 0.5)  # an unknown label starts from Beta(1, 1)


def test_a_lookup_that_is_usually_wrong_at_once_is_not_trusted_with_a_long_draft():
    """Open-ended text: prompt lookup's first token is right 1 time in 5, but a copy that
    starts right runs on. One pooled rate (~0.8 here) would bet 15 tokens; the first-token
    rate keeps the planner at plain steps."""
    cpu = CostModel.table({1: 1.0, 2: 1.66, 4: 2.0, 8: 3.0, 16: 5.0, 32: 9.0, 64: 18.0})
    acc = Acceptance({"x": (1.0, 1.0)}, decay=1.0)
    for _ in range(8):  # 8 copies that start right and run 10 tokens
        acc.observe([Draft(list(range(11)), "L", "x")], list(range(10)) + [99])
    for _ in range(32):  # 32 lookups wrong at their first token
        acc.observe([Draft([5, 6], "L", "x")], [7])
    first, nxt = acc.rates("x")
    assert first == pytest.approx(9 / 42) and nxt == pytest.approx(73 / 82)
    assert CostPlanner(cpu, acc).choose("x", 20) == 0
    pooled = (1 + 8 + 72) / (2 + 8 + 80 + 32)  # what one rate over every trial would say
    assert pooled > 0.66
    assert CostPlanner(cpu, Acceptance({"x": (pooled * 1e4, (1 - pooled) * 1e4)})).choose("x", 20) > 0


def test_thin_evidence_shortens_lookup_bets_but_not_the_files():
    """The same counts: a lookup label is bet on one standard deviation low (shorter drafts,
    the more so the thinner the evidence); the predicted output's label at its mean."""
    cpu = CostModel.table({1: 1.0, 2: 1.7, 4: 2.7, 8: 4.7, 16: 5.5, 32: 9.7, 64: 17.6})
    thin = Acceptance({"lookup:3": (9.0, 1.0), "predicted": (9.0, 1.0)})
    rich = Acceptance({"lookup:3": (900.0, 100.0)})
    planner = CostPlanner(cpu, thin)
    lookup, file = planner.choose("lookup:3", 60), planner.choose("predicted", 60)
    assert lookup < file == 15
    assert lookup < CostPlanner(cpu, rich).choose("lookup:3", 60) == file


def test_calibration_is_measured_once_and_cached(tmp_path):
    from pedit.backends import open_backend

    calls = []

    def fake_measure(backend):
        calls.append(1)
        return CostModel.table({1: 1.0, 8: 3.0}, 0.01)

    b = open_backend("reference")
    first = cached(b, "model-A", tmp_path, fake_measure)
    assert cached(b, "model-A", tmp_path, fake_measure) == first and len(calls) == 1
    cached(b, "model-B", tmp_path, fake_measure)
    assert len(calls) == 2  # another model, another calibration
    for f in tmp_path.iterdir():
        f.write_text("not json")
    cached(b, "model-A", tmp_path, fake_measure)
    assert len(calls) == 3  # a damaged cache entry is measured again


def test_measure_on_a_real_backend_gives_a_usable_model():
    from pedit.backends import open_backend
    from pedit.engine.costmodel import measure

    b = open_backend("reference")
    c = measure(b, sizes=(1, 2, 4, 8), repeats=1, kv=16, growth_sizes=(1, 8))
    assert c.sizes == (1, 2, 4, 8) and all(t > 0 for t in c.seconds) and b.n_past == 0
    assert c.context == 16 and [n for n, _ in c.growth] == [1, 8]  # room for `far`: growth measured
    (n0, g0), (n1, g1) = c.growth
    assert 0 <= g0 <= g1  # g(1) + g1 (n - 1), neither part below 0
    small = measure(open_backend("reference", n_ctx=300), sizes=(1, 2, 4, 256), repeats=1, kv=256)
    assert small.sizes == (1, 2, 4)  # 256 would not fit twice in 300 positions: left out
    assert small.growth == ()  # no room for a second context: the price is the calibration's


def test_cost_grows_linearly_with_the_context():
    c = CostModel((1, 8, 64), (0.010, 0.020, 0.100), context=256, growth=((1, 1e-5), (64, 8e-5)))
    assert c.cost(8, at=100) == c.cost(8, at=256) == c.cost(8) == 0.020  # up to c0: as measured
    assert c.cost(1, at=1256) == pytest.approx(0.010 + 1000 * 1e-5)
    # g(n) interpolated linearly between measured sizes: g(8) = 1e-5 + 7/63 * 7e-5
    assert c.slope(8) == pytest.approx(1e-5 + 7 / 63 * 7e-5)
    assert c.slope(200) == 8e-5  # flat beyond the largest
    assert c.cost(8, at=2256) == pytest.approx(0.020 + 2000 * c.slope(8))
    assert CostModel.from_json(c.to_json()) == c
    old = CostModel.from_json('{"sizes": [1, 8], "seconds": [0.01, 0.02]}')  # before the growth
    assert old.growth == () and old.cost(1, at=5000) == 0.01
    with pytest.raises(ValueError):
        CostModel.from_json('{"sizes": [1], "seconds": [0.01], "growth": [[1, "x"]]}')


def test_a_pass_with_the_last_rows_logits_alone_costs_less_by_the_heads_share():
    c = CostModel((1, 8, 64), (0.010, 0.080, 0.600), context=256, head=((8, 0.2), (64, 0.1)))
    assert c.cost_last(1) == c.cost(1) == 0.010  # one row: the same pass
    assert c.cost_last(8) == pytest.approx(0.080 * 0.8)
    assert c.cost_last(36, at=1000) == pytest.approx(c.cost(36, at=1000) * (1 - 0.15))  # linear between
    assert c.cost_last(200) == pytest.approx(c.cost(200) * 0.9)  # flat beyond the largest
    assert CostModel.from_json(c.to_json()) == c
    assert c.scaled(2.0).head == c.head  # a share: the same on a faster or slower machine
    old = CostModel.from_json('{"sizes": [1, 8], "seconds": [0.01, 0.02]}')  # before the head
    assert old.head == () and old.cost_last(8) == old.cost(8)
    for bad in ('[[8, 1.0]]', '[[8, -0.1]]', '[["8", 0.1]]'):
        with pytest.raises(ValueError):
            CostModel.from_json(f'{{"sizes": [1, 8], "seconds": [0.01, 0.02], "head": {bad}}}')


def test_the_heads_share_is_measured_at_the_sizes_the_grid_has():
    from pedit.backends import open_backend
    from pedit.engine.costmodel import measure

    c = measure(open_backend("reference", n_ctx=128), sizes=(1, 2, 8), repeats=1, kv=16, far=32)
    assert [n for n, _ in c.head] == [8] and 0 <= c.head[0][1] < 1  # 32 and 64 not in the grid


def test_planner_prices_passes_at_the_current_context():
    """A pass over many tokens gets dearer per context token than a single step does (each
    token reads the whole cache): deep in a long file a long draft may stop paying."""
    acc = Acceptance({"x": (900.0, 100.0)})  # alpha 0.9
    cost = CostModel((1, 8, 16, 64), (0.01, 0.03, 0.05, 0.2), context=256, growth=((1, 1e-6), (64, 2e-4)))
    planner = CostPlanner(cost, acc)
    near, deep = planner.choose("x", 60, at=300), planner.choose("x", 60, at=4000)
    assert near > 0 and deep < near
    assert planner.choose("x", 60, at=4000) == CostPlanner(cost, acc).choose("x", 60, at=4000)  # cached


def test_live_speedup_prices_plain_decoding_at_each_context():
    """plain = the sum of cost(1, c) over the plain steps the passes stood for (not scaled
    by how long the run's own passes took)."""
    from pedit.engine.decode import Tracker

    cost = CostModel((1, 4), (0.010, 0.020), context=100, growth=((1, 1e-5), (4, 2e-5)))
    tr = Tracker(100, 0.5, cost)
    tr.step(seconds=0.040, k=3, accepted=3, source="predicted", at=100, steps=4)  # contexts 100..103
    tr.step(seconds=0.020, at=104, steps=1)  # measured twice its price: no matter
    assert tr.plain_seconds(6) == pytest.approx(4 * cost.cost(1, 101.5) + cost.cost(1, 104))
    untimed = Tracker(100, 0.5)  # no cost model: the median one-token pass per token
    for s in (0.03, 0.01, 0.02):
        untimed.step(seconds=s)
    assert untimed.plain_seconds(10) == pytest.approx(0.2)


def test_a_forced_run_is_priced_as_plain_decoding_reads_it():
    """A run of m forced tokens rides in the pass of the token drawn before it, which
    plain decoding reads with the last row's logits alone: cost_last(1 + m, c) - cost(1, c),
    however this run's passes split it; a run the answer ends on is never read."""
    from pedit.engine.decode import Tracker

    cost = CostModel((1, 8, 64), (0.010, 0.080, 0.600), context=100, head=((8, 0.25), (64, 0.25)))
    tr = Tracker(100, 0.5, cost)
    tr.step(seconds=0.02, at=100, steps=1)
    tr.follow(3, at=101)  # a run of 7, cut in two by this run's passes
    tr.follow(4, at=104)
    tr.drawn()
    tr.step(seconds=0.02, at=109, steps=1)
    tr.follow(5, at=110)  # the answer ends on it
    assert tr.plain_seconds(14) == pytest.approx(2 * 0.010 + 0.080 * 0.75 - 0.010)


def test_a_label_may_have_its_own_prior_for_the_next_token():
    a = Acceptance({"both": (9.0, 1.0), "two": (9.0, 1.0, 9.9, 0.1)})
    assert a.rates("both") == (0.9, 0.9) and a.rates("two") == (0.9, pytest.approx(0.99))
