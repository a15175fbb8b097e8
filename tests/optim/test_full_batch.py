"""FullBatch (DP-RGD): the replace-one sensitivity its query states is attained."""

import numpy as np
import pytest
from geomstats.geometry.euclidean import Euclidean

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.optim import FullBatch, MiniBatch, SquaredDistanceLoss, minimize


def first_step_gradient(strategy, data, weights=None):
    """The noiseless query of one step from 0 on R^2: w_1 = -eta g."""
    space = Euclidean(2)
    result = minimize(SquaredDistanceLoss(space), to_backend(data), strategy, 1, 1.0,
                      sample_weight=weights, random_state=0)
    return -to_numpy(result.point)


@pytest.mark.parametrize("weights", [None, np.arange(1.0, 7.0)])
@pytest.mark.parametrize("strategy", [FullBatch(0.5, 0), MiniBatch(6, 0.5, 0)])
def test_replace_one_sensitivity_is_attained(strategy, weights):
    """Replacing the heaviest sample by its mirror image moves the query by exactly the
    sensitivity that ``queries`` states (the batch of size n holds every sample)."""
    rng = np.random.default_rng(40)
    data = rng.uniform(-1, 1, (6, 2))
    heaviest = 5 if weights is not None else 0
    data[heaviest] = [3.0, 0.0]  # gradient x - z has norm 3 > C at x = 0: clipped
    neighbour = data.copy()
    neighbour[heaviest] = [-3.0, 0.0]
    change = first_step_gradient(strategy, data, weights) - first_step_gradient(
        strategy, neighbour, weights
    )
    (query,) = strategy.queries(6, 1, weights)
    np.testing.assert_allclose(np.linalg.norm(change), query.sensitivity, rtol=1e-12)


@pytest.mark.parametrize("weights", [None, np.arange(1.0, 7.0)])
def test_a_noiseless_step_is_the_weighted_mean_of_the_clipped_gradients(weights):
    """From 0 on R^2 the gradient of |x - z_i|^2 / 2 is -z_i: the query is
    -sum_i w_i z_i min(1, C / |z_i|), w_i the normalised weights (1/n by default)."""
    data = np.random.default_rng(41).uniform(-2, 2, (6, 2))
    norms = np.linalg.norm(data, axis=1)
    assert (norms > 0.5).any() and (norms < 0.5).any()  # some clipped, some not
    w = np.full(6, 1 / 6) if weights is None else weights / weights.sum()
    expected = -(w * np.minimum(1.0, 0.5 / norms)) @ data
    np.testing.assert_allclose(first_step_gradient(FullBatch(0.5, 0), data, weights),
                               expected, rtol=1e-12)
