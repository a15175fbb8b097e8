"""The sphere's closed-form transport is geomstats' parallel transport from the pole s e1
along the great circle, for either pole, and its inverse."""

import numpy as np
from geomstats.geometry.hypersphere import Hypersphere

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.distributions.sphere import HypersphereTransport
from tests.conftest import shifted

SPACE = Hypersphere(3)


def _points(signs, seed):
    draws = np.random.default_rng(seed).standard_normal((len(signs), 4))
    draws[:, 0] = np.asarray(signs) * (np.abs(draws[:, 0]) + 0.1)
    return draws / np.linalg.norm(draws, axis=1, keepdims=True)


def test_transport_is_geomstats_parallel_transport_from_the_chosen_pole():
    transport = HypersphereTransport(SPACE, SPACE.metric)
    points = _points([1, 1, -1, -1], shifted(0))
    np.testing.assert_array_equal(transport.pole_signs(points), [1, 1, -1, -1])
    coefficients = np.random.default_rng(shifted(1)).standard_normal((2, 4, 3))
    at_pole = transport.from_coordinates(coefficients)
    moved = transport.transport(points, at_pole)
    for index, point in enumerate(points):
        pole = np.zeros(4)
        pole[0] = transport.pole_signs(point[None])[0]
        expected = SPACE.metric.parallel_transport(
            to_backend(at_pole[:, index]), to_backend(pole), end_point=to_backend(point))
        np.testing.assert_allclose(moved[:, index], to_numpy(expected), atol=1e-10)
    np.testing.assert_allclose(transport.transport_back(points, moved), at_pole, atol=1e-12)

