"""Stiefel manifold: the orthogonal completion of each frame (Householder vectors) is an
orthogonal matrix whose first columns are the frame, and the transport is an isometry of
geomstats' canonical metric."""

import numpy as np
from geomstats.geometry.stiefel import Stiefel

from geomstats_dp.distributions.stiefel import OrthogonalCompletion, StiefelTransport
from tests.conftest import shifted

from ._statistics import assert_transport_is_isometric


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
    assert_transport_is_isometric(space, transport, frames, shifted(2))
