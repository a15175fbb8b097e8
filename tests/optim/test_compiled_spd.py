"""The SPD(n) kernel's helpers (``optim.compiled_spd``), run as plain Python, give the
loop's noise, maps and clipped sums (the whole kernel against the loop:
tests/optim/test_compiled_blocks.py)."""

import numpy as np
import pytest
from geomstats.geometry.spd_matrices import SPDMatrices

from geomstats_dp.optim import compiled_spd
from geomstats_dp.optim.affine_log import AffineLogSums
from geomstats_dp.optim.clipping import clip_factors
from geomstats_dp.optim.geodesics import SPDAffineGeodesics

from .data import assert_kernel_noise_is_the_samplers, cloud

pytestmark = pytest.mark.backend_independent
SETTINGS = (1.0, 0.8, 1.0, 0.0, np.inf, 0.0, -1)  # n / b, C, sqrt(scale), ...


def spd_points(size=4, n_points=6):
    space = SPDMatrices(size)
    return space, np.asarray(cloud(space, n_points, radius=1.5, seed=5, offset=1.0))


def test_the_noise_is_the_samplers_draw():
    space, points = spd_points()
    indefinite = np.eye(4) - 2 * np.eye(4)[::-1]  # no Cholesky factor
    assert_kernel_noise_is_the_samplers(compiled_spd._add_noise, space, points, indefinite,
                                        seed=2)


def test_the_clipped_sum_is_the_loops():
    _, points = spd_points()
    chain = compiled_spd.state(points[0])
    weights = np.full(len(points), 1 / len(points))
    indices = np.arange(1, len(points))
    found, finite = compiled_spd._clipped_gradient(points, weights, indices, 0,
                                                   len(indices), chain, SETTINGS)
    norms, weighted_sum = AffineLogSums(points[0])(points[indices])
    expected = weighted_sum(weights[indices] * clip_factors(norms, SETTINGS[1]))
    assert finite and np.any(np.asarray(norms) > SETTINGS[1])  # some records clipped
    np.testing.assert_allclose(found, expected, rtol=1e-11, atol=1e-13)


def test_the_maps_are_the_loops():
    space, points = spd_points()
    geodesics = SPDAffineGeodesics(space.metric, space)
    tangent_vec = 0.4 * (points[1] - points[0])
    chain = compiled_spd.state(points[0])
    assert compiled_spd._whitened_map(chain, tangent_vec, 0.0)
    np.testing.assert_allclose(chain[0], geodesics.exp(tangent_vec, points[0]),
                               rtol=1e-11, atol=1e-13)
    np.testing.assert_allclose(chain[1] @ chain[1].T, chain[0], rtol=1e-11, atol=1e-13)
    np.testing.assert_allclose(chain[1] @ chain[2], np.eye(4), atol=1e-11)
    chain = compiled_spd.state(points[2])
    assert compiled_spd._whitened_map(chain, points[3], 0.3)
    np.testing.assert_allclose(chain[0], geodesics.interpolate(points[2], points[3], 0.3),
                               rtol=1e-11, atol=1e-13)


def test_a_degenerate_iterate_stops_the_kernel_with_the_loops_error():
    """An iterate that underflowed to 0 has no finite inverse factor: the kernel stops,
    and the loop's sums at it raise numpy's error."""
    _, points = spd_points()
    chain = compiled_spd.state(np.eye(4))
    chain[0], chain[1], chain[2] = 0.0, 0.0, np.inf
    _, finite = compiled_spd._clipped_gradient(points, np.ones(len(points)),
                                               np.arange(len(points)), 0, len(points),
                                               chain, SETTINGS)
    assert not finite
    with pytest.raises(np.linalg.LinAlgError):
        compiled_spd.raise_failure(chain, points, np.arange(len(points)))
