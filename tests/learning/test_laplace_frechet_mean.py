"""PrivateFrechetMean(method="laplace"): the Riemannian Laplace mechanism of Reimherr et al."""

import math

import geomstats.backend as gs
import numpy as np
import pytest
from geomstats.geometry.euclidean import Euclidean
from geomstats.geometry.hyperboloid import Hyperboloid
from geomstats.geometry.hypersphere import Hypersphere

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.distributions import RiemannianLaplace
from geomstats_dp.distributions.laplace import frechet_mean_sensitivity
from geomstats_dp.learning import PrivateFrechetMean
from geomstats_dp.learning.mechanisms.laplace import project_onto_ball
from geomstats_dp.learning.reference import exact_frechet_mean
from geomstats_dp.privacy import PrivacyBudget, PrivacyLeakWarning
from tests.conftest import shifted


def _sphere_data(n_samples, seed):
    gs.random.seed(shifted(seed))
    sphere = Hypersphere(2)
    north = gs.array([0.0, 0.0, 1.0])
    return sphere, north, sphere.random_von_mises_fisher(mu=north, kappa=200, n_samples=n_samples)


def test_release_is_centred_at_the_exact_mean_with_the_calibrated_scale(monkeypatch):
    sphere, north, points = _sphere_data(300, seed=0)
    laws = []
    original = RiemannianLaplace.sample

    def sample(law, n_samples=1, random_state=None, **kwargs):
        laws.append(law)
        return original(law, n_samples, random_state, **kwargs)

    monkeypatch.setattr(RiemannianLaplace, "sample", sample)
    estimator = PrivateFrechetMean(sphere, epsilon=0.5, method="laplace", radius=0.6,
                                   center=north, random_state=shifted(1)).fit(points)
    sensitivity = frechet_mean_sensitivity(sphere, 0.6, 300)
    pilot, law = laws  # the public feasibility check draws at the center, then the release
    assert np.allclose(pilot.footpoint, to_numpy(north))
    assert law.scale == pytest.approx(sensitivity / 0.5)  # sphere: footpoint-free constant
    exact = to_numpy(exact_frechet_mean(sphere, points))
    assert np.allclose(law.footpoint, exact, atol=1e-8)
    (event,) = estimator.events_
    assert event.epsilon == 0.5 and event.sensitivity == pytest.approx(sensitivity)
    assert estimator.budget_.spent_epsilon == pytest.approx(0.5)
    assert estimator.noise_multiplier_ == pytest.approx(1 / 0.5)


@pytest.mark.slow
def test_drawn_distances_follow_the_calibrated_laplace_law():
    """R^3: rho(mean, release) ~ Gamma(3, sigma), sigma = Delta / epsilon = 2r / (n eps)."""
    space = Euclidean(3)
    rng = np.random.default_rng(shifted(2))
    points = to_backend(rng.uniform(-0.5, 0.5, size=(40, 3)))
    mean = gs.mean(points, axis=0)
    sigma = 2 * 1.0 / (40 * 2.0)
    distances = [
        float(space.metric.dist(
            PrivateFrechetMean(space, epsilon=2.0, method="laplace", radius=1.0,
                               center=gs.zeros(3), random_state=shifted(seed)).fit(points).estimate_,
            mean))
        for seed in range(400)
    ]
    # Gamma(3, sigma): mean 3 sigma, standard deviation sqrt(3) sigma; 5 standard errors.
    assert abs(np.mean(distances) - 3 * sigma) < 5 * math.sqrt(3) * sigma / math.sqrt(400)


def test_missing_ball_large_radius_and_impossible_scale_raise_before_spending():
    sphere, north, points = _sphere_data(50, seed=3)
    budget = PrivacyBudget(5.0, 1e-5)
    with pytest.raises(ValueError, match="radius and center"):
        PrivateFrechetMean(sphere, method="laplace", budget=budget).fit(points)
    with pytest.raises(ValueError, match="radius must be <"):
        PrivateFrechetMean(sphere, method="laplace", radius=1.0, center=north,
                           budget=budget).fit(points)
    hyperboloid = Hyperboloid(3)
    origin = gs.array([1.0, 0.0, 0.0, 0.0])
    few = hyperboloid.projection(origin + 0.01 * gs.ones((5, 4)) * gs.array([0.0, 1, 1, 1]))
    with pytest.raises(ValueError, match="1/\\(d-1\\)|sigma|scale"):
        PrivateFrechetMean(hyperboloid, epsilon=0.1, method="laplace", radius=1.0,
                           center=origin, budget=budget).fit(few)
    assert budget.events == ()


def test_points_outside_the_ball_are_projected_with_a_warning():
    sphere, north, points = _sphere_data(60, seed=4)
    far = to_numpy(points)
    far[0] = [1.0, 0.0, 0.0]
    projected, count = project_onto_ball(sphere, far, north, 0.5)
    assert count >= 1
    assert np.all(to_numpy(sphere.metric.dist(to_backend(projected), north)) < 0.5)
    with pytest.warns(PrivacyLeakWarning, match="projected"):
        PrivateFrechetMean(sphere, method="laplace", radius=0.5, center=north,
                           random_state=shifted(0)).fit(to_backend(far))
