"""The noise added at each step is N_x(0, sigma^2): recovered from the iterates."""

import numpy as np
import pytest

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.optim import FullBatch, MiniBatch, VarianceReduced, minimize
from tests.conftest import BACKEND, shifted

from .data import MEAN_SPACES
from .spies import RecordingNoise, ZeroLoss

Z_SCORE = 5.0
STEP = 0.05


def recovered_noise(space, result):
    """xi_t = -Log_{w_t}(w_(t+1)) / eta_t: what each step added (the loss is zero)."""
    starts, ends = result.iterates[:-1], result.iterates[1:]
    etas = to_backend(result.step_sizes.reshape((-1,) + (1,) * len(space.shape)))
    noise = -space.metric.log(ends, starts) / etas
    return noise, starts


def check_mean_squared_norm(space, noise, base_points, variance):
    """mean ||xi_t||^2 / variance ~ d, with std sqrt(2d / T) for independent draws."""
    ratios = to_numpy(space.metric.squared_norm(noise, base_points)) / variance
    d, count = space.dim, ratios.size
    assert abs(ratios.mean() - d) < Z_SCORE * np.sqrt(2 * d / count)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(MEAN_SPACES))
def test_full_batch_noise_has_configured_sigma(name):
    space = MEAN_SPACES[name]()
    sigma = 0.4
    spy = RecordingNoise(space)
    data = np.zeros((5, 1))
    result = minimize(
        ZeroLoss(space), data, FullBatch(1.0, sigma), 400, STEP,
        noise_sampler=spy, random_state=shifted(0), keep_iterates=True,
    )
    noise, starts = recovered_noise(space, result)
    assert spy.sigmas == [sigma] * result.n_steps
    # what moved the point is exactly what the sampler drew
    np.testing.assert_allclose(to_numpy(noise), np.stack(spy.draws), atol=1e-8)
    check_mean_squared_norm(space, noise, starts, sigma**2)


@pytest.mark.slow
def test_minibatch_noise_has_configured_sigma():
    space = MEAN_SPACES["hyperboloid"]()
    sigma = 0.3
    result = minimize(
        ZeroLoss(space), np.zeros((20, 1)), MiniBatch(4, 1.0, sigma, sampling="poisson"),
        600, STEP, random_state=shifted(1), keep_iterates=True,
    )
    check_mean_squared_norm(space, *recovered_noise(space, result), sigma**2)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["sphere", "hyperboloid"])
def test_variance_reduced_noise_adds_both_variances(name):
    """snapshot_noise="step": each step adds T(xi_1) + xi_2, variance sigma_1^2 + sigma_2^2."""
    space = MEAN_SPACES[name]()
    sigma_full, sigma_single = 0.3, 0.2
    strategy = VarianceReduced(
        inner_steps=5, clip_norm_full=1.0, clip_norm_single=1.0,
        noise_std_full=sigma_full, noise_std_single=sigma_single, snapshot_noise="step",
    )
    result = minimize(
        ZeroLoss(space), np.zeros((10, 1)), strategy, 120, STEP,
        random_state=shifted(2), keep_iterates=True,
    )
    check_mean_squared_norm(
        space, *recovered_noise(space, result), sigma_full**2 + sigma_single**2
    )


def test_epoch_snapshot_noise_is_drawn_once_per_epoch():
    space = MEAN_SPACES["sphere"]()
    spy = RecordingNoise(space)
    strategy = VarianceReduced(4, 1.0, 1.0, 0.3, 0.2, snapshot_noise="epoch")
    result = minimize(
        ZeroLoss(space), np.zeros((10, 1)), strategy, 3, STEP, noise_sampler=spy,
        random_state=shifted(3), keep_iterates=True,
    )
    # per epoch: one xi_1 at the snapshot, then one xi_2 per inner step
    assert spy.sigmas == ([0.3] + [0.2] * 4) * 3
    snapshots = to_numpy(result.iterates[::4][:3])
    np.testing.assert_allclose(np.stack(spy.base_points[::5]), snapshots)
    assert result.n_noise_draws == len(spy.sigmas)


@pytest.mark.parametrize("name", sorted(MEAN_SPACES))
@pytest.mark.parametrize("strategy", [
    MiniBatch(2, 1.0, 0.3),
    VarianceReduced(3, 1.0, 1.0, 0.3, 0.2, snapshot_noise="step"),
], ids=["minibatch", "two_noise_levels"])
def test_prepared_noise_moves_the_iterates_as_per_step_sampling_does(name, strategy):
    """The default sampler is prepared once per noise level (``TangentGaussian.prepare``);
    a sampler with only ``sample`` is called at every step. Same seed: the same iterates,
    bit for bit, and the same number of draws (on pytorch the prepared draw is formed in
    torch: the same iterates to rounding)."""
    space = MEAN_SPACES[name]()
    data = np.zeros((6, 1))
    runs = [
        minimize(ZeroLoss(space), data, strategy, 8, STEP, noise_sampler=sampler,
                 random_state=4, keep_iterates=True)
        for sampler in (None, RecordingNoise(space))
    ]
    if BACKEND == "pytorch":
        np.testing.assert_allclose(*(to_numpy(run.iterates) for run in runs), rtol=1e-12,
                                   atol=1e-14)
    else:
        np.testing.assert_array_equal(*(to_numpy(run.iterates) for run in runs))
    assert runs[0].n_noise_draws == runs[1].n_noise_draws > 0
