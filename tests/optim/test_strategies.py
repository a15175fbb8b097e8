"""Strategies: gradient-evaluation counts, query sensitivities, descent without noise."""

import numpy as np
import pytest
from geomstats.geometry.euclidean import Euclidean

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
from geomstats_dp.optim.transport import VectorTransport

from .data import MEAN_SPACES, cloud
from .spies import CountingLoss

N_SAMPLES = 20


@pytest.fixture
def spd_data():
    space = MEAN_SPACES["spd"]()
    return space, cloud(space, N_SAMPLES, radius=1.0, seed=30, offset=1.5)


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
def test_gradient_evaluations_follow_the_schedule(spd_data, strategy, n_iter, expected):
    space, data = spd_data
    loss = CountingLoss(space)
    result = minimize(loss, data, strategy, n_iter, 0.1, random_state=0)
    assert result.n_gradient_evaluations == loss.n_gradients == expected
    assert result.n_steps == strategy.n_rounds * strategy.steps_per_round(n_iter)
    assert result.n_iter == n_iter and len(result.step_sizes) == result.n_steps


def test_poisson_batches_are_counted_as_drawn(spd_data):
    space, data = spd_data
    loss = CountingLoss(space)
    result = minimize(loss, data, MiniBatch(5, 1.0, 0, sampling="poisson"), 200, 0.1,
                      random_state=1)
    assert result.n_gradient_evaluations == loss.n_gradients
    # batch sizes are Binomial(n, b/n): mean b, variance b (1 - b/n) per step
    mean, std = 200 * 5, np.sqrt(200 * 5 * (1 - 5 / N_SAMPLES))
    assert abs(loss.n_gradients - mean) < 5 * std


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
def test_noiseless_stochastic_strategies_reduce_the_loss(spd_data, strategy, n_iter):
    space, data = spd_data
    optimum = minimize(SquaredDistanceLoss(space), data, FullBatch(10.0, 0), 60, 1.0).point
    start = canonical_point(space)
    result = minimize(SquaredDistanceLoss(space), data, strategy, n_iter, InverseSqrtStep(0.5),
                      random_state=2)
    best = loss_value(space, data, optimum)
    initial_gap = loss_value(space, data, start) - best
    assert loss_value(space, data, result.point) - best < 0.05 * initial_gap


def test_variance_reduction_converges_where_sgd_stalls(spd_data):
    """With a constant step, SVRG's gradient noise vanishes at the optimum; SGD's does not."""
    space, data = spd_data
    loss = SquaredDistanceLoss(space)
    optimum = minimize(loss, data, FullBatch(10.0, 0), 60, 1.0).point
    svrg = minimize(loss, data, VarianceReduced(20, 10.0, 10.0, 0, 0), 10, 0.3, random_state=3)
    sgd = minimize(loss, data, MiniBatch(1, 10.0, 0), 200, 0.3, random_state=3)
    assert float(space.metric.dist(svrg.point, optimum)) < 1e-4
    assert float(space.metric.dist(sgd.point, optimum)) > 1e-3


class DoublingTransport(VectorTransport):
    """A transport that is not an isometry: it doubles every vector."""

    isometric = False

    def __call__(self, tangent_vecs, base_point, end_point):
        return 2 * tangent_vecs


def test_non_isometric_transport_is_reclipped_to_the_anchor_norm():
    """One sample z = 5 on R, w_0 = 0, eta = 0.1, no clipping or noise. Step 0: v = w_0 - z,
    w_1 = 0.5. Step 1: v = (w_1 - z) - rescaled(2 (w_0 - z)) + 2 (w_0 - z) with the anchor
    brought back to its own norm 5: v = -4.5 + 5 - 10 = -9.5, w_2 = 1.45."""
    strategy = VarianceReduced(2, 100.0, 100.0, 0, 0)
    result = minimize(SquaredDistanceLoss(Euclidean(1)), to_backend(np.array([[5.0]])),
                      strategy, 1, 0.1, transport=DoublingTransport(Euclidean(1)))
    np.testing.assert_allclose(to_numpy(result.point), [1.45], rtol=1e-12)


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


def test_variance_reduced_queries_follow_000_claim_3():
    n, n_iter = 50, 4
    strategy = VarianceReduced(10, 0.5, 0.2, 1.5, 2.5, restarts=1)
    full, single = strategy.queries(n, n_iter)
    assert np.isclose(full.sensitivity, 2 * 0.5 / n) and full.n_releases == 2 * n_iter
    assert np.isclose(single.sensitivity, 4 * 0.2) and single.sampling_rate == 1 / n
    assert single.n_releases == 2 * n_iter * 10
    assert np.isclose(single.noise_multiplier, 2.5 / (4 * 0.2))
    step_full, _ = VarianceReduced(10, 0.5, 0.2, 1.5, 2.5, snapshot_noise="step").queries(
        n, n_iter
    )
    assert step_full.n_releases == n_iter * 10


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
