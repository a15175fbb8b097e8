"""The two-stage release's settled mean of its step points (``tangent.settled_mean``).

On R^d the Karcher mean is the weighted average and the distance the Euclidean norm, so
the expected result is computed here with numpy alone.
"""

import math

import numpy as np
from geomstats.geometry.euclidean import Euclidean

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.learning.mechanisms.tangent import settled_mean

DIM = 6
NOISE = np.array([0.08, 0.04, 0.02, 0.01])  # nu_k: shares of mu^2 growing fourfold


def steps(rng, target, bias=None):
    """x_0 far from the target, x_k = target + noise of norm about nu_k, an optional bias."""
    points = target + rng.normal(size=(len(NOISE), DIM)) * NOISE[:, None] / math.sqrt(DIM)
    points[0] += 1.0  # the coarse step from a far start
    if bias is not None:
        points[1] += bias
    return points


def release(points):
    space = Euclidean(DIM)
    return to_numpy(settled_mean(space, [to_backend(p) for p in points], list(NOISE)))


def test_settled_steps_are_averaged_with_inverse_variance_weights(seed_shift):
    rng = np.random.default_rng(seed_shift)
    points = steps(rng, np.zeros(DIM))
    moves = np.linalg.norm(np.diff(points, axis=0), axis=1)
    thresholds = np.hypot(NOISE[:-1], NOISE[1:])
    settled = np.flatnonzero(moves <= thresholds) + 1
    first = settled[0] if len(settled) else len(points) - 1
    weights = NOISE[first:] ** -2
    expected = weights @ points[first:] / weights.sum()
    np.testing.assert_allclose(release(points), expected, atol=1e-8)


def test_averaging_lowers_the_error_of_the_last_step(seed_shift):
    rng = np.random.default_rng(seed_shift)
    gains = []
    for _ in range(400):
        points = steps(rng, np.zeros(DIM))
        gains.append(np.sum(points[-1] ** 2) - np.sum(release(points) ** 2))
    gains = np.array(gains)  # squared errors, paired by draw
    assert gains.mean() > 4 * gains.std(ddof=1) / math.sqrt(len(gains))


def test_a_step_that_moved_more_than_the_noise_is_left_out(seed_shift):
    rng = np.random.default_rng(seed_shift)
    bias = np.zeros(DIM)
    bias[0] = 100 * NOISE[1]  # x_1 off the target: averaged in, it would move the result by 0.19
    for _ in range(20):
        points = steps(rng, np.zeros(DIM), bias)
        result = release(points)
        assert np.linalg.norm(result) < 4 * NOISE[2]  # no share of the bias
        assert not np.allclose(result, points[1])
