"""The closed-form geodesics (SPD affine, sphere, hyperboloid, Euclidean) agree with
geomstats' maps."""


import geomstats.backend as gs
import numpy as np
import pytest
from geomstats.geometry.euclidean import Euclidean
from geomstats.geometry.hyperboloid import Hyperboloid
from geomstats.geometry.hypersphere import Hypersphere
from geomstats.geometry.scalar_product_metric import ScalarProductMetric
from geomstats.geometry.spd_matrices import SPDMatrices

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.optim.geodesics import (
    Geodesics,
    SPDAffineGeodesics,
    geodesics_for,
    log_for,
    sphere_log,
)

from .data import cloud, random_tangent


def spd_space(scale, n=3):
    space = SPDMatrices(n)
    if scale != 1.0:
        space.equip_with_metric(ScalarProductMetric(space, scale))
    return space


@pytest.mark.parametrize("n", [2, 3])  # 2: the closed form of symmetric_2x2, no eigh
@pytest.mark.parametrize("scale", [1.0, 4.0])
def test_spd_affine_exp_and_interpolation_match_geomstats(scale, n):
    space = spd_space(scale, n)
    geodesics = geodesics_for(space)
    assert isinstance(geodesics, SPDAffineGeodesics)
    rng = np.random.default_rng(0)
    points = cloud(space, 4, radius=2.0, seed=1, offset=1.0)
    vectors = random_tangent(space, points[0], np.array([0.5, 1.0, 1.5, 2.0]), rng)
    np.testing.assert_allclose(  # a batch of base points takes geomstats' own map
        to_numpy(geodesics.exp(vectors, points)), to_numpy(space.metric.exp(vectors, points)),
        rtol=1e-9, atol=1e-10,
    )
    for base, end in zip(points[:2], points[2:]):
        vector = random_tangent(space, base, np.array([1.5]), rng)[0]
        np.testing.assert_allclose(
            to_numpy(geodesics.exp(vector, base)), to_numpy(space.metric.exp(vector, base)),
            rtol=1e-9, atol=1e-10,
        )
        for t in (0.0, 0.3, 1.0):
            expected = space.metric.exp(t * space.metric.log(end, base), base)
            np.testing.assert_allclose(
                to_numpy(geodesics.interpolate(base, end, t)), to_numpy(expected),
                rtol=1e-9, atol=1e-10,
            )


def test_other_metrics_use_geomstats():
    space = Hypersphere(2)
    space.equip_with_metric(ScalarProductMetric(space, 4.0))  # no closed form kept for it
    geodesics = geodesics_for(space)
    assert type(geodesics) is Geodesics
    start, end = to_backend(np.array([1.0, 0, 0])), to_backend(np.array([0, 1.0, 0]))
    middle = to_numpy(geodesics.interpolate(start, end, 0.5))
    np.testing.assert_allclose(middle, [np.sqrt(0.5), np.sqrt(0.5), 0], atol=1e-12)


@pytest.mark.parametrize("space", [Hypersphere(4), Hyperboloid(3), Euclidean(5)],
                         ids=["sphere", "hyperboloid", "euclidean"])
def test_closed_form_exp_matches_geomstats_at_every_step_length(space):
    """Tiny steps (geomstats' Taylor branch), ordinary and long ones."""
    geodesics = geodesics_for(space)
    assert type(geodesics) is not Geodesics
    rng = np.random.default_rng(4)
    base = to_backend(space.random_point())
    direction = space.to_tangent(to_backend(rng.normal(size=base.shape)), base)
    direction = direction / space.metric.norm(direction, base)
    for length in (0.0, 1e-9, 1e-4, 0.3, 2.5):
        np.testing.assert_allclose(
            to_numpy(geodesics.exp(length * direction, base)),
            to_numpy(space.metric.exp(length * direction, base)), rtol=1e-12, atol=1e-14)


def test_sphere_log_matches_geomstats_near_and_far():
    space = Hypersphere(5)
    rng = np.random.default_rng(5)
    base = space.random_point()
    direction = space.to_tangent(to_backend(rng.normal(size=6)), base)
    direction = direction / space.metric.norm(direction, base)
    points = gs.stack([base] + [space.metric.exp(length * direction, base)
                                for length in (1e-7, 1e-3, 1.0, 3.0)]
                      + list(space.random_point(20)))
    np.testing.assert_allclose(to_numpy(sphere_log(points, base)),
                               to_numpy(space.metric.log(points, base)),
                               rtol=1e-9, atol=1e-13)
    for row in range(5):  # one record at a time: the scalar route
        np.testing.assert_allclose(to_numpy(sphere_log(points[row:row + 1], base)),
                                   to_numpy(space.metric.log(points[row:row + 1], base)),
                                   rtol=1e-9, atol=1e-13)
    assert log_for(Hypersphere(5))(points, base).shape == points.shape


@pytest.mark.parametrize("n", [2, 3])
def test_chained_maps_reuse_the_factor_of_the_point_they_returned(n):
    """A run's iterates and running average each start their next map from the point the
    map returned: its kept factor F (F F^T = point, F^-1 F = I) gives geomstats' maps."""
    space = spd_space(1.0, n)
    geodesics = geodesics_for(space)
    rng = np.random.default_rng(2)
    targets = cloud(space, 30, radius=1.5, seed=3, offset=1.0)
    point = average = targets[0]
    for step, target in enumerate(targets[1:]):
        vector = random_tangent(space, point, np.array([0.4]), rng)[0]
        expected_point = space.metric.exp(vector, point)
        coefficient = 2.0 / (step + 2)
        expected_average = space.metric.exp(
            coefficient * space.metric.log(expected_point, average), average)
        point = geodesics.exp(vector, point)
        average = geodesics.interpolate(average, point, coefficient)
        np.testing.assert_allclose(to_numpy(point), to_numpy(expected_point),
                                   rtol=1e-9, atol=1e-10)
        np.testing.assert_allclose(to_numpy(average), to_numpy(expected_average),
                                   rtol=1e-9, atol=1e-10)
        for kept in (point, average):
            factor, inverse = (to_numpy(part) for part in geodesics.known_factor(kept))
            np.testing.assert_allclose(factor @ factor.T, to_numpy(kept), rtol=1e-12,
                                       atol=1e-12)
            np.testing.assert_allclose(inverse @ factor, np.eye(n), atol=1e-12)
    assert geodesics.known_factor(to_backend(to_numpy(point))) is None  # another object
