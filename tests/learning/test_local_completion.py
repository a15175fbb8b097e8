"""The user's side of the billboard model: each user's own ridge fit and completion."""

import numpy as np
import pytest

from geomstats_dp.learning._local_completion import (
    centred_ratings,
    complete_rows,
    fit_users,
)

N_ITEMS, RANK = 8, 2


def _item_side(seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(N_ITEMS), rng.standard_normal((N_ITEMS, RANK))


@pytest.mark.backend_independent
def test_each_user_solves_their_own_ridge_problem():
    """Against an independent solve of min sum_Omega (x_j - b_j - c - F_j v)^2 +
    lambda (c^2 + |v|^2)."""
    offsets, factors = _item_side()
    rng = np.random.default_rng(1)
    ratings = np.where(rng.random((5, N_ITEMS)) < 0.6, rng.normal(size=(5, N_ITEMS)), np.nan)
    ratings[4] = np.nan  # no rating: c = 0, v = 0
    biases, user_factors = fit_users(offsets, factors, ratings, 0.5)
    features = np.concatenate([np.ones((N_ITEMS, 1)), factors], axis=1)
    for row, bias, factor in zip(ratings[:4], biases, user_factors):
        seen = ~np.isnan(row)
        stacked = np.vstack([features[seen], np.sqrt(0.5) * np.eye(RANK + 1)])
        target = np.concatenate([row[seen] - offsets[seen], np.zeros(RANK + 1)])
        solution = np.linalg.lstsq(stacked, target)[0]
        np.testing.assert_allclose([bias, *factor], solution, atol=1e-10)
    assert biases[4] == 0.0 and not user_factors[4].any()
    completed = complete_rows(offsets, factors, ratings, 0.5)
    np.testing.assert_allclose(completed, biases[:, None] + offsets + user_factors @ factors.T)


@pytest.mark.backend_independent
def test_ratings_are_clipped_to_the_public_range_then_centred():
    ratings = np.array([[0.0, 3.0, 7.0, np.nan]])
    np.testing.assert_array_equal(centred_ratings(ratings, (1, 5), 3.0),
                                  [[-2.0, 0.0, 2.0, np.nan]])
    np.testing.assert_array_equal(centred_ratings(ratings, None, 1.0),
                                  [[-1.0, 2.0, 6.0, np.nan]])
