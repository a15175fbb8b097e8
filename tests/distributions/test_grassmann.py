"""Grassmannian as projectors: ``range_basis`` recovers an orthonormal basis of each
projector's range, and the transport is an isometry of geomstats' canonical metric."""

import numpy as np
from geomstats.geometry.grassmannian import Grassmannian

from geomstats_dp.distributions.grassmann import GrassmannTransport, range_basis
from tests.conftest import shifted

from ._statistics import assert_transport_is_isometric


def _projectors(n_points, size, rank, seed):
    bases = np.linalg.qr(np.random.default_rng(seed).standard_normal((n_points, size, rank)))[0]
    return np.einsum("kir,kjr->kij", bases, bases)


def test_range_basis_is_orthonormal_and_spans_the_range():
    projectors = _projectors(4, 6, 3, shifted(0))
    factors = range_basis(projectors, 3)
    np.testing.assert_allclose(np.einsum("kir,kjr->kij", factors, factors), projectors,
                               atol=1e-12)
    np.testing.assert_allclose(np.einsum("kir,kis->krs", factors, factors),
                               np.broadcast_to(np.eye(3), (4, 3, 3)), atol=1e-12)


def test_the_transport_preserves_canonical_inner_products():
    space = Grassmannian(5, 2)
    transport = GrassmannTransport(space, space.metric)
    points = _projectors(2, 5, 2, shifted(1))
    assert_transport_is_isometric(space, transport, points, shifted(2))
