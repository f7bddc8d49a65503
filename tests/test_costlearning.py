"""Issue 38 item 6: a first run times one token instead of the whole cost curve, starts
from the prior curve in units of it, and every run's passes refine the curve for the
next run (machine/calibration.py, engine/costmodel.Passes). The output never depends on it."""

from __future__ import annotations

import json
import statistics

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_speculative_counts import EDITS, FILE

from pedit.backends import open_backend
from pedit.engine import costmodel
from pedit.engine.costmodel import KEEP, SEEN, CostModel, Passes
from pedit.engine.edit import EditOptions, edit_events
from pedit.engine.prompt import build_prompt
from pedit.machine import calibration
from pedit.request import EditRequest
from scripted import ScriptedBackend

BASE = CostModel((1, 8, 64), (0.01, 0.05, 0.4), 256, ((1, 1e-5), (64, 1e-4)), ((8, 0.2), (64, 0.15)))


class Counting:
    """The reference backend, counting the tokens each eval reads."""

    def __init__(self):
        self.inner, self.evals = open_backend("reference"), []

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def eval(self, tokens, **kw):
        self.evals.append(len(tokens))
        return self.inner.eval(tokens, **kw)


def test_a_pass_is_kept_at_the_base_context_and_only_the_latest_count():
    log = Passes(BASE)
    log.add(8, 1256, 0.06)  # 1000 tokens past c0: g(8) = 1e-5 + (1e-4 - 1e-5) * 7 / 63
    assert log.seen[8] == [pytest.approx(0.06 - BASE.slope(8) * 1000)]
    log.add(8, 100, 0.07)  # before c0: as it ran
    log.add(1, 300, 0.02)  # a one-token pass is t(1)'s only as a plain step (`step`)
    log.add(5, 300, 0.0)
    assert set(log.seen) == {8} and len(log.seen[8]) == 2 and len(log.added) == 2
    for i in range(3 * KEEP):
        log.add(64, 256, 0.3 + i / 1000)
    assert log.seen[64] == [0.3 + i / 1000 for i in range(2 * KEEP, 3 * KEEP)]


def test_a_size_seen_enough_is_priced_as_it_ran_and_the_wide_rest_follows_the_wide_ones():
    log = Passes(BASE, {8: [0.08] * (SEEN - 1), 40: [0.2, 0.3, 0.25], 64: [0.3, 0.1, 0.2, 0.9]})
    model = log.model()
    assert model.sizes == (1, 8, 40, 64)
    # the wide passes against their base price (40 rows: 64's, 0.4): 1.6 1.6 | 0.5 0.75 0.625 |
    # 0.75 0.25 0.5 2.25, median c = 0.75; 8 rows, seen too few times: 0.05 c^(log 8 / log 64)
    assert model.seconds == pytest.approx((0.01, 0.05 * 0.75**0.5, 0.25, 0.25))
    assert model.growth == BASE.growth and model.context == BASE.context and model.log is log
    log.add(8, 256, 0.08)
    assert log.model().seconds[1] == 0.08


def test_the_wide_prices_move_only_once_enough_wide_passes_ran():
    """A prior measured on another build prices every wide size off by the same factor
    (AVX-512 reads them faster against one step than AVX2): SEEN wide passes of any sizes
    rescale them; fewer leave the base as it is, and one-token passes never count."""
    few = Passes(BASE, {8: [0.1] * (SEEN - 1), 1: [0.02] * SEEN})
    assert few.model().seconds == (0.02, 0.05, 0.4)
    enough = Passes(BASE, {8: [0.1] * (SEEN - 1), 64: [0.2]})  # 8: 2x its price; 64: half
    c = statistics.median([2.0] * (SEEN - 1) + [0.5])
    assert enough.model().seconds == pytest.approx((0.01, 0.05 * c**0.5, 0.4 * c))


