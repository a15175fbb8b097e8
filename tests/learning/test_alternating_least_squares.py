"""AlternatingLeastSquaresRelease built alone (no estimator): its events, the per-user
bound of its statistics, its spectral start on user-level neighbours, its convergence."""

import dataclasses
import math

import numpy as np
import pytest

from geomstats_dp.learning.mechanisms.alternating_least_squares import (
    AlternatingLeastSquaresRelease,
    clipped_user_statistics,
    user_sums,
)
from geomstats_dp.testing import mechanism_case, parametrize_private_checks
from tests.conftest import shifted
from tests.learning.mechanism_support import composed_mu, gdp_delta, stages_of

N_USERS, N_ITEMS, RANK, C = 40, 6, 2, 1.5


def _spec(epsilon=1.0, n_iter=2):
    return AlternatingLeastSquaresRelease(n_samples=N_USERS, rank=RANK, epsilon=epsilon,
                                          delta=1e-5,
                                          clip_norm=C, n_iter=n_iter, regularization=1.0,
                                          half_width=2.0)


def test_events_compose_exactly_to_the_target():
    start, items = _spec(epsilon=3.0, n_iter=4).events()
    assert start.sensitivity == pytest.approx(math.sqrt(2) * C, rel=1e-12)
    assert items.sensitivity == pytest.approx(2 * C, rel=1e-12) and items.n_steps == 4
    assert start.noise_multiplier == items.noise_multiplier  # T + 1 equal releases
    assert gdp_delta(3.0, composed_mu((start, items))) == pytest.approx(1e-5, rel=1e-4)


def _ratings(seed):
    rng = np.random.default_rng(shifted(seed))
    ratings = rng.normal(0.0, 1.0, (N_USERS, N_ITEMS))
    ratings[rng.random(ratings.shape) < 0.4] = np.nan
    ratings[0] = 50.0 * rng.standard_normal(N_ITEMS)  # a heavy user, clipped
    ratings[1] = np.nan  # a user with no rating
    return ratings


def test_every_users_statistics_have_norm_at_most_the_clip_norm():
    """The vector of one user's (G_j, m_j) over all items, in the Frobenius norm."""
    rng = np.random.default_rng(shifted(0))
    ratings = _ratings(0)
    factors = rng.standard_normal((N_ITEMS, RANK))
    offsets = rng.standard_normal(N_ITEMS)
    weights, features, residuals, observed = clipped_user_statistics(
        offsets, factors, ratings, 1.0, C, 1.0)
    norms = []
    for user in range(N_USERS):
        grams, moments = user_sums(
            weights[user:user + 1], features[user:user + 1], residuals[user:user + 1],
            observed[user:user + 1])
        norms.append(math.sqrt(np.sum(grams**2) + np.sum(moments**2)))
    assert max(norms) <= C * (1 + 1e-9)
    assert norms[0] == pytest.approx(C, rel=1e-9)  # the heavy user is clipped to C
    assert norms[1] == 0.0


def test_user_level_neighbours_move_the_spectral_start_by_at_most_its_sensitivity():
    spec = _spec()
    ratings = _ratings(1)
    ratings[0] = np.nan
    ratings[0, :2] = [30.0, -30.0]  # centred (a, -a): clipped to |x|^2 / k = C
    label = "PrivateMatrixCompletion DP-ALS: spectral start"
    stages, _ = stages_of(spec, ratings, seed=0)
    moved = ratings.copy()
    moved[0] = np.nan
    moved[0, 2:4] = [30.0, -30.0]  # the same user on other items: orthogonal support
    neighbours = [moved, np.where(np.arange(N_USERS)[:, None] == 0, np.nan, ratings)]
    negated = ratings.copy()
    negated[0] = -1e6 * np.nan_to_num(ratings[0], nan=1.0)
    for neighbour in (*neighbours, negated):
        others, _ = stages_of(spec, neighbour, seed=0)
        assert stages[label].distance(others[label]) <= stages[label].sensitivity * (
            1 + 1e-9)
    others, _ = stages_of(spec, moved, seed=0)  # the stated sensitivity is attained
    assert stages[label].distance(others[label]) == pytest.approx(math.sqrt(2) * C,
                                                                  rel=1e-9)


def test_a_huge_epsilon_recovers_a_planted_item_subspace():
    """Item factors orthogonal to the all-ones direction, which the users' own offsets
    c_u absorb."""
    rng = np.random.default_rng(shifted(2))
    directions = rng.standard_normal((N_ITEMS, RANK))
    basis = np.linalg.qr(directions - directions.mean(axis=0))[0]
    ratings = rng.standard_normal((200, RANK)) @ basis.T
    ratings[rng.random(ratings.shape) < 0.2] = np.nan
    spec = dataclasses.replace(_spec(epsilon=1e8, n_iter=3), n_samples=len(ratings))
    _, fitted = stages_of(spec, ratings, seed=0)
    released = fitted["estimate_"]
    # the sine of the largest principal angle between the two subspaces
    sines = np.linalg.svd(released - basis @ (basis.T @ released), compute_uv=False)
    assert sines.max() < 0.05


@parametrize_private_checks([mechanism_case(
    _spec(), _ratings(3), skipped={"check_audit": "audited through PrivateMatrixCompletion"})])
def test_every_check_on_the_mechanism_alone(estimator, check):
    check(estimator)
