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
