"""Validation losses clipped to [0, B], a non-finite loss counted as B (or 0 for -inf)."""

import numpy as np
import pytest

from geomstats_dp.model_selection.clipping import clipped_losses


@pytest.mark.backend_independent
def test_losses_are_clipped_to_the_bound_and_non_finite_ones_count_as_it():
    losses = [0.5, 3.0, -1.0, np.nan, np.inf, -np.inf, 2.0]
    np.testing.assert_array_equal(clipped_losses(losses, 2.0),
                                  [0.5, 2.0, 0.0, 2.0, 2.0, 0.0, 2.0])


@pytest.mark.backend_independent
def test_replacing_one_record_moves_the_clipped_sum_by_at_most_the_bound():
    rng = np.random.default_rng(0)
    losses = rng.normal(scale=5.0, size=50)
    for value in (np.nan, np.inf, -np.inf, 1e300, -1e300, 0.7):
        neighbour = losses.copy()
        neighbour[rng.integers(50)] = value
        change = abs(clipped_losses(losses, 1.5).sum() - clipped_losses(neighbour, 1.5).sum())
        assert change <= 1.5
