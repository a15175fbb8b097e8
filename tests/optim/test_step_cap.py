"""The noisy gradient projected onto the ball of the strategy's signal bound."""

import numpy as np
import pytest
from geomstats.geometry.euclidean import Euclidean

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.optim import (
    FullBatch,
    MiniBatch,
    SquaredDistanceLoss,
    VarianceReduced,
    minimize,
)

SPACE = Euclidean(2)
N_SAMPLES = 30


def data(seed=0):
    """Records 5 to 50 away from the start: every per-sample gradient is clipped."""
    rng = np.random.default_rng(seed)
    directions = rng.standard_normal((N_SAMPLES, 2))
    radii = rng.uniform(5.0, 50.0, size=(N_SAMPLES, 1))
    return to_backend(directions / np.linalg.norm(directions, axis=1, keepdims=True) * radii)


def step_norms(strategy, n_iter, seed, **kwargs):
    """|x_(t+1) - x_t| of every step (unit step size; Euclidean, so the gradient's norm)."""
    result = minimize(SquaredDistanceLoss(SPACE), data(seed), strategy, n_iter, 1.0,
                      to_backend(np.zeros(2)), random_state=seed, keep_iterates=True,
                      **kwargs)
    return np.linalg.norm(np.diff(to_numpy(result.iterates), axis=0), axis=1)


@pytest.mark.parametrize("strategy", [
    FullBatch(1.0, 0),
    MiniBatch(5, 1.0, 0),
    VarianceReduced(4, 1.0, 0.5, 0, 0),
])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_signal_bound_bounds_the_noiseless_gradient(strategy, seed):
    norms = step_norms(strategy, 6, seed)
    assert norms.max() <= strategy.signal_bound(N_SAMPLES) * (1 + 1e-9)


def test_full_batch_bound_is_reached_by_aligned_gradients():
    aligned = to_backend(np.tile([10.0, 0.0], (N_SAMPLES, 1)))
    result = minimize(SquaredDistanceLoss(SPACE), aligned, FullBatch(1.0, 0), 1, 1.0,
                      to_backend(np.zeros(2)))
    np.testing.assert_allclose(to_numpy(result.point), [1.0, 0.0], atol=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_capped_noisy_steps_are_projected_onto_the_ball(seed):
    strategy = FullBatch(1.0, 50.0)  # noise of norm about 70, far beyond C
    bound = strategy.signal_bound(N_SAMPLES)
    capped = step_norms(strategy, 8, seed, direction_bound=bound)
    free = step_norms(strategy, 8, seed)
    # a noisy gradient longer than C (nearly all: P(|noise| < 1) < 1e-3) is cut to C
    assert capped.max() <= bound * (1 + 1e-9)
    assert np.median(capped) == pytest.approx(bound, rel=1e-9)
    assert np.median(free) > 5 * bound
