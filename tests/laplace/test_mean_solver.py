"""The fixed-iteration Frechet mean solver of the Laplace release: the public number of
steps reaches the public tolerance on spread-out data, and geometries outside its proof are
refused before any data is read."""

import math
import warnings

import geomstats.backend as gs
import numpy as np
import pytest
from geomstats.geometry.euclidean import Euclidean
from geomstats.geometry.hyperboloid import Hyperboloid
from geomstats.geometry.hypersphere import Hypersphere
from geomstats.geometry.spd_matrices import SPDBuresWassersteinMetric, SPDMatrices

from geomstats_dp._backend import to_backend
from geomstats_dp.distributions.laplace.mean_solver import plan_mean_solver
from geomstats_dp.learning import PrivateFrechetMean
from geomstats_dp.learning.reference import exact_frechet_mean
from geomstats_dp.privacy import PrivacyBudget
from tests.conftest import shifted


def _bures_wasserstein(n):
    space = SPDMatrices(n, equip=False)
    space.equip_with_metric(SPDBuresWassersteinMetric)
    return space


def _boundary_points(space, center, radius, n_samples, seed):
    """Records at distance 0.999 r from the center along 3 random directions, in random
    proportions: far from the center, and a mean far from it."""
    rng = np.random.default_rng(seed)
    directions = space.to_tangent(to_backend(rng.standard_normal((3, *space.shape))), center)
    directions = directions[rng.integers(0, 3, n_samples)]
    norms = space.metric.norm(directions, center)
    scale = to_backend(0.999 * radius) / norms
    return space.metric.exp(directions * scale[(...,) + (None,) * len(space.shape)], center)


CASES = {
    "sphere": (lambda: Hypersphere(2), lambda: gs.array([0.0, 0.0, 1.0]), 0.5),
    "hyperbolic": (lambda: Hyperboloid(2), lambda: gs.array([1.0, 0.0, 0.0]), 1.5),
    "spd_affine": (lambda: SPDMatrices(2), lambda: gs.eye(2), 1.0),
    "bures_wasserstein": (lambda: _bures_wasserstein(2), lambda: gs.eye(2), 0.15),
    "flat": (lambda: Euclidean(3), lambda: gs.zeros(3), 2.0),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_public_number_of_steps_reaches_the_tolerance(case):
    make_space, make_center, radius = CASES[case]
    space, center = make_space(), make_center()
    tol = 1e-3 * radius
    solver = plan_mean_solver(space, radius, tol, center)
    for seed in range(3):
        points = _boundary_points(space, center, radius, 40, shifted(seed))
        found = solver.solve(space, points, center)
        exact = exact_frechet_mean(space, points)
        assert float(space.metric.dist(found, exact)) <= tol


@pytest.mark.backend_independent
def test_step_and_count_follow_the_stated_constants():
    """H^2: eta = 1 / L, L = 3r coth(3r); S^2: eta = 1, contraction 1 - 3r cot(3r)."""
    radius, tol = 1.5, 1e-6
    solver = plan_mean_solver(Hyperboloid(2), radius, tol)
    smoothness = 3 * radius / math.tanh(3 * radius)
    assert solver.step_size == pytest.approx(1 / smoothness, rel=1e-12)
    assert solver.n_iter == math.ceil(math.log(tol**2 / radius**2)
                                      / math.log(1 - 1 / smoothness))
    radius = 0.4
    solver = plan_mean_solver(Hypersphere(2), radius, tol)
    contraction = 1 - 3 * radius / math.tan(3 * radius)
    assert solver.step_size == 1.0
    assert solver.n_iter == math.ceil(math.log(tol**2 / radius**2) / math.log(contraction))
    assert plan_mean_solver(Euclidean(3), 5.0, tol).n_iter == 1  # the closed form


def test_radii_outside_the_proof_are_refused_before_reading_data():
    with pytest.raises(ValueError, match="3 r must be below"):
        plan_mean_solver(Hypersphere(2), 0.55, 1e-6)  # 3r > pi / 2, below r* = pi / 4
    with pytest.raises(ValueError, match="radius must be < sqrt"):  # B_2r leaves SPD
        plan_mean_solver(_bures_wasserstein(2), 0.6, 1e-6, gs.eye(2))
    budget = PrivacyBudget(5.0, 1e-5)
    north = gs.array([0.0, 0.0, 1.0])
    points = gs.stack([north, north])
    with pytest.raises(ValueError, match="fixed-iteration solver"):
        PrivateFrechetMean(Hypersphere(2), method="laplace", radius=0.6, center=north,
                           budget=budget).fit(points)
    assert budget.events == ()
    with warnings.catch_warnings():  # two records: the Gaussian release warns of its noise
        warnings.simplefilter("ignore")
        estimator = PrivateFrechetMean(Hypersphere(2), epsilon=1.0, radius=0.6, center=north,
                                       clip_norm=0.6, random_state=shifted(0)).fit(points)
    assert estimator.method_ != "laplace"  # "auto" does not take a refused release
