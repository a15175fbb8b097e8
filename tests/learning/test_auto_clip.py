"""clip_norm="auto": the private quantile mechanism and its accounting in the estimators."""

import math

import numpy as np
import pytest
from geomstats.geometry.hypersphere import Hypersphere

from geomstats_dp.learning import PrivateFrechetMean
from geomstats_dp.privacy import GaussianEvent, PureEvent, compose_epsilon
from geomstats_dp.privacy.quantile import DEFAULT_GRID, private_quantile
from tests.optim.spies import TangentGaussianSpy


@pytest.mark.backend_independent
def test_quantile_draws_follow_the_exponential_mechanism():
    values = np.random.default_rng(0).exponential(size=30)
    grid = np.geomspace(0.05, 5, 9)
    epsilon, quantile = 0.4, 0.5
    rng = np.random.default_rng(1)
    draws = np.array([private_quantile(values, quantile, epsilon, rng, grid)
                      for _ in range(20000)])
    # independent computation of the law: rank utility, weights exp(eps u / 2)
    utility = np.array([-abs(np.sum(values <= c) - quantile * 30) for c in grid])
    expected = np.exp(epsilon * utility / 2)
    expected /= expected.sum()
    counts = np.array([np.sum(draws == c) for c in grid])
    chi2 = np.sum((counts - 20000 * expected) ** 2 / (20000 * expected))
    assert chi2 < 9 + 5 * math.sqrt(2 * 8)  # 8 degrees of freedom, 5 standard deviations


@pytest.mark.backend_independent
def test_quantile_concentrates_with_epsilon():
    values = np.concatenate([np.linspace(1.0, 3.0, 100), np.linspace(4.0, 9.0, 100)])
    draws = {private_quantile(values, 0.5, 5.0, np.random.default_rng(seed))
             for seed in range(20)}
    assert draws == {DEFAULT_GRID[np.searchsorted(DEFAULT_GRID, 3.0)]}  # count = 100


def _sphere_points(n_samples, seed):
    rng = np.random.default_rng(seed)
    raw = np.array([0.0, 0.0, 1.0]) + 0.4 * rng.standard_normal((n_samples, 3))
    return raw / np.linalg.norm(raw, axis=1, keepdims=True)


def test_auto_clip_is_charged_and_the_noise_follows_it(monkeypatch):
    sigmas = TangentGaussianSpy(monkeypatch).sigmas
    points = _sphere_points(400, seed=3)
    estimator = PrivateFrechetMean(Hypersphere(2), epsilon=2.0, delta=1e-6, method="rgd",
                                   clip_norm="auto", clip_budget_fraction=0.25,
                                   init_point=np.array([0.0, 0.0, 1.0]), random_state=4)
    estimator.fit(points)
    quantile_event, gaussian_event = estimator.events_
    assert isinstance(quantile_event, PureEvent) and quantile_event.epsilon == 0.5
    assert isinstance(gaussian_event, GaussianEvent)
    # the optimisation alone is calibrated to the remaining 1.5 (exact GDP composition)
    assert compose_epsilon([gaussian_event], 1e-6) == pytest.approx(1.5, rel=1e-6)
    assert estimator.budget_.spent_epsilon <= 2.0 * (1 + 1e-9)
    clip = estimator.clip_norm_
    assert clip in DEFAULT_GRID
    # the median distance to the start is about 0.4: the release is near it
    assert 0.1 < clip < 1.0
    assert np.allclose(sigmas, estimator.noise_multiplier_ * 2 * clip / 400, rtol=1e-12)


def test_auto_clip_rejects_bad_settings():
    points = _sphere_points(20, seed=5)
    for params, name in (({"clip_quantile": 1.5}, "clip_quantile"),
                         ({"clip_budget_fraction": 0.0}, "clip_budget_fraction"),
                         ({"clip_norm": "automatic"}, "clip_norm")):
        estimator = PrivateFrechetMean(Hypersphere(2), **{"clip_norm": "auto", **params})
        with pytest.raises((ValueError, TypeError), match=name):
            estimator.fit(points)
