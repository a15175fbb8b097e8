"""VarianceReduced (DP-RSVRG): convergence at a constant step, the re-clipped anchor of a
non-isometric transport, the queries of Utpala et al. (2023)."""

import numpy as np
from geomstats.geometry.euclidean import Euclidean

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.optim import (
    FullBatch,
    MiniBatch,
    SquaredDistanceLoss,
    VarianceReduced,
    minimize,
)
from geomstats_dp.optim.transport import VectorTransport

from .data import spd_cloud


def test_variance_reduction_converges_where_sgd_stalls():
    """With a constant step, SVRG's gradient noise vanishes at the optimum; SGD's does not."""
    space, data = spd_cloud()
    loss = SquaredDistanceLoss(space)
    optimum = minimize(loss, data, FullBatch(10.0, 0), 60, 1.0).point
    svrg = minimize(loss, data, VarianceReduced(20, 10.0, 10.0, 0, 0), 10, 0.3, random_state=3)
    sgd = minimize(loss, data, MiniBatch(1, 10.0, 0), 200, 0.3, random_state=3)
    assert float(space.metric.dist(svrg.point, optimum)) < 1e-4
    assert float(space.metric.dist(sgd.point, optimum)) > 1e-3


class DoublingTransport(VectorTransport):
    """A transport that is not an isometry: it doubles every vector."""

    isometric = False

    def __call__(self, tangent_vecs, base_point, end_point):
        return 2 * tangent_vecs


def test_non_isometric_transport_is_reclipped_to_the_anchor_norm():
    """One sample z = 5 on R, w_0 = 0, eta = 0.1, no clipping or noise. Step 0: v = w_0 - z,
    w_1 = 0.5. Step 1: v = (w_1 - z) - rescaled(2 (w_0 - z)) + 2 (w_0 - z) with the anchor
    brought back to its own norm 5: v = -4.5 + 5 - 10 = -9.5, w_2 = 1.45."""
    strategy = VarianceReduced(2, 100.0, 100.0, 0, 0)
    result = minimize(SquaredDistanceLoss(Euclidean(1)), to_backend(np.array([[5.0]])),
                      strategy, 1, 0.1, transport=DoublingTransport(Euclidean(1)))
    np.testing.assert_allclose(to_numpy(result.point), [1.45], rtol=1e-12)


def test_variance_reduced_queries_follow_000_claim_3():
    n, n_iter = 50, 4
    strategy = VarianceReduced(10, 0.5, 0.2, 1.5, 2.5, restarts=1)
    full, single = strategy.queries(n, n_iter)
    assert np.isclose(full.sensitivity, 2 * 0.5 / n) and full.n_releases == 2 * n_iter
    assert np.isclose(single.sensitivity, 4 * 0.2) and single.sampling_rate == 1 / n
    assert single.n_releases == 2 * n_iter * 10
    assert np.isclose(single.noise_multiplier, 2.5 / (4 * 0.2))
    step_full, _ = VarianceReduced(10, 0.5, 0.2, 1.5, 2.5, snapshot_noise="step").queries(
        n, n_iter
    )
    assert step_full.n_releases == n_iter * 10
