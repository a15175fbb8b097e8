"""ItemMeansRelease (``method="means"``) alone and in the estimator: its ledger, the
attained sensitivity, the shrinkage of the item means and of the users' own offsets, the
release at a huge epsilon, and ``method="auto"``'s public rule."""

import math

import numpy as np
import pytest

from geomstats_dp.learning import PrivateMatrixCompletion
from geomstats_dp.learning._local_completion import OFFSET_STRICTNESS, shrunk_offsets
from geomstats_dp.learning.mechanisms.item_means import (
    ItemMeansRelease,
    shrunk_item_means,
)
from geomstats_dp.learning.mechanisms.rank_choice import INFORMED_CHOICE, MEANS_SIGNAL
from geomstats_dp.privacy import PrivacyBudget, calibrate_gaussian
from tests.conftest import shifted
from tests.learning.mechanism_support import stages_of

H = 1.0
LABEL = "PrivateMatrixCompletion item means: sums and counts"


def _spec(n_users, epsilon=1.0):
    return ItemMeansRelease(n_samples=n_users, epsilon=epsilon, delta=1e-5, half_width=H,
                            clip_norm=math.sqrt(3 / 8) * H**2, rating_range=(-H, H))


def _rows(rng, n_users, n_items, user_scale, noise=0.3, observed=0.6):
    items = rng.uniform(-0.5, 0.5, n_items)
    users = user_scale * rng.standard_normal((n_users, 1))
    full = items + users + noise * rng.standard_normal((n_users, n_items))
    return items, users, full, np.where(rng.random(full.shape) < observed, full, np.nan)


def test_ledger_is_one_gaussian_release_of_sensitivity_2h():
    spec = _spec(50, epsilon=2.0)
    (event,) = spec.events()
    assert event.noise_multiplier == pytest.approx(calibrate_gaussian(2.0, 1e-5, 1))
    assert event.sensitivity == pytest.approx(2 * H)
    budget = PrivacyBudget(2.0, 1e-5)
    budget.spend(event)
    assert budget.spent_epsilon == pytest.approx(2.0, rel=1e-6)


def test_the_sums_and_counts_attain_their_stated_sensitivity():
    """One user's row replaced moves (S, N) by at most 2h, attained by the same items
    rated +h and -h."""
    rng = np.random.default_rng(shifted(0))
    ratings = rng.uniform(-H, H, (50, 8))
    rows = (np.full(8, H), np.full(8, -H), np.where(np.arange(8) < 4, H, np.nan),
            np.where(np.arange(8) >= 3, -H, np.nan), np.full(8, np.nan),
            np.where(np.arange(8) == 0, H, np.nan), np.full(8, 1e300))
    moves, stated = [], set()
    for row in rows:
        for other in rows:
            a, b = ratings.copy(), ratings.copy()
            a[3], b[3] = row, other
            first, _ = stages_of(_spec(50), a, seed=0)
            second, _ = stages_of(_spec(50), b, seed=0)
            moves.append(first[LABEL].distance(second[LABEL]))
            stated.add(first[LABEL].sensitivity)
    (sensitivity,) = stated
    assert max(moves) == pytest.approx(sensitivity, rel=1e-9)
    assert sensitivity == pytest.approx(2 * H)


def test_shrunk_item_means_follow_the_james_stein_factor():
    """Computed here from the released sums and counts: without noise the means
    themselves; with noise the factor 1 - (m - 3) mean(v) / sum (b - b_bar)^2 towards the
    average, and the average alone where the noise swamps the spread."""
    rng = np.random.default_rng(shifted(3))
    counts = rng.uniform(50, 100, 12)
    means = rng.uniform(-0.5, 0.5, 12)
    sums = means * counts / H
    np.testing.assert_allclose(shrunk_item_means(sums, counts, H, 0.0), means, atol=1e-12)
    noise_std = 4.0
    variances = noise_std**2 * (H**2 + means**2) / counts**2
    factor = 1 - 9 * variances.mean() / np.sum((means - means.mean())**2)
    assert 0 < factor < 1
    np.testing.assert_allclose(shrunk_item_means(sums, counts, H, noise_std),
                               means.mean() + factor * (means - means.mean()), atol=1e-12)
    flat = shrunk_item_means(sums, counts, H, 40.0)  # counts below 3 sigma: none reliable
    np.testing.assert_array_equal(flat, np.zeros(12))
    small = 0.05 * means  # reliable items (counts above 3 x 16), spread below the noise
    swamped = shrunk_item_means(small * counts / H, counts, H, 16.0)
    np.testing.assert_allclose(swamped, np.full(12, small.mean()), atol=1e-12)


