"""The server's aggregations of PriRFed (tangent mean, weighted Karcher mean) and the
positive-part shrinkage of a noisy step, on SPD(2) with the affine-invariant metric.

At the identity the metric is the Frobenius inner product and Log_I = logm, Exp_I = expm:
the references are computed here with numpy's eigh. The weighted Karcher mean is checked by
its first-order condition.
"""

import math

import numpy as np
import pytest
from geomstats.geometry.spd_matrices import SPDAffineMetric, SPDMatrices

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.federated.aggregation import aggregate, aggregate_steps, shrink_step


def spd2():
    space = SPDMatrices(2, equip=False)
    space.equip_with_metric(SPDAffineMetric)
    return space


def symmetric_function(matrices, function):
    values, vectors = np.linalg.eigh(matrices)
    return np.einsum("...ij,...j,...kj->...ik", vectors, function(values), vectors)


def logm(matrices):
    return symmetric_function(matrices, np.log)


def expm(matrices):
    return symmetric_function(matrices, np.exp)


def symmetric(rng, count, scale):
    a = rng.normal(scale=scale, size=(count, 2, 2))
    return (a + np.transpose(a, (0, 2, 1))) / 2


def test_tangent_mean_at_the_identity_is_expm_of_the_weighted_mean_log():
    rng = np.random.default_rng(1)
    points, weights = expm(symmetric(rng, 4, 0.5)), np.array([0.1, 0.2, 0.3, 0.4])
    mean = aggregate(spd2(), to_backend(points), to_backend(weights), to_backend(np.eye(2)))
    expected = expm(np.einsum("k,kij->ij", weights, logm(points)))
    np.testing.assert_allclose(to_numpy(mean), expected, rtol=1e-9, atol=1e-12)


def test_tangent_replies_at_the_identity_average_to_expm_of_their_weighted_mean():
    """Replies given as tangent vectors at I: "tangent_mean" is expm of their weighted
    mean; "karcher_mean" equals the Karcher mean of the points expm(v_i)."""
    rng = np.random.default_rng(3)
    steps, weights = symmetric(rng, 4, 0.5), np.array([0.1, 0.2, 0.3, 0.4])
    mean = aggregate_steps(spd2(), to_backend(steps), to_backend(weights),
                           to_backend(np.eye(2)))
    expected = expm(np.einsum("k,kij->ij", weights, steps))
    np.testing.assert_allclose(to_numpy(mean), expected, rtol=1e-9, atol=1e-12)
    karcher = aggregate_steps(spd2(), to_backend(steps), to_backend(weights),
                              to_backend(np.eye(2)), method="karcher_mean")
    points = aggregate(spd2(), to_backend(expm(steps)), to_backend(weights),
                       to_backend(np.eye(2)), method="karcher_mean")
    np.testing.assert_allclose(to_numpy(karcher), to_numpy(points), rtol=1e-9, atol=1e-12)
    with pytest.raises(ValueError, match="aggregation must be one of"):
        aggregate_steps(spd2(), to_backend(steps), to_backend(weights),
                        to_backend(np.eye(2)), method="median")


def test_karcher_mean_zeroes_the_weighted_sum_of_logs():
    """The weighted Karcher mean M solves sum_i w_i Log_M(x_i) = 0, with Log_M(X) =
    M^(1/2) logm(M^(-1/2) X M^(-1/2)) M^(1/2) computed here; non-commuting points, so a
    single tangent-mean step from the identity does not reach it."""
    rng = np.random.default_rng(2)
    points, weights = expm(symmetric(rng, 3, 0.7)), np.array([0.5, 0.3, 0.2])
    mean = to_numpy(aggregate(spd2(), to_backend(points), to_backend(weights),
                              to_backend(np.eye(2)), method="karcher_mean"))
    root = symmetric_function(mean, np.sqrt)
    inverse_root = np.linalg.inv(root)
    logs = root @ logm(inverse_root @ points @ inverse_root) @ root
    np.testing.assert_allclose(np.einsum("k,kij->ij", weights, logs), 0.0, atol=1e-9)
    one_step = expm(np.einsum("k,kij->ij", weights, logm(points)))
    assert np.abs(one_step - mean).max() > 1e-4


def test_unknown_aggregation_raises_naming_the_choices():
    with pytest.raises(ValueError, match="aggregation must be one of.*'median'"):
        aggregate(spd2(), None, None, None, method="median")


def test_shrink_step_is_the_positive_part_factor_on_the_noisy_step(seed_shift):
    space, rng = spd2(), np.random.default_rng(seed_shift)
    for noise_norm in (0.3, 1.0, 5.0):
        step = symmetric(rng, 1, 0.8)[0]
        shrunk = to_numpy(shrink_step(space, to_backend(expm(step)), to_backend(np.eye(2)),
                                      noise_norm))
        factor = max(0.0, 1.0 - noise_norm**2 / np.sum(step**2))
        np.testing.assert_allclose(logm(shrunk), factor * step, atol=1e-8)


def test_shrinking_lowers_the_error_of_a_noise_dominated_step(seed_shift):
    """Noise of norm nu = 1 on a step m of norm 0.3: E|v - m|^2 = 1, and the shrunk step's
    error is much smaller; the paired difference is tested against its standard error."""
    space, rng = spd2(), np.random.default_rng(seed_shift)
    signal = np.array([[0.2, 0.1], [0.1, -0.15]])
    noise_norm = 1.0
    gains = []
    for _ in range(300):
        step = signal + symmetric(rng, 1, 1.0)[0] * noise_norm / math.sqrt(3)  # E|e|^2 = 1
        shrunk = logm(to_numpy(shrink_step(space, to_backend(expm(step)),
                                           to_backend(np.eye(2)), noise_norm)))
        gains.append(np.sum((step - signal) ** 2) - np.sum((shrunk - signal) ** 2))
    gains = np.array(gains)
    assert gains.mean() > 4 * gains.std(ddof=1) / math.sqrt(len(gains))
