"""One way to load a model for every shell (app/loading.py): the settings' model on their
backend, its cost model measured (or read from the cache) exactly when there is something
to plan, speculation on a local backend, and `remote` said once."""

from __future__ import annotations

import pytest

from pedit import models
from pedit.app import config, loading
from pedit.backends.base import Capabilities
from pedit.backends.reference import ReferenceBackend
from pedit.machine import calibration
from pedit.models.progress import Began, Ended, quietly


def loads(backend, asked=None):
    """A stand-in for models.load: model work whose value is `backend`."""

    def load(*args, **kwargs):
        if asked is not None:
            asked.append((args, kwargs))
        return backend
        yield

    return load


def run(work):
    """The work's value and its steps."""
    steps = []
    try:
        while True:
            steps.append(next(work))
    except StopIteration as done:
        return done.value, steps


def settings(**given):
    return config.resolve({"backend": "reference", **given}, env={}, project=None)


class Server:
    """A backend that gives text, not logits (as backends/openai.py)."""

    capabilities = Capabilities(rollback=False, logits=False)
    closed = False

    def close(self) -> None:
        self.closed = True


@pytest.mark.parametrize("speculate, measured", [("auto", True), ("fixed", True), ("off", False)])
def test_a_local_model_has_its_cost_model_when_it_speculates(monkeypatch, speculate, measured):
    measuring = []
    monkeypatch.setattr(calibration, "measure_cost", lambda b, **_: measuring.append(b) or "costs")
    loaded = quietly(loading.load_with_cost(settings(speculate=speculate)))
    assert isinstance(loaded.backend, ReferenceBackend) and not loaded.remote and loaded.seconds >= 0
    assert loaded.cost == ("costs" if measured else None)
    assert measuring == ([loaded.backend] if measured else [])


def test_a_server_is_remote_and_has_no_cost_model(monkeypatch):
    server, asked = Server(), []
    monkeypatch.setattr(models, "load", loads(server, asked))
    monkeypatch.setattr(calibration, "measure_cost", lambda *_, **__: pytest.fail("a server is not measured"))
    s = config.resolve({"backend": "openai", "base_url": "http://h:1/v1"}, env={}, project=None)
    loaded = quietly(loading.load_with_cost(s, api_key="k", model="m"))
    assert loaded.remote and loaded.cost is None and loaded.backend is server
    ((args, kwargs),) = asked
    assert args[:2] == ("m", "openai")
    assert (kwargs["base_url"], kwargs["api_key"], kwargs["timeout"]) == ("http://h:1/v1", "k", 300.0)
    loaded.close()
    assert server.closed


def test_a_measurement_that_fails_closes_the_backend(monkeypatch):
    server = Server()
    server.capabilities = Capabilities(rollback=True)  # local
    monkeypatch.setattr(models, "load", loads(server))

    def broken(*_, **__):
        raise OSError("no room")

    monkeypatch.setattr(calibration, "measure_cost", broken)
    monkeypatch.setattr(calibration, "cached_cost", lambda backend: None)
    with pytest.raises(OSError):
        quietly(loading.load_with_cost(settings()))
    assert server.closed


def test_a_measurement_is_a_task_but_a_cached_cost_is_not(monkeypatch):
    """The `timing the model` task only when the cache has no cost model."""
    timing = Began(loading.MEASURING)
    monkeypatch.setattr(calibration, "cached_cost", lambda backend: None)
    monkeypatch.setattr(calibration, "measure_cost", lambda backend: "measured")
    loaded, steps = run(loading.load_with_cost(settings()))
    assert loaded.cost == "measured" and steps[-2:] == [timing, Ended()]
    monkeypatch.setattr(calibration, "cached_cost", lambda backend: "from the cache")
    loaded, steps = run(loading.load_with_cost(settings()))
    assert loaded.cost == "from the cache" and timing not in steps


def test_work_beside_the_load_runs_while_it_loads_and_is_done_before_the_timing(monkeypatch):
    """`beside` (a fix's tools built meanwhile) runs in another thread during models.load,
    and has finished before the cost model is timed, so no timing shares the cores with it."""
    import threading

    started, order = threading.Event(), []

    def slow_load(*args, **kwargs):
        assert started.wait(5), "the work beside did not start while the model loaded"
        order.append("loaded")
        return ReferenceBackend()
        yield

    def beside():
        order.append(threading.current_thread() is threading.main_thread())
        started.set()
        order.append("tools built")

    monkeypatch.setattr(models, "load", slow_load)
    monkeypatch.setattr(calibration, "measure_cost", lambda b, **_: order.append("timed") or "costs")
    quietly(loading.load_with_cost(settings(), beside=beside))
    assert order[0] is False and order.index("tools built") < order.index("timed")
    assert order.index("loaded") < order.index("timed")


def test_work_beside_the_load_that_fails_does_not_fail_the_load(monkeypatch):
    def broken():
        raise RuntimeError("harper is missing")

    monkeypatch.setattr(calibration, "measure_cost", lambda b, **_: "costs")
    assert quietly(loading.load_with_cost(settings(), beside=broken)).cost == "costs"