def test_each_user_keeps_an_offset_that_stands_out_of_their_own_noise():
    rng = np.random.default_rng(shifted(4))
    items = rng.uniform(-0.5, 0.5, 40)
    noise = 0.3 * rng.standard_normal((4, 40))
    ratings = items + noise + np.array([[0.8], [0.0], [0.8], [0.8]])
    ratings[2, 1:] = np.nan  # one rating: no offset
    ratings[3, 0] = 1e300  # an overflowing rating: no offset
    offsets = shrunk_offsets(items, ratings)
    residuals = ratings[0] - items
    tau = OFFSET_STRICTNESS
    expected = residuals.mean() * (1 - tau * residuals.var(ddof=1)
                                   / (40 * residuals.mean()**2))
    assert offsets[0] == pytest.approx(expected, rel=1e-12)
    assert abs(offsets[0] - 0.8) < 0.15
    assert abs(offsets[1]) < abs((ratings[1] - items).mean()) + 1e-15
    assert offsets[2] == 0 and offsets[3] == 0


@pytest.mark.parametrize("user_scale", [0.0, 0.5])
def test_a_huge_epsilon_completes_with_the_item_means_and_own_offsets(user_scale):
    """At epsilon 1e6 the released means are the users' weighted item means (computed
    here), and the completion of hidden entries is within the rows' noise of the truth:
    the users' offsets where they differ (0.5), near none where they do not."""
    rng = np.random.default_rng(shifted(5))
    items, users, _, ratings = _rows(rng, 800, 10, user_scale)
    est = PrivateMatrixCompletion(rank=2, epsilon=1e6, rating_range=(-3.0, 3.0),
                                  method="means", random_state=0).fit(ratings)
    assert est.method_ == "means" and est.rank_ == 0 and est.user_offsets_
    observed = ~np.isnan(ratings)
    weights = 1 / np.sqrt(np.maximum(observed.sum(axis=1, keepdims=True), 1))
    weighted = (np.where(observed, ratings, 0.0) * weights).sum(0) / (observed * weights).sum(0)
    np.testing.assert_allclose(est.item_offsets_, weighted, atol=1e-3)
    hidden = ~observed
    error = np.sqrt(np.mean((est.predict(ratings) - (items + users))[hidden]**2))
    # the noise of a user's offset from about 6 ratings of noise 0.3 is 0.12 (more where
    # the shrinkage zeroes a small offset); the item means alone would miss the users'
    # offsets by 0.5
    assert error < 0.2, error
    # a row's completion reads only that row and the released item means
    np.testing.assert_allclose(est.predict(ratings[5:6])[0], est.predict(ratings)[5],
                               atol=1e-12)


@pytest.mark.parametrize("branch", ["als", "means", "select"])
def test_auto_is_a_function_of_public_quantities_only(branch):
    """method="auto": the choice where a tenth of epsilon times the number of users
    reaches K; below, the rank-0 release where n / (sqrt(m) z) reaches S (z the noise
    multiplier of DP-ALS alone's two releases, computed here), else DP-ALS alone. The
    same on any two datasets of one shape (neighbours included); the whole budget spent."""
    rng = np.random.default_rng(shifted(6))
    n_users, n_items = 400, 8
    informed = INFORMED_CHOICE / (0.1 * n_users)
    epsilon = {"select": 1.1 * informed, "means": 0.9 * informed, "als": 0.05}[branch]
    z = calibrate_gaussian(0.95 * epsilon, 1e-5, 2)  # 5% for the private rating scale
    signal = n_users / (math.sqrt(n_items) * z)
    assert (signal >= MEANS_SIGNAL) == (branch == "means") or branch == "select"
    methods = set()
    for scale in (0.0, 0.5):
        _, _, _, ratings = _rows(rng, n_users, n_items, scale)
        neighbour = ratings.copy()
        neighbour[0] = -neighbour[0]
        for data in (ratings, neighbour):
            est = PrivateMatrixCompletion(rank=2, epsilon=epsilon, clip_norm=5.0,
                                          random_state=0).fit(data)
            methods.add(est.method_)
            assert est.budget_.spent_epsilon == pytest.approx(epsilon, rel=1e-6)
    assert methods == {branch}
