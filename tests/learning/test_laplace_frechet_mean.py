"""PrivateFrechetMean(method="laplace"): the Riemannian Laplace mechanism of Reimherr et al."""

import math
import warnings

import geomstats.backend as gs
import numpy as np
import pytest
from geomstats.geometry.euclidean import Euclidean
from geomstats.geometry.hyperboloid import Hyperboloid
from geomstats.geometry.hypersphere import Hypersphere
from geomstats.geometry.spd_matrices import SPDMatrices
from geomstats.geometry.stiefel import Stiefel

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.distributions import RiemannianLaplace
from geomstats_dp.distributions.laplace.mean_solver import TOL_FRACTION
from geomstats_dp.learning import PrivateFrechetMean
from geomstats_dp.learning.mechanisms.laplace import project_onto_ball
from geomstats_dp.learning.reference import exact_frechet_mean
from geomstats_dp.privacy import PrivacyBudget
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
    radius, n_samples = 0.5, 300
    estimator = PrivateFrechetMean(sphere, epsilon=0.5, method="laplace", radius=radius,
                                   center=north, random_state=shifted(1)).fit(points)
    # Theorem 2 of Reimherr et al. on the unit sphere, h = 2r cot(2r), plus twice the
    # public tolerance of the fixed-iteration solver
    h = 2 * radius / math.tan(2 * radius)
    theorem = 2 * radius * (2 - h) / (n_samples * h)
    tol = TOL_FRACTION * theorem
    sensitivity = theorem + 2 * tol
    pilot, law = laws  # the public feasibility check draws at the center, then the release
    assert np.allclose(pilot.footpoint, to_numpy(north))
    assert law.scale == pytest.approx(sensitivity / 0.5, rel=1e-9)  # footpoint-free constant
    exact = exact_frechet_mean(sphere, points)
    assert float(sphere.metric.dist(to_backend(law.footpoint), exact)) <= tol
    (event,) = estimator.events_
    assert event.epsilon == 0.5 and event.sensitivity == pytest.approx(sensitivity, rel=1e-9)
    assert estimator.budget_.spent_epsilon == pytest.approx(0.5)
    assert estimator.noise_multiplier_ == pytest.approx(1 / 0.5)


@pytest.mark.slow
def test_drawn_distances_follow_the_calibrated_laplace_law():
    """R^3: rho(mean, release) ~ Gamma(3, sigma), sigma = Delta / epsilon = 2r / (n eps)."""
    space = Euclidean(3)
    rng = np.random.default_rng(shifted(2))
    points = to_backend(rng.uniform(-0.5, 0.5, size=(40, 3)))
    mean = gs.mean(points, axis=0)
    sigma = 2 * 1.0 / (40 * 2.0) * (1 + 2 * TOL_FRACTION)  # Delta + 2 tol
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


def test_projection_lands_every_point_inside_the_ball():
    sphere, north, points = _sphere_data(60, seed=4)
    far = to_numpy(points)
    far[0] = [1.0, 0.0, 0.0]
    far[1] = [0.0, 0.0, -1.0]  # the antipode: no Log at the center
    far[2] = [1e-9, 0.0, -1.0]  # next to it: an inaccurate Log
    projected = project_onto_ball(sphere, far, north, 0.5)
    distances = to_numpy(sphere.metric.dist(to_backend(projected), north))
    assert np.all(distances < 0.5)
    assert distances[0] == pytest.approx(0.5)
    assert np.allclose(projected[3:], far[3:])  # points inside are left alone


def _public_outputs(make, points):
    """What a fit shows besides ``estimate_``: warnings, exception, fitted attributes."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            estimator = make().fit(points)
        except Exception as error:  # noqa: BLE001 - the exception is an output
            return [type(error).__name__, str(error)]
    shown = [(w.category.__name__, str(w.message)) for w in caught]
    attributes = {name: repr(value) for name, value in vars(estimator).items()
                  if name.endswith("_") and name not in ("estimate_", "budget_")}
    return [shown, attributes, repr(estimator.budget_.events)]


def _sphere_neighbours():
    """S^2 data in B(north, 0.3), and a neighbour whose first record lies far outside."""
    sphere, north, points = _sphere_data(80, seed=5)
    inside = project_onto_ball(sphere, to_numpy(points), north, 0.3)
    outside = inside.copy()
    outside[0] = [0.0, 0.0, -1.0]
    return sphere, north, inside, outside


@pytest.mark.parametrize("method", ["laplace", "auto"])
def test_a_record_outside_the_ball_changes_nothing_public(method):
    sphere, north, inside, outside = _sphere_neighbours()

    def make():
        return PrivateFrechetMean(sphere, epsilon=1.0, method=method, radius=0.3,
                                  center=north, random_state=shifted(6))

    found = _public_outputs(make, to_backend(inside))
    assert found[1]["method_"] == "'laplace'"  # "auto" takes Laplace here
    assert found == _public_outputs(make, to_backend(outside))


# Three SPD(2) records 2.97 from I (affine-invariant metric) on which geomstats' gradient
# descent with step 0.5 does not reach a small gradient in 1,000 steps (the step overshoots
# in negative curvature), while it converges once the first record is replaced by I.
SLOW_RECORDS = np.array([
    [[0.556849, -0.329812], [-0.329812, 0.267330]],
    [[5.826229, 2.884924], [2.884924, 1.565786]],
    [[15.624072, 4.257230], [4.257230, 1.586636]],
])


@pytest.mark.parametrize("method", ["laplace", "auto"])
def test_a_record_that_slows_the_mean_solver_changes_nothing_public(method):
    space = SPDMatrices(2)
    calm = SLOW_RECORDS.copy()
    calm[0] = np.eye(2)

    def make():
        return PrivateFrechetMean(space, epsilon=10.0, method=method, radius=3.0,
                                  center=np.eye(2), random_state=shifted(8))

    found = _public_outputs(make, to_backend(SLOW_RECORDS))
    assert found[1]["method_"] == "'laplace'"
    assert found == _public_outputs(make, to_backend(calm))


def test_auto_with_a_ball_on_a_space_without_curvature_bounds_takes_a_gaussian_method():
    """Stiefel: no sensitivity bound for Laplace, so "auto" picks a Gaussian release."""
    space = Stiefel(4, 2)
    center = np.eye(4)[:, :2]
    rng = np.random.default_rng(shifted(9))
    tangents = space.to_tangent(to_backend(0.1 * rng.standard_normal((50, 4, 2))),
                                to_backend(center))
    points = space.metric.exp(tangents, to_backend(center))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the Gaussian release's noise diagnostics
        estimator = PrivateFrechetMean(space, epsilon=1.0, clip_norm=0.5, radius=0.3,
                                       center=center, random_state=shifted(10)).fit(points)
    assert estimator.method_ != "laplace"
