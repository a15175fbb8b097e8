"""The sampler base classes: row dot products, one draw as the first of a batch, and the
isometric transport's sampling and vector transport (on the sphere's registered one,
checked with geomstats' metric)."""

import numpy as np
import pytest
from geomstats.geometry.hypersphere import Hypersphere

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.distributions.base import TangentSampler, row_dots
from geomstats_dp.distributions.sphere import HypersphereTransport
from tests.conftest import shifted

SPACE = Hypersphere(3)
TRANSPORT = HypersphereTransport(SPACE, SPACE.metric)


def _points(n, seed):
    draws = np.random.default_rng(seed).standard_normal((n, 4))
    return draws / np.linalg.norm(draws, axis=1, keepdims=True)


@pytest.mark.parametrize("n_rows", [1, 5])
def test_row_dots_are_the_rows_dot_products(n_rows):
    rng = np.random.default_rng(shifted(0))
    first, second = rng.standard_normal((n_rows, 7)), rng.standard_normal((n_rows, 7))
    expected = [sum(a * b for a, b in zip(row_a, row_b)) for row_a, row_b in zip(first, second)]
    np.testing.assert_allclose(row_dots(first, second), expected, rtol=1e-12)


def test_sample_draws_at_the_reference_then_transports():
    points = _points(3, shifted(1))
    draws = TRANSPORT.sample(points, 4, np.random.default_rng(5))
    coefficients = np.random.default_rng(5).standard_normal((4, 3, 3))
    np.testing.assert_allclose(
        draws, TRANSPORT.transport(points, TRANSPORT.from_coordinates(coefficients)),
        atol=1e-14)
    np.testing.assert_allclose(TRANSPORT.reference_basis(), TRANSPORT.from_coordinates(np.eye(3)))


def test_one_draw_is_the_first_of_a_batch_and_a_non_finite_point_is_refused():
    point = _points(1, shifted(2))[0]
    one = TRANSPORT.sample_one(point, np.random.default_rng(9))
    batch = TRANSPORT.sample(point[None], 1, np.random.default_rng(9))
    np.testing.assert_allclose(one, batch[0, 0], atol=1e-14)
    # the base class's one draw (the sphere overrides it with its own arithmetic)
    one = TangentSampler.sample_one(TRANSPORT, point, np.random.default_rng(9))
    np.testing.assert_allclose(one, batch[0, 0], atol=1e-14)
    with pytest.raises(ValueError, match="base_point"):
        TangentSampler.sample_one(TRANSPORT, np.array([np.nan, 0, 0, 1.0]),
                                  np.random.default_rng(0))


def test_vector_transport_keeps_inner_products_and_inverts():
    starts, ends = _points(2, shifted(3)), _points(2, shifted(4))
    vectors = np.stack([
        to_numpy(SPACE.to_tangent(to_backend(v), to_backend(x)))
        for v, x in zip(np.random.default_rng(shifted(5)).standard_normal((2, 4)), starts)])
    others = np.stack([
        to_numpy(SPACE.to_tangent(to_backend(v), to_backend(x)))
        for v, x in zip(np.random.default_rng(shifted(6)).standard_normal((2, 4)), starts)])
    moved = TRANSPORT.vector_transport(vectors, starts, ends)
    moved_others = TRANSPORT.vector_transport(others, starts, ends)
    assert np.all(to_numpy(SPACE.is_tangent(to_backend(moved), to_backend(ends), atol=1e-10)))
    np.testing.assert_allclose(
        to_numpy(SPACE.metric.inner_product(to_backend(moved), to_backend(moved_others),
                                            to_backend(ends))),
        to_numpy(SPACE.metric.inner_product(to_backend(vectors), to_backend(others),
                                            to_backend(starts))), atol=1e-12)
    np.testing.assert_allclose(TRANSPORT.vector_transport(moved, ends, starts), vectors,
                               atol=1e-12)
