"""The public ``TangentGaussian.sample`` API: shapes, randomness, backends, bad inputs."""

import geomstats.backend as gs
import numpy as np
import pytest
from geomstats.geometry.hypersphere import Hypersphere
from geomstats.geometry.spd_matrices import SPDMatrices

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.distributions import TangentGaussian

from .conftest import make_case


def _stack(points):
    return np.stack(list(points.values()))


def _sample(space, base_point, **kwargs):
    return TangentGaussian(space).sample(to_backend(base_point), **kwargs)


def test_same_seed_same_draws_and_a_generator_is_advanced(family_case):
    space = family_case.space
    point = family_case.points["random"]
    first = to_numpy(_sample(space, point, n_samples=3, random_state=7))
    repeated = to_numpy(_sample(space, point, n_samples=3, random_state=7))
    np.testing.assert_array_equal(first, repeated)
    assert not np.allclose(first, to_numpy(_sample(space, point, n_samples=3, random_state=8)))
    generator = np.random.default_rng(7)
    from_generator = to_numpy(_sample(space, point, n_samples=3, random_state=generator))
    np.testing.assert_array_equal(first, from_generator)
    again = to_numpy(_sample(space, point, n_samples=3, random_state=generator))
    assert not np.allclose(first, again)


def test_draws_are_linear_in_sigma_and_shifted_by_the_mean(family_case):
    """Same seed: sigma scales the draw, a tangent mean is added to it."""
    space = family_case.space
    point = family_case.points["random"]
    unit = to_numpy(_sample(space, point, n_samples=4, random_state=1))
    mean = unit[0]
    scaled = to_numpy(
        _sample(space, point, n_samples=4, sigma=2.5, mean=to_backend(mean), random_state=1)
    )
    np.testing.assert_allclose(scaled, 2.5 * unit + mean, rtol=1e-12, atol=1e-12)


def test_shapes_and_backend_arrays(family_case):
    space = family_case.space
    shape = tuple(space.shape)
    points = _stack(family_case.points)
    n_points = points.shape[0]
    expected = {
        (False, 1): shape,
        (False, 5): (5,) + shape,
        (True, 1): (n_points,) + shape,
        (True, 5): (5, n_points) + shape,
    }
    backend_type = type(gs.zeros(1))
    for (batched, n_samples), out_shape in expected.items():
        base_point = points if batched else points[-1]
        draws = _sample(space, base_point, n_samples=n_samples, random_state=0)
        assert type(draws) is backend_type
        assert tuple(draws.shape) == out_shape
        assert to_numpy(draws).dtype == np.float64


def test_a_batch_gets_one_draw_tangent_at_each_base_point(family_case):
    space = family_case.space
    points = _stack(family_case.points)
    draws = _sample(space, points, n_samples=1, random_state=0)
    scale = max(1.0, np.abs(points).max()) * max(1.0, np.abs(to_numpy(draws)).max())
    tangent = to_numpy(space.is_tangent(draws, to_backend(points), atol=1e-10 * scale))
    assert np.all(tangent.astype(bool))
    distinct = np.unique(to_numpy(draws).reshape(points.shape[0], -1), axis=0)
    assert distinct.shape[0] == points.shape[0]


@pytest.fixture
def sphere_case():
    return make_case("hypersphere")


@pytest.mark.parametrize("sigma", [0.0, -1.0, float("nan"), float("inf")])
def test_rejects_a_bad_sigma(sphere_case, sigma):
    with pytest.raises(ValueError, match="sigma"):
        _sample(sphere_case.space, sphere_case.points["random"], sigma=sigma)


def test_rejects_a_sigma_that_is_not_a_number(sphere_case):
    with pytest.raises(TypeError, match="sigma"):
        _sample(sphere_case.space, sphere_case.points["random"], sigma="1.0")


@pytest.mark.parametrize(
    "n_samples, error", [(0, ValueError), (-2, ValueError), (2.5, TypeError), (True, TypeError)]
)
def test_rejects_a_bad_n_samples(sphere_case, n_samples, error):
    with pytest.raises(error, match="n_samples"):
        _sample(sphere_case.space, sphere_case.points["random"], n_samples=n_samples)


def test_names_the_batch_index_of_a_base_point_off_the_manifold(sphere_case):
    points = _stack(sphere_case.points)
    points[2] *= 1.5
    with pytest.raises(ValueError, match=r"not on Hypersphere.*batch indices \[2\]"):
        _sample(sphere_case.space, points)


def test_rejects_a_single_base_point_off_the_manifold():
    space = SPDMatrices(3)
    with pytest.raises(ValueError, match="base_point is not on SPDMatrices"):
        _sample(space, np.diag([1.0, -1.0, 2.0]))


@pytest.mark.parametrize(
    "base_point, message",
    [(np.ones(4), "base_point must have shape"), (np.full(5, np.nan), "non-finite")],
)
def test_rejects_a_base_point_of_the_wrong_shape_or_not_finite(sphere_case, base_point, message):
    with pytest.raises(ValueError, match=message):
        _sample(sphere_case.space, base_point)


def test_rejects_a_mean_that_is_not_tangent(sphere_case):
    point = sphere_case.points["random"]
    with pytest.raises(ValueError, match="mean is not tangent"):
        _sample(sphere_case.space, point, mean=to_backend(point))


def test_rejects_a_mean_of_the_wrong_shape(sphere_case):
    with pytest.raises(ValueError, match="mean must have shape"):
        _sample(sphere_case.space, sphere_case.points["random"], mean=to_backend(np.zeros(3)))


def test_rejects_a_space_without_a_metric():
    with pytest.raises(TypeError, match="no metric"):
        TangentGaussian(Hypersphere(2, equip=False))


def test_rejects_an_unknown_method():
    with pytest.raises(ValueError, match="method must be one of"):
        TangentGaussian(Hypersphere(2), method="householder")


@pytest.mark.parametrize("random_state, error", [(-1, ValueError), ("seed", TypeError)])
def test_rejects_a_bad_random_state(sphere_case, random_state, error):
    with pytest.raises(error, match="random_state"):
        _sample(sphere_case.space, sphere_case.points["random"], random_state=random_state)


def test_rejects_a_sphere_in_intrinsic_coordinates():
    with pytest.raises(ValueError, match="extrinsic coordinates"):
        TangentGaussian(Hypersphere(2, intrinsic=True))