def test_one_token_is_priced_by_the_steps_that_ran_as_plain_decoding():
    """t(1), the live line's price of plain decoding, follows the plain steps runs made
    (timed once by a first run, it would keep that moment's speed for good)."""
    log = Passes(BASE)
    for i in range(SEEN - 1):
        log.step(256 + 1000, 0.012 + i / 1000)  # brought back to c0 by g(1) = 1e-5
    assert log.model().seconds[0] == BASE.seconds[0]  # too few yet
    log.step(256, 0.0125)
    assert log.seen[1] == pytest.approx([0.002, 0.003, 0.0125])
    assert log.model().seconds[0] == pytest.approx(0.003) and log.model().sizes == BASE.sizes


def test_the_prior_is_a_curve_in_units_of_one_token():
    prior = calibration.prior()
    assert prior.seconds[0] == pytest.approx(1.0) and prior.sizes == costmodel.GRID
    assert "scripts/cost_prior.py" in json.loads(calibration.PRIOR.read_text())["measured"]


def test_a_first_run_times_one_token_and_scales_the_prior():
    backend = Counting()
    model = calibration.quick(backend)
    # the context, one warm-up step and the timed steps: nothing wider than the context
    assert backend.evals == [calibration.QUICK_KV] + [1] * (1 + costmodel.STEPS)
    prior = calibration.prior()
    scale = model.seconds[0] / prior.seconds[0]
    assert model.sizes == prior.sizes and model.context == prior.context
    assert model.seconds == pytest.approx([t * scale for t in prior.seconds])
    assert model.growth == pytest.approx([(n, g * scale) for n, g in prior.growth])


def test_runs_refine_the_cache_entry_and_processes_add_up(tmp_path):
    backend, calls = open_backend("reference"), []

    def measure(b):
        calls.append(b)
        return BASE

    first = calibration.cached(backend, "m", tmp_path, measure)
    assert first == BASE and first.log is not None and len(calls) == 1
    other = calibration.cached(backend, "m", tmp_path, measure)  # a second process, at once
    for _ in range(SEEN):
        first.log.add(40, 256, 0.2)
        other.log.add(40, 256, 0.3)
    calibration.keep(first)
    calibration.keep(other)
    calibration.keep(other)  # nothing new: nothing written twice
    again = calibration.cached(backend, "m", tmp_path, measure)
    assert len(calls) == 1 and again.sizes == (1, 8, 40, 64)
    assert again.seconds[2] == statistics.median([0.2] * SEEN + [0.3] * SEEN)
    (entry,) = tmp_path.iterdir()
    assert CostModel.from_json(entry.read_text()) == BASE  # the base stays what was measured


def test_a_slow_run_does_not_price_the_next_ones(tmp_path):
    """A run whose wide passes took twice their time (other work on the cores) adds SEEN
    passes at its median, however many it made: after two runs at the right price the
    size stays priced as they ran."""
    backend = open_backend("reference")

    def run(seconds: float, passes: int) -> CostModel:
        cost = calibration.cached(backend, "m", tmp_path, lambda b: BASE)
        for i in range(passes):
            cost.log.add(40, 256, seconds + i * 1e-4)
        calibration.keep(cost)
        return cost

    run(0.2, 5)
    run(0.2, 9)
    run(0.5, 4 * KEEP)  # a polluted run: many passes, all slow
    again = calibration.cached(backend, "m", tmp_path, lambda b: pytest.fail("measured again"))
    medians = [0.2002] * SEEN + [0.2004] * SEEN + [0.50315] * SEEN
    assert again.log.seen[40] == [pytest.approx(x) for x in medians]
    assert again.seconds[again.sizes.index(40)] == pytest.approx(0.2004)


@pytest.mark.parametrize("seen", ['{"8": "x"}', '{"x": [0.1]}', '{"8": [-1.0]}', "[1]", '{"8": [1]}'])
def test_passes_of_another_shape_are_dropped_and_the_base_kept(tmp_path, seen):
    backend = open_backend("reference")
    calibration.cached(backend, "m", tmp_path, lambda b: BASE)
    (entry,) = tmp_path.iterdir()
    entry.write_text(entry.read_text()[:-1] + f', "seen": {seen}}}')
    model = calibration.cached(backend, "m", tmp_path, lambda b: pytest.fail("measured again"))
    assert model == BASE and model.log.seen == {}


