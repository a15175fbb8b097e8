"""The weighted tangent and Karcher means on SPD (closed-form affine-invariant maps)
equal the same iteration written here with geomstats' ``log`` and ``exp``."""

import geomstats.backend as gs
import numpy as np
import pytest
from geomstats.geometry.scalar_product_metric import ScalarProductMetric
from geomstats.geometry.spd_matrices import SPDMatrices

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.optim.karcher import karcher_mean, tangent_mean


def geomstats_tangent_mean(space, points, weights, base_point):
    """Exp_x(sum_i w_i Log_x(x_i)) with geomstats' maps, the sum in numpy."""
    logs = to_numpy(space.metric.log(points, base_point))
    return space.metric.exp(to_backend(np.einsum("k,kij->ij", weights, logs)), base_point)


def _space(dim, scale):
    space = SPDMatrices(dim)
    if scale != 1.0:
        space.equip_with_metric(ScalarProductMetric(space, scale))
    return space


def _case(dim, scale, seed, n_points=7):
    space = _space(dim, scale)
    gs.random.seed(seed)
    points = space.random_point(n_points + 1)
    weights = np.random.default_rng(seed).uniform(0.2, 1.0, n_points)
    return space, points[:-1], weights / weights.sum(), points[-1]


@pytest.mark.parametrize("dim, scale", [(2, 1.0), (3, 1.0), (8, 1.0), (3, 2.5)])
def test_karcher_mean_equals_geomstats_iteration(seed_shift, dim, scale):
    space, points, weights, start = _case(dim, scale, seed_shift)
    expected = start
    for _ in range(20):
        expected = geomstats_tangent_mean(space, points, weights, expected)
    found = karcher_mean(space, points, to_backend(weights), start)
    np.testing.assert_allclose(to_numpy(found), to_numpy(expected), rtol=0, atol=1e-10)
    one_step = tangent_mean(space, points, to_backend(weights), start)
    np.testing.assert_allclose(
        to_numpy(one_step), to_numpy(geomstats_tangent_mean(space, points, weights, start)),
        rtol=0, atol=1e-10)


def test_karcher_mean_is_a_fixed_point_of_the_tangent_mean(seed_shift):
    space, points, weights, start = _case(3, 1.0, seed_shift)
    mean = karcher_mean(space, points, to_backend(weights), start, n_iter=60)
    logs = to_numpy(space.metric.log(points, mean))
    gradient = np.einsum("k,kij->ij", weights, logs)  # zero at the weighted Frechet mean
    assert np.linalg.norm(gradient) < 1e-10


def test_karcher_mean_with_a_tolerance_stops_early_at_the_same_point(seed_shift, monkeypatch):
    """Points within 0.1 of each other: the iteration is at rounding level after a few
    steps; with tol=1e-13 it stops there, at the 60-step point to 1e-12."""
    from geomstats_dp.optim import karcher

    space = _space(3, 1.0)
    gs.random.seed(seed_shift)
    centre = space.random_point()
    rng = np.random.default_rng(seed_shift)
    steps = rng.normal(scale=0.05, size=(5, 3, 3))
    points = space.metric.exp(to_backend((steps + np.transpose(steps, (0, 2, 1))) / 2), centre)
    weights = to_backend(np.full(5, 0.2))
    full = karcher_mean(space, points, weights, points[0], n_iter=60)
    calls = []
    inner = karcher.weighted_log_sum
    monkeypatch.setattr(karcher, "weighted_log_sum",
                        lambda *args: calls.append(1) or inner(*args))
    stopped = karcher_mean(space, points, weights, points[0], n_iter=60, tol=1e-13)
    assert len(calls) < 15
    np.testing.assert_allclose(to_numpy(stopped), to_numpy(full), rtol=0, atol=1e-12)
