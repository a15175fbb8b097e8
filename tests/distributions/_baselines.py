"""What the tests of the baseline samplers share: the Cholesky metric without a registered
transport, tangency and orthonormality checks, batched draws, one BLAS thread."""

import numpy as np
import pytest
from geomstats.geometry.positive_lower_triangular_matrices import (
    PositiveLowerTriangularMatrices,
)
from threadpoolctl import threadpool_limits

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.distributions import TangentGaussian
from tests.conftest import shifted

from ._statistics import inner_products

SIGMA = 0.7
N_DRAWS = 10_000
ROUNDING = 1e-10


@pytest.fixture(autouse=True)
def single_threaded():
    """Run on one BLAS / OpenMP thread (torch's kernels included).

    These tests make many tiny calls, which extra threads only slow down: up to 20x on a
    loaded 2-core machine.
    """
    with threadpool_limits(limits=1):
        yield


def cholesky_case():
    """A metric with no registered transport: Cholesky metric on lower-triangular matrices."""
    lower = np.tril(np.random.default_rng(shifted(8)).normal(size=(2, 3, 3)), -1)
    diagonals = np.stack([np.diag([1.0, 2.0, 0.5]), np.diag([0.2, 1.0, 3.0])])
    return PositiveLowerTriangularMatrices(3), lower + diagonals


def gram(space, vecs, base_point):
    return np.stack([inner_products(space.metric, vecs, vec, base_point) for vec in vecs])


def assert_tangent(space, vecs, base_point):
    """Every vector [n, *shape] is tangent at base_point (atol scaled by their sizes)."""
    scale = max(1.0, np.abs(base_point).max()) * max(1.0, np.abs(vecs).max())
    points = np.array(np.broadcast_to(base_point, vecs.shape))
    atol = ROUNDING * scale
    tangent = to_numpy(space.is_tangent(to_backend(vecs), to_backend(points), atol=atol))
    assert np.all(tangent.astype(bool)), f"{np.sum(~tangent.astype(bool))} vectors not tangent"


def assert_orthonormal_tangent_basis(space, basis, point):
    assert basis.shape == (int(space.dim),) + tuple(space.shape)
    assert_tangent(space, basis, point)
    np.testing.assert_allclose(gram(space, basis, point), np.eye(basis.shape[0]), atol=1e-10)


def batched_draws(space, points, method, n_samples, **kwargs):
    """Draws at every point in one call, numpy [n_samples, k, *shape]."""
    sampler = TangentGaussian(space, method=method, **kwargs)
    draws = sampler.sample(
        to_backend(points), n_samples=n_samples, sigma=SIGMA, random_state=shifted(11)
    )
    return to_numpy(draws)
