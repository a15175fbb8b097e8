"""Neighbouring datasets of the same size see the same schedule and the same random draws."""

import numpy as np
import pytest

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.optim import (
    FullBatch,
    InverseSqrtStep,
    MiniBatch,
    SquaredDistanceLoss,
    VarianceReduced,
    minimize,
)

from .data import MEAN_SPACES, cloud
from .spies import RecordingGenerator, RecordingNoise

STRATEGIES = {
    "rgd": (FullBatch(0.5, 0.1), 6),
    "rsgd": (MiniBatch(4, 0.5, 0.1), 12),
    # 24 steps: the replaced record misses every batch with probability (2/3)^24 < 1e-4
    "rsgd_poisson": (MiniBatch(4, 0.5, 0.1, sampling="poisson"), 24),
    "rsvrg_restarts": (VarianceReduced(3, 0.5, 0.5, 0.1, 0.1, restarts=2), 2),
    "rsvrg_step_noise": (VarianceReduced(3, 0.5, 0.5, 0.1, 0.1, snapshot_noise="step"), 2),
}


def run(space, data, strategy, n_iter, seed):
    rng, noise = RecordingGenerator(seed), RecordingNoise(space)
    result = minimize(
        SquaredDistanceLoss(space), data, strategy, n_iter, InverseSqrtStep(0.5),
        output="random", random_state=rng, noise_sampler=noise, keep_iterates=True,
    )
    return result, rng, noise


@pytest.mark.parametrize("name", sorted(STRATEGIES))
def test_neighbouring_datasets_draw_identically(name):
    space = MEAN_SPACES["sphere"]()
    strategy, n_iter = STRATEGIES[name]
    data = cloud(space, 12, radius=1.0, seed=20)
    neighbour = to_numpy(data)
    neighbour[5] = -neighbour[5]  # replace one sample by its antipode
    first, first_rng, first_noise = run(space, data, strategy, n_iter, seed=21)
    second, second_rng, second_noise = run(space, to_backend(neighbour), strategy, n_iter, 21)
    assert first_rng.calls == second_rng.calls and len(first_rng.calls) > 0
    assert first_noise.sigmas == second_noise.sigmas
    np.testing.assert_array_equal(first.step_sizes, second.step_sizes)
    for attribute in ("n_steps", "n_gradient_evaluations", "n_noise_draws"):
        assert getattr(first, attribute) == getattr(second, attribute)
    # the data did change the run
    assert not np.allclose(to_numpy(first.iterates), to_numpy(second.iterates))
