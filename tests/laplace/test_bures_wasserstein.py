"""The Laplace Frechet mean on SPD with the Bures-Wasserstein metric (the barycenter)."""

import math

import numpy as np
import pytest
from geomstats.geometry.spd_matrices import SPDBuresWassersteinMetric, SPDMatrices

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.distributions.laplace import (
    RiemannianLaplace,
    ball_geometry,
    frechet_mean_sensitivity,
)
from geomstats_dp.distributions.laplace import riemannian_laplace
from geomstats_dp.learning import PrivateFrechetMean
from geomstats_dp.learning.reference import exact_frechet_mean
from geomstats_dp.privacy import PureEvent


def _bures_wasserstein():
    space = SPDMatrices(2, equip=False)
    space.equip_with_metric(SPDBuresWassersteinMetric)
    return space


def _in_ball(space, center, radius, n_samples, rng):
    """Wishart draws kept inside the ball."""
    kept = []
    while len(kept) < n_samples:
        g = rng.standard_normal((2, 2)) * 0.7
        candidate = center + 0.3 * (g @ g.T - np.eye(2) * 0.5)
        eigenvalues = np.linalg.eigvalsh(candidate)
        if eigenvalues[0] > 0 and float(space.metric.dist(
                to_backend(candidate), to_backend(center))) < radius:
            kept.append(candidate)
    return np.array(kept)


def test_mirsky_bound_on_eigenvalues():
    """d_BW(X, Y) >= |sqrt(lambda(X)) - sqrt(lambda(Y))|: what the ball's floor rests on."""
    space, rng = _bures_wasserstein(), np.random.default_rng(0)
    for _ in range(200):
        a, b = rng.standard_normal((2, 2, 2))
        X, Y = a @ a.T + 0.01 * np.eye(2), b @ b.T + 0.01 * np.eye(2)
        gap = np.linalg.norm(np.sqrt(np.linalg.eigvalsh(X)) - np.sqrt(np.linalg.eigvalsh(Y)))
        assert float(space.metric.dist(to_backend(X), to_backend(Y))) >= gap - 1e-9


def test_ball_geometry_and_its_errors():
    space, center = _bures_wasserstein(), np.diag([2.0, 3.0])
    kappa_min, kappa_max, injectivity = ball_geometry(space, center, 0.3)
    floor = (math.sqrt(2.0) - 0.3) ** 2
    assert (kappa_min, kappa_max, injectivity) == (0.0, 3 / (2 * floor), math.sqrt(floor))
    with pytest.raises(ValueError, match=r"radius must be < sqrt\(lambda_min\(center\)\)"):
        ball_geometry(space, center, 1.5)
    with pytest.raises(ValueError, match="needs the public ball"):
        frechet_mean_sensitivity(space, 0.3, 10)


@pytest.mark.slow
def test_sensitivity_bound_holds_on_adversarial_neighbours():
    space, center, radius = _bures_wasserstein(), np.eye(2), 0.3
    rng = np.random.default_rng(1)
    for n_samples in (3, 10):
        bound = frechet_mean_sensitivity(space, radius, n_samples, center)
        others = _in_ball(space, center, radius, n_samples - 1, rng)
        # replacements near the boundary, in opposite directions
        boundary = [center + s * 0.99 * radius * np.array(d) for s in (1, -1)
                    for d in ([[2.0, 0.0], [0.0, 0.0]], [[0.0, 0.0], [0.0, 2.0]])]
        means = [to_numpy(exact_frechet_mean(space, to_backend(np.concatenate([others, [z]]))))
                 for z in boundary]
        largest = max(float(space.metric.dist(to_backend(a), to_backend(b)))
                      for a in means for b in means)
        assert largest <= bound


@pytest.mark.slow
def test_release_is_calibrated_and_restricted_to_the_ball(monkeypatch):
    space, center, radius = _bures_wasserstein(), np.eye(2), 0.15
    X = _in_ball(space, center, radius, 40, np.random.default_rng(2))
    laws = []
    original = RiemannianLaplace.__init__

    def spy(law, space_, footpoint, scale, **kwargs):
        laws.append((scale, kwargs.get("radius")))
        original(law, space_, footpoint, scale, **kwargs)

    monkeypatch.setattr(riemannian_laplace.RiemannianLaplace, "__init__", spy)
    estimator = PrivateFrechetMean(space, epsilon=0.5, method="laplace", radius=radius,
                                   center=center, random_state=0).fit(X)
    (event,) = estimator.events_
    sensitivity = frechet_mean_sensitivity(space, radius, 40, center)
    assert isinstance(event, PureEvent) and event.sensitivity == sensitivity
    # the normalising constant depends on the footpoint and the law is truncated
    assert event.noise_scale == pytest.approx(2 * sensitivity / 0.5)
    assert laws[-1] == (event.noise_scale, radius)
    release = estimator.estimate_
    assert float(space.metric.dist(release, to_backend(center))) < radius
