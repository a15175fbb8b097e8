"""The gradient oracle's chunked sums equal the one-call sum (chunks bound the memory)."""

import geomstats.backend as gs
import numpy as np
from geomstats.geometry.spd_matrices import SPDMatrices

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.optim import SquaredDistanceLoss, oracle


def _oracle(points, weights):
    loss = SquaredDistanceLoss(SPDMatrices(3))
    data = loss.check_data(to_backend(points))
    return oracle.GradientOracle(loss, data, to_backend(weights), None, np.random.default_rng(0))


def test_chunked_sum_equals_one_call(monkeypatch):
    space = SPDMatrices(3)
    gs.random.seed(0)
    points = to_numpy(space.random_point(23))
    weights = np.full(23, 1 / 23)
    point = to_backend(np.eye(3) * 1.5)
    whole = _oracle(points, weights)
    expected = to_numpy(whole.clipped_sum(point, clip_norm=0.8, scale=2.0))
    monkeypatch.setattr(oracle, "CHUNK_BYTES", 5 * 8 * 9)  # five rows per chunk
    monkeypatch.setattr(oracle, "MIN_CHUNK_ROWS", 1)
    chunked = _oracle(points, weights)
    found = to_numpy(chunked.clipped_sum(point, clip_norm=0.8, scale=2.0))
    np.testing.assert_allclose(found, expected, rtol=1e-12, atol=1e-14)
    assert chunked.n_gradient_evaluations == whole.n_gradient_evaluations == 23
    subset = np.array([1, 4, 9, 16, 22, 3, 7])
    np.testing.assert_allclose(
        to_numpy(chunked.clipped_sum(point, 0.8, subset)),
        to_numpy(whole.clipped_sum(point, 0.8, subset)),
        rtol=1e-12, atol=1e-14,
    )
