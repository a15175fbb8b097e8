"""Stiefel manifold: the orthogonal completion of each frame (Householder vectors) is an
orthogonal matrix whose first columns are the frame, and the transport is an isometry of
geomstats' canonical metric."""

import numpy as np
from geomstats.geometry.stiefel import Stiefel

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.distributions.stiefel import OrthogonalCompletion, StiefelTransport
from tests.conftest import shifted


def _frames(n_frames, size, rank, seed):
    draws = np.random.default_rng(seed).standard_normal((n_frames, size, rank))
    return np.linalg.qr(draws)[0]


def test_the_completion_is_orthogonal_and_starts_with_the_frame():
    frames = _frames(3, 6, 2, shifted(0))
    completion = OrthogonalCompletion(frames)
    identity = np.broadcast_to(np.eye(6), (1, 3, 6, 6))
    maps = completion.apply(identity)[0]  # M_j = M_j @ I
    np.testing.assert_allclose(maps[:, :, :2], frames, atol=1e-12)
    np.testing.assert_allclose(np.einsum("kji,kjl->kil", maps, maps),
                               np.broadcast_to(np.eye(6), (3, 6, 6)), atol=1e-12)
    np.testing.assert_allclose(completion.apply_transpose(completion.apply(identity)),
                               identity, atol=1e-12)


def test_the_transport_preserves_canonical_inner_products():
    space = Stiefel(5, 2)
    transport = StiefelTransport(space, space.metric)
    frames = _frames(2, 5, 2, shifted(1))
    coefficients = np.random.default_rng(shifted(2)).standard_normal((3, 2, int(space.dim)))
    moved = transport.transport(frames, transport.from_coordinates(coefficients))
    for index, frame in enumerate(frames):
        vectors = to_backend(moved[:, index])
        gram = to_numpy(space.metric.inner_product(vectors[:, None], vectors[None],
                                                   to_backend(frame)))
        expected = coefficients[:, index] @ coefficients[:, index].T
        np.testing.assert_allclose(gram, expected, atol=1e-10)
