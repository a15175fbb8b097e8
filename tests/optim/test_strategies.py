"""What every strategy shares: gradient-evaluation counts, descent without noise, the
checks of the arguments and the data."""

import numpy as np
import pytest

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.optim import (
    FullBatch,
    InverseSqrtStep,
    MiniBatch,
    SquaredDistanceLoss,
    VarianceReduced,
    canonical_point,
    minimize,
)

from .data import MEAN_SPACES, N_SAMPLES, cloud, spd_cloud
from .spies import CountingLoss


@pytest.mark.parametrize(
    "strategy, n_iter, expected",
    [
        (FullBatch(1.0, 0), 7, 7 * N_SAMPLES),
        (MiniBatch(5, 1.0, 0), 7, 7 * 5),
        # restarts + 1 rounds of n_iter epochs, each n + 2 * inner_steps (Utpala et al. 2023,
        # Algorithm 11)
        (VarianceReduced(4, 1.0, 1.0, 0, 0), 3, 3 * (N_SAMPLES + 2 * 4)),
        (VarianceReduced(4, 1.0, 1.0, 0, 0, restarts=2), 3, 3 * 3 * (N_SAMPLES + 2 * 4)),
    ],
)
def test_gradient_evaluations_follow_the_schedule(strategy, n_iter, expected):
    space, data = spd_cloud()
    loss = CountingLoss(space)
    result = minimize(loss, data, strategy, n_iter, 0.1, random_state=0)
    assert result.n_gradient_evaluations == loss.n_gradients == expected
    assert result.n_steps == strategy.n_rounds * strategy.steps_per_round(n_iter)
    assert result.n_iter == n_iter and len(result.step_sizes) == result.n_steps


def loss_value(space, data, point):
    return float(to_numpy(SquaredDistanceLoss(space).values(point, data)).mean())


@pytest.mark.parametrize(
    "strategy, n_iter",
    [
        (MiniBatch(5, 10.0, 0), 150),
        (MiniBatch(5, 10.0, 0, sampling="poisson"), 150),
        (VarianceReduced(10, 10.0, 10.0, 0, 0), 8),
        (VarianceReduced(10, 10.0, 10.0, 0, 0, restarts=1, snapshot_noise="step"), 4),
    ],
)
def test_noiseless_stochastic_strategies_reduce_the_loss(strategy, n_iter):
    space, data = spd_cloud()
    optimum = minimize(SquaredDistanceLoss(space), data, FullBatch(10.0, 0), 60, 1.0).point
    start = canonical_point(space)
    result = minimize(SquaredDistanceLoss(space), data, strategy, n_iter, InverseSqrtStep(0.5),
                      random_state=2)
    best = loss_value(space, data, optimum)
    initial_gap = loss_value(space, data, start) - best
    assert loss_value(space, data, result.point) - best < 0.05 * initial_gap


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"n_iter": 0}, "n_iter"),
        ({"output": "median"}, "output"),
        ({"step_size": lambda t: 1.0 - t}, "step 1"),
        ({"sample_weight": [1.0, -1.0, 1.0]}, "index 1"),
        ({"sample_weight": [1.0, 1.0]}, r"shape \(3,\)"),
        ({"init_point": np.full((3, 3), 2.0)}, "init_point"),
        ({"strategy": MiniBatch(4, 1.0, 0.1)}, "batch_size"),
    ],
)
def test_bad_arguments_are_named(kwargs, message):
    space = MEAN_SPACES["spd"]()
    arguments = {
        "loss": SquaredDistanceLoss(space),
        "data": cloud(space, 3, 1.0, seed=0),
        "strategy": FullBatch(1.0, 0.1),
        "n_iter": 2,
        "step_size": 0.1,
    }
    arguments.update(kwargs)
    with pytest.raises(ValueError, match=message):
        minimize(**arguments)


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: FullBatch(0.0, 1.0), "clip_norm"),
        (lambda: FullBatch(1.0, -0.1), "noise_std"),
        (lambda: MiniBatch(2, 1.0, 0.1, sampling="shuffle"), "sampling"),
        (lambda: VarianceReduced(0, 1.0, 1.0, 0.1, 0.1), "inner_steps"),
        (lambda: VarianceReduced(2, 1.0, 1.0, 0.1, 0.1, restarts=-1), "restarts"),
        (lambda: VarianceReduced(2, 1.0, 1.0, 0.1, 0.1, snapshot_noise="x"), "snapshot_noise"),
    ],
)
def test_bad_strategy_arguments_are_named(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_data_off_the_space_is_rejected_with_its_index():
    space = MEAN_SPACES["spd"]()
    data = to_numpy(cloud(space, 4, 1.0, seed=1))
    data[2] = -data[2]
    with pytest.raises(ValueError, match=r"data holds 1 points not on SPDMatrices .*indices \[2\]"):
        minimize(SquaredDistanceLoss(space), to_backend(data), FullBatch(1.0, 0.1), 1, 0.1)
