"""The sphere kernel's helpers (``optim.compiled_sphere``), run as plain Python, give the
loop's exponential map, noise and averages (the whole kernel against the loop:
tests/optim/test_compiled_blocks.py)."""

import numpy as np
import pytest
from geomstats.geometry.hypersphere import Hypersphere

from geomstats_dp.optim import compiled_sphere
from geomstats_dp.optim.geodesics import SphereGeodesics

from .data import assert_kernel_noise_is_the_samplers, cloud

pytestmark = pytest.mark.backend_independent


def sphere_and_points(dim=6, n_points=4):
    space = Hypersphere(dim)
    return space, np.asarray(cloud(space, n_points, radius=1.0, seed=3, offset=0.5))


@pytest.mark.parametrize("length", [1e-5, 0.3, 2.0])  # |V|^2 below Taylor's threshold
def test_the_exponential_step_is_the_loops(length):
    space, points = sphere_and_points()
    geodesics = SphereGeodesics(space.metric, space)
    direction = np.random.default_rng(0).standard_normal(points.shape[1])
    direction *= length / np.linalg.norm(direction)  # not tangent: the step projects it
    for point in points:
        expected = geodesics.step(direction, -0.7, point)
        found = compiled_sphere.state(point)[0]
        compiled_sphere._exp_step(found, direction, -0.7)
        np.testing.assert_allclose(found, expected, rtol=1e-13, atol=1e-15)


def test_the_noise_is_the_samplers_draw():
    space, points = sphere_and_points()
    assert_kernel_noise_is_the_samplers(compiled_sphere._add_noise, space, points,
                                        points[0] * np.nan, seed=1)


def test_the_running_average_is_the_loops_interpolation():
    space, points = sphere_and_points()
    geodesics = SphereGeodesics(space.metric, space)
    average = compiled_sphere.state(points[0])[0]
    compiled_sphere._interpolate(average, points[1], 0.25, np.empty(points.shape[1]))
    np.testing.assert_allclose(average, geodesics.interpolate(points[0], points[1], 0.25),
                               rtol=1e-12, atol=1e-14)


def test_the_taylor_coefficients_are_geomstats():
    from geomstats import algebra_utils

    squared = 4e-7
    for coefficients, function in ((compiled_sphere.COS_TAYLOR, algebra_utils.cos_close_0),
                                   (compiled_sphere.SINC_TAYLOR, algebra_utils.sinc_close_0)):
        expected = algebra_utils.taylor_exp_even_func(squared, function, order=4)
        assert compiled_sphere._taylor(squared, coefficients) == pytest.approx(
            float(expected), rel=1e-15)
