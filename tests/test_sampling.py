"""Sampling: greedy is argmax, sampling is one seeded inverse-CDF draw per token."""

from __future__ import annotations

import numpy as np
import pytest

from pedit.engine.sampling import Sampling, distribution, sample


def test_temperature_zero_is_argmax_and_draws_nothing():
    rng = np.random.default_rng(0)
    logits = np.array([0.1, 3.0, 2.9, -1.0], dtype=np.float32)
    assert sample(logits, Sampling(), rng) == 1
    assert rng.random() == np.random.default_rng(0).random()  # the generator was not advanced


def test_one_draw_per_token_inverse_cdf():
    logits = np.log(np.array([0.5, 0.25, 0.25]))
    s = Sampling(temperature=1.0)
    rng, twin = np.random.default_rng(7), np.random.default_rng(7)
    for _ in range(50):
        u = twin.random()
        expected = 0 if u < 0.5 else (1 if u < 0.75 else 2)
        assert sample(logits, s, rng) == expected


def test_top_k_and_top_p_restrict_the_support():
    logits = np.log(np.array([0.05, 0.4, 0.3, 0.2, 0.05]))
    ids, p = distribution(logits, Sampling(temperature=1.0, top_k=2))
    assert set(ids) == {1, 2} and np.isclose(p.sum(), 1)
    ids, p = distribution(logits, Sampling(temperature=1.0, top_p=0.65))
    assert list(ids) == [1, 2]
    ids, _ = distribution(logits, Sampling(temperature=1.0, top_p=0.69))
    assert list(ids) == [1, 2]
    ids, _ = distribution(logits, Sampling(temperature=1.0, top_p=0.71))
    assert list(ids) == [1, 2, 3]


def test_top_p_on_a_large_vocabulary_matches_a_full_sort():
    rng = np.random.default_rng(1)
    for scale in (0.5, 3.0, 8.0):  # flat and peaked: the 512-candidate shortcut on and off
        logits = rng.normal(0, scale, 50_000)
        ids, p = distribution(logits, Sampling(temperature=1.0, top_p=0.9))
        full = np.exp(logits - logits.max())
        full /= full.sum()
        order = np.argsort(-full, kind="stable")
        keep = int(np.searchsorted(np.cumsum(full[order]), 0.9)) + 1
        assert set(ids) == set(order[:keep])
        np.testing.assert_allclose(p, full[ids] / full[ids].sum(), rtol=1e-9)


def test_same_seed_same_tokens():
    logits = np.random.default_rng(3).normal(size=1000)
    s = Sampling(temperature=0.8, top_p=0.95)
    a = [sample(logits, s, np.random.default_rng(11)) for _ in range(3)]
    assert len(set(a)) == 1


@pytest.mark.parametrize("kwargs", [{"temperature": -1}, {"top_p": 0}, {"top_p": 1.5}, {"top_k": -2}])
def test_invalid_parameters(kwargs):
    with pytest.raises(ValueError):
        Sampling(**kwargs)
