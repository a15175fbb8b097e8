"""MiniBatch (DP-RSGD): Poisson batches counted as drawn."""

import numpy as np

from geomstats_dp.optim import MiniBatch, minimize

from .data import N_SAMPLES, spd_cloud
from .spies import CountingLoss


def test_poisson_batches_are_counted_as_drawn():
    space, data = spd_cloud()
    loss = CountingLoss(space)
    result = minimize(loss, data, MiniBatch(5, 1.0, 0, sampling="poisson"), 200, 0.1,
                      random_state=1)
    assert result.n_gradient_evaluations == loss.n_gradients
    # batch sizes are Binomial(n, b/n): mean b, variance b (1 - b/n) per step
    mean, std = 200 * 5, np.sqrt(200 * 5 * (1 - 5 / N_SAMPLES))
    assert abs(loss.n_gradients - mean) < 5 * std