def test_a_run_logs_each_pass_it_makes():
    """Every decode pass wider than one row goes into the log, as the backend ran it, and
    every one-token pass that ran as plain decoding runs (after another)."""
    backend = ScriptedBackend([], 0)
    req = EditRequest(FILE, "Edit it.", "f.txt")
    prompt = build_prompt(backend, req)
    backend.prompt_len = len(prompt.tokens)
    backend.target = backend.tokenize(EDITS["three edits"] + prompt.fence)
    cost = Passes(CostModel.table({1: 1.0, 8: 3.0, 64: 20.0}, 1e-3)).model()
    fin = list(edit_events(backend, req, EditOptions(speculate="auto", cost=cost)))[-1]
    sizes = [n for n, _ in backend.calls[1:]]  # calls[0]: the prefill
    # and each one-token pass right after another (as plain decoding steps), as size 1
    steps = [n for n, m in zip(sizes[1:], sizes[:-1], strict=True) if n == m == 1]
    logged = [n for n in sizes if n > 1] + steps
    assert steps and len(logged) > len(steps) and sorted(n for n, _ in cost.log.added) == sorted(logged)
    assert {n: len(ts) for n, ts in cost.log.seen.items()} == {
        n: min(logged.count(n), KEEP) for n in set(logged)
    }
    assert fin.text == EDITS["three edits"]


@settings(max_examples=25, deadline=None)
@given(
    prices=st.lists(st.floats(0.5, 80.0), min_size=6, max_size=6),
    seed=st.integers(0, 2**16),
    edit=st.sampled_from(sorted(EDITS)),
)
def test_the_answer_does_not_depend_on_what_the_passes_cost(prices, seed, edit):
    """Lossless: a refined curve changes the passes, never the text (greedy and seeded)."""
    from pedit.engine.sampling import Sampling

    sizes = (1, 2, 4, 8, 16, 32, 64)
    learned = CostModel(sizes, (1e-3, *(p * 1e-3 for p in sorted(prices))))
    backend = open_backend("reference")
    req = EditRequest(EDITS[edit], "Edit it.", "f.txt")
    for sampling in (Sampling(), Sampling(temperature=0.8, seed=seed)):
        runs = [EditOptions(speculate=s, cost=c, sampling=sampling, max_tokens=60)
                for s, c in (("off", None), ("auto", BASE), ("auto", learned))]  # fmt: skip
        texts = {list(edit_events(backend, req, o))[-1].text for o in runs}
        assert len(texts) == 1


def test_a_command_keeps_its_passes_for_the_next_one(tmp_path, monkeypatch, isolated_dirs):
    """A real command (the CLI, a new model each time) writes the passes it made into its
    cost entry when it closes the model; the next command reads them and adds its own."""
    from typer.testing import CliRunner

    from pedit.cli.app import app

    monkeypatch.chdir(tmp_path)
    (tmp_path / "x.md").write_text("Some text that the model reads and copies.\n")

    def run() -> dict[int, list[float]]:
        result = CliRunner().invoke(app, ["edit", "x.md", "Copy it.", "-b", "reference", "--stdout"])
        assert result.exit_code == 0, result.stderr
        (entry,) = (isolated_dirs / "cache" / "pedit" / "costs").iterdir()
        return calibration._seen(entry.read_text())

    first = run()
    assert first
    second = run()  # the same passes again: each size's log grows by what the run made,
    # as at most SEEN passes at their median (a run made n passes of a size: min(n, SEEN))
    assert {n: len(ts) for n, ts in second.items()} == {n: min(2 * len(ts), KEEP) for n, ts in first.items()}
    assert all(len(ts) <= SEEN and len(set(ts)) == 1 for ts in first.values())


class Clocked:
    """The reference backend on a clock of its own: an eval of n tokens after c cached ones
    takes a + b (n - 1) + g c seconds, exactly."""

    def __init__(self, a=0.03, b=0.02, g=4e-6):
        self.inner, self.now, self.a, self.b, self.g = open_backend("reference"), 0.0, a, b, g

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def eval(self, tokens, **kw):
        self.now += self.a + self.b * (len(tokens) - 1) + self.g * self.inner.n_past
        return self.inner.eval(tokens, **kw)


