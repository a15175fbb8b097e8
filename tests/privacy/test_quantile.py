"""The private quantile on a public grid: the exponential mechanism's law (McSherry &
Talwar 2007) against the candidates' frequencies, and its ledger entry."""

import math

import numpy as np
import pytest

from geomstats_dp.privacy import PureEvent
from geomstats_dp.privacy.quantile import private_quantile, quantile_event
from tests.conftest import shifted

pytestmark = pytest.mark.backend_independent


def test_candidates_are_chosen_with_probability_exp_epsilon_utility_over_two():
    values = np.array([0.5, 1.5, 2.5, 3.5])  # counts <= c for the grid: 1, 2, 3
    grid = np.array([1.0, 2.0, 3.0])
    epsilon, quantile, n_draws = 1.0, 0.25, 6000
    utility = -np.abs(np.array([1, 2, 3]) - quantile * 4)  # 0, -1, -2
    expected = np.exp(epsilon * utility / 2)
    expected /= expected.sum()
    rng = np.random.default_rng(shifted(0))
    draws = [private_quantile(values, quantile, epsilon, rng, grid) for _ in range(n_draws)]
    found = np.array([np.mean(np.array(draws) == c) for c in grid])
    # 4.5 binomial standard errors per candidate
    assert np.all(np.abs(found - expected) < 4.5 * np.sqrt(expected * (1 - expected) / n_draws))


def test_at_a_huge_epsilon_the_candidate_of_the_closest_rank_is_released():
    values = np.random.default_rng(shifted(1)).exponential(size=1001)
    grid = np.geomspace(1e-2, 1e2, 41)
    counts = np.array([np.sum(values <= c) for c in grid])
    best = grid[np.argmin(np.abs(counts - 0.9 * values.size))]
    found = private_quantile(values, 0.9, 1e4, np.random.default_rng(shifted(2)), grid)
    assert found == best


def test_non_finite_values_count_above_every_candidate():
    grid = np.array([1.0, 2.0, 3.0])
    # counts <= c: 0, 0, 2 of 4, so the median is 3; counted low, NaN and inf would make 1
    values = np.array([np.nan, np.inf, 2.5, 2.5])
    found = private_quantile(values, 0.5, 1e4, np.random.default_rng(0), grid)
    assert found == 3.0


def test_the_event_is_a_pure_event_of_sensitivity_one():
    event = quantile_event(0.3, label="radius")
    assert isinstance(event, PureEvent)
    assert (event.epsilon, event.label) == (0.3, "radius")


@pytest.mark.parametrize(("argument", "value"), [("quantile", 1.5), ("epsilon", -1.0),
                                                 ("epsilon", math.inf)])
def test_rejects_bad_arguments(argument, value):
    kwargs = {"quantile": 0.5, "epsilon": 1.0, argument: value}
    with pytest.raises(ValueError, match=argument):
        private_quantile(np.ones(3), kwargs["quantile"], kwargs["epsilon"],
                         np.random.default_rng(0))
