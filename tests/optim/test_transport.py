"""Vector transports: tangent at the end point; isometric ones keep inner products."""

import numpy as np
import pytest

from geomstats_dp._backend import to_numpy
from geomstats_dp.optim import resolve_transport
from geomstats_dp.optim.transport import (
    ParallelTransport,
    ProjectionTransport,
    ReferenceTransport,
)

from .data import cloud, random_tangent
from .spaces import SPACE_FACTORIES

PARALLEL = {"euclidean", "matrices", "sphere", "scaled_sphere", "hyperboloid", "grassmannian",
            "spd_affine", "spd_log_euclidean", "spd_euclidean"}


def gram_matrix(space, vectors, base_point):
    """Inner products <v_i, v_j> at base_point, shape [k, k]."""
    return np.array(
        [[float(space.metric.inner_product(a, b, base_point)) for b in vectors] for a in vectors]
    )


@pytest.mark.parametrize("name", sorted(SPACE_FACTORIES))
def test_transport_is_tangent_and_isometric_when_it_says_so(name):
    space = SPACE_FACTORIES[name]()
    transport = resolve_transport(space)
    if name in PARALLEL:
        assert isinstance(transport, ParallelTransport)
    else:
        assert isinstance(transport, (ReferenceTransport, ProjectionTransport))
    start, end = cloud(space, 2, radius=0.8, seed=70, offset=0.5)
    rng = np.random.default_rng(71)
    vectors = random_tangent(space, start, np.array([0.3, 1.7]), rng)
    moved = transport(vectors, start, end)
    assert bool(np.all(to_numpy(space.is_tangent(moved, end, atol=1e-8))))
    gram, moved_gram = gram_matrix(space, vectors, start), gram_matrix(space, moved, end)
    if transport.isometric:
        np.testing.assert_allclose(moved_gram, gram, rtol=1e-8, atol=1e-10)
    else:
        assert np.all(np.diag(moved_gram) > 0)


def _skew(matrix):
    return (matrix - np.swapaxes(matrix, -1, -2)) / 2


def _rotation(seed):
    """A random rotation of R^3 (numpy), from the QR of a Gaussian matrix."""
    q, r = np.linalg.qr(np.random.default_rng(seed).normal(size=(3, 3)))
    q = q * np.sign(np.diag(r))
    return q if np.linalg.det(q) > 0 else -q


def test_special_orthogonal_resolves_to_the_orthogonal_projection():
    """SO(3) has no registered transport: the projection onto T_y SO(3) = {y A, A skew}."""
    from geomstats.geometry.special_orthogonal import SpecialOrthogonal

    from geomstats_dp._backend import to_backend

    space = SpecialOrthogonal(3)
    transport = resolve_transport(space)
    assert isinstance(transport, ProjectionTransport) and not transport.isometric
    start, end = _rotation(0), _rotation(1)
    rng = np.random.default_rng(2)
    vectors = start @ _skew(rng.normal(size=(4, 3, 3)))  # tangent at start
    moved = to_numpy(transport(to_backend(vectors), to_backend(start), to_backend(end)))
    # independent formula of the Frobenius-orthogonal projection onto T_end
    expected = end @ _skew(end.T @ vectors)
    np.testing.assert_allclose(moved, expected, atol=1e-10)
    # a projection fixes the vectors already tangent at the end point, and is idempotent
    tangent_at_end = end @ _skew(rng.normal(size=(2, 3, 3)))
    fixed = to_numpy(transport(to_backend(tangent_at_end), to_backend(start), to_backend(end)))
    np.testing.assert_allclose(fixed, tangent_at_end, atol=1e-10)
    twice = to_numpy(transport(to_backend(moved), to_backend(end), to_backend(end)))
    np.testing.assert_allclose(twice, moved, atol=1e-10)
    assert np.all(np.linalg.norm(moved, axis=(1, 2)) <= np.linalg.norm(vectors, axis=(1, 2)))


def test_projection_transport_on_the_sphere_removes_the_normal_component():
    from geomstats.geometry.hypersphere import Hypersphere

    from geomstats_dp._backend import to_backend

    space = Hypersphere(2)
    start, end = np.array([0.0, 0.0, 1.0]), np.array([0.0, 0.6, 0.8])
    vectors = np.array([[1.0, 2.0, 0.0], [0.0, -0.5, 0.0]])  # tangent at start
    moved = to_numpy(ProjectionTransport(space)(to_backend(vectors), to_backend(start),
                                                to_backend(end)))
    np.testing.assert_allclose(moved, vectors - np.outer(vectors @ end, end), atol=1e-12)
