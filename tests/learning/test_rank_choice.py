"""RankChoiceRelease alone: its ledger, the attained sensitivity of the item means, and
the choice at a huge epsilon (item means on rows without low-rank structure, DP-ALS on a
planted rank-2 matrix)."""

import dataclasses
import math

import numpy as np
import pytest

from geomstats_dp.learning.mechanisms.alternating_least_squares import (
    AlternatingLeastSquaresRelease,
)
from geomstats_dp.learning.mechanisms.rank_choice import held_out_errors, rank_choice
from geomstats_dp.privacy import PrivacyBudget, calibrate_gaussian
from tests.conftest import shifted
from tests.learning.mechanism_support import stages_of

H = 1.0


def _spec(n_users, n_items=8, epsilon=1.0, rank=2, n_iter=1):
    return rank_choice(AlternatingLeastSquaresRelease(
        n_samples=n_users, rank=rank, epsilon=epsilon, delta=1e-5,
        clip_norm=math.sqrt(3 / 8) * H**2, n_iter=n_iter, regularization=None,
        half_width=H, rating_range=(-H, H)))


def test_ledger_is_the_choice_plus_gaussian_releases_of_one_multiplier():
    spec = _spec(50, epsilon=2.0)
    assert spec.selection_epsilon == pytest.approx(0.2)
    z = calibrate_gaussian(1.8, 1e-5, 1 + 1 + 1)  # start, one alternation, the means
    assert spec.als.noise_multiplier == pytest.approx(z)
    budget = PrivacyBudget(2.0, 1e-5)
    for event in spec.events():
        budget.spend(event)
    assert budget.spent_epsilon == pytest.approx(2.0, rel=1e-6)


def test_item_means_attain_their_stated_sensitivity():
    """Replacing one user's row moves (S, N) by at most 2h, attained by the same items
    rated +h and -h (the counts' part is equal, the sums' part is 2h)."""
    rng = np.random.default_rng(shifted(0))
    ratings = rng.uniform(-H, H, (50, 8))
    spec = _spec(50)
    label = f"{spec.als.label} rank choice: item means"
    rows = (np.full(8, H), np.full(8, -H), np.where(np.arange(8) < 4, H, np.nan),
            np.where(np.arange(8) >= 3, -H, np.nan), np.full(8, np.nan),
            np.where(np.arange(8) == 0, H, np.nan))
    moves, stated = [], set()
    for row in rows:
        for other in rows:
            a, b = ratings.copy(), ratings.copy()
            a[3], b[3] = row, other
            first, _ = stages_of(spec, a, seed=0)
            second, _ = stages_of(spec, b, seed=0)
            moves.append(first[label].distance(second[label]))
            stated.add(first[label].sensitivity)
    # the sensitivity the stage states (and its noise is sized for) is attained
    (sensitivity,) = stated
    assert max(moves) == pytest.approx(sensitivity, rel=1e-9)
    assert max(moves) == pytest.approx(2 * H, rel=1e-9)


@pytest.mark.parametrize("rows", ["means", "offsets", "rank2"])
def test_a_huge_epsilon_chooses_the_better_model(rows):
    """Rows of independent noise around item means: the item means as they are (rank 0,
    no user offset) complete them better than any user fit; with users' offsets of scale
    0.5 added: the item means and each user's own offset; a planted rank-2 matrix:
    DP-ALS."""
    rng = np.random.default_rng(shifted(1))
    n_users, n_items = 600, 12
    if rows == "rank2":
        basis = np.linalg.qr(rng.standard_normal((n_items, 2)))[0]
        full = 0.5 * rng.standard_normal((n_users, 2)) @ basis.T * math.sqrt(n_items) / 3
    else:
        full = rng.uniform(-0.5, 0.5, n_items) + 0.3 * rng.standard_normal(
            (n_users, n_items))
        full += 0.5 * (rows == "offsets") * rng.standard_normal((n_users, 1))
    ratings = np.where(rng.random(full.shape) < 0.5, np.clip(full, -H, H), np.nan)
    spec = _spec(n_users, n_items, epsilon=1e6, n_iter=3)
    _, fitted = stages_of(spec, ratings, seed=0)
    assert fitted["rank_"] == (2 if rows == "rank2" else 0)
    assert fitted["user_offsets_"] == (rows != "means")


@pytest.mark.parametrize("score", ["squared", "root", "absolute"])
def test_each_users_score_lies_in_zero_to_the_stated_sensitivity(score):
    """Every user's held-out error lies in [0, B] (so a replaced user moves a utility by
    at most B), B attained by a user whose held-out ratings are all 2h off; below the
    clip, the score is the user's own error (mean squared, its root, mean absolute)."""
    rng = np.random.default_rng(shifted(2))
    h = 0.5
    spec = _spec(40)
    spec = dataclasses.replace(spec, als=dataclasses.replace(spec.als, half_width=h),
                               score=score, clip=0.5)
    ratings = rng.uniform(-h, h, (40, 8))
    ratings[rng.random(ratings.shape) < 0.3] = np.nan
    predicted = rng.uniform(-h, h, (40, 8))
    ratings[0], predicted[0] = h, -h  # every held-out rating 2h off
    ratings[1], predicted[1] = np.nan, 0.0  # no held-out rating
    ratings[2], predicted[2] = 0.1 * h, 0.0  # 0.1 h off
    errors = held_out_errors(predicted, ratings, h, score=score, clip=spec.clip)
    assert np.all((errors >= 0) & (errors <= spec.error_clip))
    assert errors[0] == pytest.approx(spec.error_clip)
    assert errors[1] == 0
    assert errors[2] == pytest.approx(0.01 * h**2 if score == "squared" else 0.1 * h)
    assert spec.error_clip == pytest.approx(0.5 * h**(2 if score == "squared" else 1))
