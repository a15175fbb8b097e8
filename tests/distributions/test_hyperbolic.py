"""Hyperbolic space: the hyperboloid's transport is geomstats' parallel transport from e1,
and the Poincare ball's the conformal map u -> (1 - |w|^2) u of T_0 onto T_w."""

import numpy as np
from geomstats.geometry.hyperboloid import Hyperboloid
from geomstats.geometry.poincare_ball import PoincareBall

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.distributions.hyperbolic import (
    HyperboloidTransport,
    PoincareBallTransport,
)
from tests.conftest import shifted


def test_hyperboloid_transport_is_geomstats_parallel_transport_from_e1():
    space = Hyperboloid(3)
    transport = HyperboloidTransport(space, space.metric)
    tails = np.random.default_rng(shifted(0)).standard_normal((3, 3)) * [[0.3], [1.0], [3.0]]
    points = np.concatenate([np.sqrt(1 + (tails**2).sum(axis=1, keepdims=True)), tails], 1)
    coefficients = np.random.default_rng(shifted(1)).standard_normal((2, 3, 3))
    at_pole = transport.from_coordinates(coefficients)
    moved = transport.transport(points, at_pole)
    pole = to_backend(np.array([1.0, 0.0, 0.0, 0.0]))
    for index, point in enumerate(points):
        expected = space.metric.parallel_transport(
            to_backend(at_pole[:, index]), pole, end_point=to_backend(point))
        np.testing.assert_allclose(moved[:, index], to_numpy(expected), rtol=1e-9,
                                   atol=1e-9)
    np.testing.assert_allclose(transport.transport_back(points, moved), at_pole, atol=1e-10)


def test_poincare_ball_transport_scales_by_the_conformal_factor():
    space = PoincareBall(3)
    transport = PoincareBallTransport(space, space.metric)
    points = np.array([[0.0, 0.0, 0.0], [0.5, -0.2, 0.1], [0.0, 0.95, 0.0]])
    coefficients = np.random.default_rng(shifted(2)).standard_normal((4, 3, 3))
    at_origin = transport.from_coordinates(coefficients)
    moved = transport.transport(points, at_origin)
    factors = 1 - (points**2).sum(axis=1)
    np.testing.assert_allclose(moved, at_origin * factors[None, :, None], rtol=1e-12)
    # an orthonormal basis of T_0 in geomstats' metric 4 <u, v> / (1 - |w|^2)^2
    basis = to_backend(transport.reference_basis())
    gram = to_numpy(space.metric.inner_product(basis[:, None], basis[None], to_backend(points[0])))
    np.testing.assert_allclose(gram, np.eye(3), atol=1e-12)
