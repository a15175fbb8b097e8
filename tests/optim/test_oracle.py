"""The gradient oracle: chunked sums equal the one-call sum (chunks bound the memory), and
``GradientOracle.norms_then_clipped_sum`` gives every record's gradient norm, then the
clipped sum at a radius chosen from them, in one gradient pass.

The norms are checked against geomstats' distances and the sum against the clipped sum
of geomstats' logarithms computed here, on SPD(3) and SPD(2) (the affine-invariant
closed forms), the sphere (the generic route) and for the Huber loss; with the gradients
held and with the two-pass route of data beyond ``HELD_BYTES``.
"""

import geomstats.backend as gs
import numpy as np
import pytest
from geomstats.geometry.hypersphere import Hypersphere
from geomstats.geometry.spd_matrices import SPDMatrices

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.optim import HuberDistanceLoss, SquaredDistanceLoss, oracle

N_SAMPLES = 29
HUBER_RADIUS = 0.9

CASES = {
    "spd3": (lambda: SPDMatrices(3), None),
    "spd2": (lambda: SPDMatrices(2), None),
    "sphere": (lambda: Hypersphere(3), None),
    "spd3_huber": (lambda: SPDMatrices(3), HUBER_RADIUS),
    "sphere_huber": (lambda: Hypersphere(3), HUBER_RADIUS),
}


def _case(name, seed):
    make_space, radius = CASES[name]
    space = make_space()
    loss = SquaredDistanceLoss(space) if radius is None else HuberDistanceLoss(space, radius)
    gs.random.seed(seed)
    points = to_numpy(space.random_point(N_SAMPLES + 1))
    weights = np.random.default_rng(seed).uniform(0.5, 1.5, N_SAMPLES)
    return space, loss, points[:-1], weights / weights.sum(), to_backend(points[-1]), radius


def _oracle(loss, data, weights):
    return oracle.GradientOracle(loss, loss.check_data(to_backend(data)), to_backend(weights),
                                 None, np.random.default_rng(0))


def _expected(space, data, weights, point, radius, clip_norm):
    """(norms, sum_i w_i clip_C(grad)) from geomstats' log and dist, in numpy."""
    logs = to_numpy(space.metric.log(to_backend(data), point))
    dists = to_numpy(space.metric.dist(to_backend(data), point))
    norms = dists if radius is None else np.minimum(dists, radius)
    factors = np.minimum(1.0, clip_norm / norms) * norms / dists  # clip_C o clip_D
    return norms, -np.einsum("k,k...->...", weights * factors, logs)


@pytest.mark.parametrize("held", [True, False])
@pytest.mark.parametrize("name", sorted(CASES))
def test_norms_and_sum_are_geomstats_clipped_logs(monkeypatch, seed_shift, name, held):
    space, loss, data, weights, point, radius = _case(name, seed_shift)
    if not held:
        monkeypatch.setattr(oracle, "HELD_BYTES", 0)
    monkeypatch.setattr(oracle, "CHUNK_BYTES", 8 * 8 * 9)  # several chunks
    monkeypatch.setattr(oracle, "MIN_CHUNK_ROWS", 1)
    seen = []

    def choose_clip(norms):
        seen.append(norms)
        return float(np.median(norms))  # half the records clipped

    found = _oracle(loss, data, weights)
    clip_norm, total = found.norms_then_clipped_sum(point, choose_clip)
    norms, expected = _expected(space, data, weights, point, radius, clip_norm)
    assert len(seen) == 1 and isinstance(seen[0], np.ndarray)
    np.testing.assert_allclose(seen[0], norms, rtol=1e-9, atol=1e-12)
    assert clip_norm == float(np.median(seen[0]))
    np.testing.assert_allclose(to_numpy(total), expected, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(
        to_numpy(total), to_numpy(_oracle(loss, data, weights).clipped_sum(point, clip_norm)),
        rtol=1e-12, atol=1e-14)
    assert found.n_gradient_evaluations == N_SAMPLES


@pytest.mark.filterwarnings("ignore:invalid value encountered in log:RuntimeWarning")
def test_a_record_with_a_non_finite_norm_adds_nothing(seed_shift):
    space, loss, data, weights, point, _ = _case("spd3", seed_shift)
    broken = data.copy()
    broken[3] = -np.eye(3)  # not positive definite: no logarithm
    found = _oracle(loss, data, weights)
    found.data = to_backend(broken)  # past check_data, as a record that breaks mid-run
    seen = []
    clip_norm, total = found.norms_then_clipped_sum(
        point, lambda norms: seen.append(norms) or 1.0)
    assert not np.isfinite(seen[0][3]) and np.all(np.isfinite(np.delete(seen[0], 3)))
    kept = np.delete(np.arange(N_SAMPLES), 3)
    _, expected = _expected(space, data[kept], weights[kept], point, None, clip_norm)
    np.testing.assert_allclose(to_numpy(total), expected, rtol=1e-9, atol=1e-12)


def test_chunked_sum_equals_one_call(monkeypatch):
    space = SPDMatrices(3)
    gs.random.seed(0)
    points = to_numpy(space.random_point(23))
    weights = np.full(23, 1 / 23)
    point = to_backend(np.eye(3) * 1.5)
    loss = SquaredDistanceLoss(space)
    whole = _oracle(loss, points, weights)
    expected = to_numpy(whole.clipped_sum(point, clip_norm=0.8, scale=2.0))
    monkeypatch.setattr(oracle, "CHUNK_BYTES", 5 * 8 * 9)  # five rows per chunk
    monkeypatch.setattr(oracle, "MIN_CHUNK_ROWS", 1)
    chunked = _oracle(loss, points, weights)
    found = to_numpy(chunked.clipped_sum(point, clip_norm=0.8, scale=2.0))
    np.testing.assert_allclose(found, expected, rtol=1e-12, atol=1e-14)
    assert chunked.n_gradient_evaluations == whole.n_gradient_evaluations == 23
    subset = np.array([1, 4, 9, 16, 22, 3, 7])
    np.testing.assert_allclose(
        to_numpy(chunked.clipped_sum(point, 0.8, subset)),
        to_numpy(whole.clipped_sum(point, 0.8, subset)),
        rtol=1e-12, atol=1e-14,
    )
