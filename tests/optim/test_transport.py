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
