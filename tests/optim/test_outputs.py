"""Output options: last, random iterate, geodesic averages; restarts from a random iterate."""

import numpy as np
import pytest
from geomstats.geometry.euclidean import Euclidean

from geomstats_dp._backend import to_numpy
from geomstats_dp.optim import (
    FullBatch,
    SquaredDistanceLoss,
    VarianceReduced,
    canonical_point,
    minimize,
)

from .data import MEAN_SPACES, cloud
from .spies import ZeroLoss


def noisy_run(space, output, seed, n_iter=12):
    data = cloud(space, 10, radius=1.0, seed=50, offset=1.0)
    return minimize(
        SquaredDistanceLoss(space), data, FullBatch(1.0, 0.2), n_iter, 0.5,
        output=output, random_state=seed, keep_iterates=True,
    )


def test_last_is_the_final_iterate():
    space = MEAN_SPACES["sphere"]()
    result = noisy_run(space, "last", seed=0)
    np.testing.assert_array_equal(to_numpy(result.point), to_numpy(result.iterates[-1]))


def test_random_iterate_is_a_starting_point_of_some_step():
    """Han et al. 2024, Output 2: uniform on {w_0, ..., w_(T-1)}; several indices occur."""
    space = MEAN_SPACES["sphere"]()
    chosen = set()
    for seed in range(8):
        result = noisy_run(space, "random", seed)
        starts = to_numpy(result.iterates[:-1])
        matches = np.flatnonzero(
            np.all(np.isclose(starts, to_numpy(result.point), rtol=0, atol=0), axis=1)
        )
        assert matches.size >= 1
        chosen.add(int(matches[0]))
    assert len(chosen) > 1


@pytest.mark.parametrize("output", ["average", "weighted_average"])
@pytest.mark.parametrize("name", sorted(MEAN_SPACES))
def test_geodesic_average_of_a_constant_sequence_is_that_point(name, output):
    space = MEAN_SPACES[name]()
    result = minimize(ZeroLoss(space), np.zeros((3, 1)), FullBatch(1.0, 0), 5, 0.5,
                      output=output)
    np.testing.assert_allclose(to_numpy(result.point), to_numpy(canonical_point(space)),
                               atol=1e-12)


@pytest.mark.parametrize("output, weights", [("average", 1.0), ("weighted_average", None)])
def test_geodesic_average_in_euclidean_space_is_the_arithmetic_average(output, weights):
    """Han et al. 2024, Theorems 2-3 in R^2: uniform over w_1..w_T, or weights prop. to k - 1."""
    space = Euclidean(2)
    result = noisy_run(space, output, seed=3)
    later = to_numpy(result.iterates[1:])
    k = np.arange(1, len(later) + 1)
    coefficients = np.ones_like(k, dtype=float) if weights else (k - 1.0)
    expected = coefficients @ later / coefficients.sum()
    np.testing.assert_allclose(to_numpy(result.point), expected, atol=1e-12)


def test_restart_starts_the_next_round_at_a_random_iterate_of_the_last():
    space = MEAN_SPACES["spd"]()
    data = cloud(space, 8, radius=1.0, seed=51, offset=1.0)
    strategy = VarianceReduced(3, 1.0, 1.0, 0.1, 0.1, restarts=1)
    result = minimize(SquaredDistanceLoss(space), data, strategy, 2, 0.2,
                      random_state=4, keep_iterates=True)
    round_steps = strategy.steps_per_round(2)
    first_round = to_numpy(result.iterates[:round_steps])
    restart = to_numpy(result.iterates[round_steps])
    distances = np.abs(first_round - restart).reshape(round_steps, -1).max(axis=1)
    assert distances.min() == 0.0