def test_the_growth_of_a_step_is_the_slope_through_every_context_it_was_timed_at(monkeypatch):
    backend = Clocked()
    monkeypatch.setattr(costmodel.time, "perf_counter", lambda: backend.now)
    model = costmodel.measure(backend, sizes=(1, 8), repeats=1, kv=64, far=512, growth_sizes=(1, 8))
    # one token: the median of STEPS consecutive steps after 64, 65, ... cached tokens
    assert model.seconds[0] == pytest.approx(0.03 + 4e-6 * (64 + (costmodel.STEPS - 1) / 2))
    assert model.growth[0] == (1, pytest.approx(4e-6))  # a one-token step reads the cache
    # a pass of 8 tokens after c: a + 7 b + g c, so its growth is g too (g1 = 0)
    assert model.growth[1] == (8, pytest.approx(4e-6))


@given(
    st.lists(st.integers(0, 4096), min_size=2, max_size=8, unique=True), st.floats(0, 1e-3), st.floats(0, 1)
)
def test_the_slope_of_points_on_a_line_is_the_line_s(contexts, g, a):
    assert costmodel._slope({c: a + g * c for c in contexts}) == pytest.approx(g, abs=1e-12)


def test_an_entry_from_before_the_heads_share_takes_the_priors(tmp_path):
    backend = open_backend("reference")
    old = CostModel(BASE.sizes, BASE.seconds, BASE.context, BASE.growth)  # no head
    calibration.cached(backend, "m", tmp_path, lambda b: BASE)
    (entry,) = tmp_path.iterdir()
    entry.write_text(old.to_json())  # as an older pedit wrote it: its passes are kept
    again = calibration.cached(backend, "m", tmp_path, lambda b: pytest.fail("measured again"))
    assert again.head == calibration.prior().head != () and again.seconds == BASE.seconds


def test_a_process_that_lives_on_plans_each_request_by_the_passes_before_it():
    """The resident model, pedit serve and a session re-price their cost model before each
    request (costmodel.repriced): a size the requests before ran SEEN times is priced as it
    ran, as a new process would read it from the cache. Without a log, nothing changes."""
    log = Passes(BASE)
    cost = log.model()
    for _ in range(SEEN):
        log.add(8, 256, 0.02)  # a request's passes: 8 rows cost 0.02 s here, not 0.05
    assert cost.cost(8) == 0.05 and costmodel.repriced(cost).cost(8) == 0.02
    assert costmodel.repriced(cost).log is log and costmodel.repriced(None) is None
    assert costmodel.repriced(BASE) is BASE


def test_the_resident_prices_each_request_by_the_ones_before_it(tmp_path, monkeypatch):
    """resident/server.answer: the model's cost model is priced again before each request,
    by the passes the earlier requests logged."""
    import socket

    from pedit.app.loading import Loaded
    from pedit.app.options import EngineOptions
    from pedit.app.templates import BUILTIN
    from pedit.resident import protocol, server
    from pedit.resident.protocol import LoadSettings, Request

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    log = Passes(BASE)
    load = LoadSettings(model="m", backend="reference", n_ctx=2048, threads=None, speculate_off=False)
    state = server.State(
        load=load, keep_alive=60, loaded=Loaded(backend=open_backend("reference"), cost=log.model())
    )
    for _ in range(SEEN):
        log.add(8, 256, 0.02)  # what the requests before this one ran
    req = Request(kind="rewrite", template=BUILTIN["edit"], instruction="Keep it.", options=EngineOptions(),
                  system=None, force=False, chunk_tokens=None, text=FILE, name="a.py")  # fmt: skip
    a, b = socket.socketpair()
    try:
        with a, b:
            server.answer(state, a, req)
            while protocol.receive_message(b)[0] != "outcome":
                pass
    finally:
        state.loaded.backend.close()
    assert state.loaded.cost.cost(8) == 0.02 and state.loaded.cost.log is log
