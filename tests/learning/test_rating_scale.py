"""The private rating scale of DP-ALS (``mechanisms.rating_scale``): the users' values, the
tightened bounds, the ledger, every check on the mechanism alone, and issue 31's loose
clip norm at a huge epsilon on the three backends."""

import dataclasses
import math

import numpy as np
import pytest
from scipy.linalg import subspace_angles

from geomstats_dp._backend import to_backend
from geomstats_dp.learning import PrivateMatrixCompletion
from geomstats_dp.learning.mechanisms import AutoClip
from geomstats_dp.learning.mechanisms.alternating_least_squares import (
    AlternatingLeastSquaresRelease,
    user_blocks,
)
from geomstats_dp.learning.mechanisms.rank_choice import rank_choice
from geomstats_dp.learning.mechanisms.rating_scale import (
    SCALE_GRID,
    largest_ratings,
    scale_utility,
    tightened,
)
from geomstats_dp.privacy import PureEvent
from geomstats_dp.testing import mechanism_case, parametrize_private_checks
from tests.conftest import shifted
from tests.learning.mechanism_support import composed_mu, gdp_delta, stages_of

N_USERS, N_ITEMS, LOOSE_C = 60, 6, 50.0
LOOSE_H = math.sqrt(LOOSE_C / math.sqrt(3 / 8))  # the half-width C stands for


def _spec(epsilon=1.0, scale_epsilon=0.05, n_iter=1):
    return AlternatingLeastSquaresRelease(
        n_samples=N_USERS, rank=2, epsilon=epsilon, delta=1e-5, clip_norm=LOOSE_C,
        n_iter=n_iter, regularization=None, half_width=LOOSE_H,
        scale=AutoClip(0.5, scale_epsilon))


def _ratings(seed, scale=0.3):
    rng = np.random.default_rng(shifted(seed))
    ratings = scale * rng.standard_normal((N_USERS, N_ITEMS))
    ratings[rng.random(ratings.shape) < 0.4] = np.nan
    ratings[1] = np.nan  # a user with no rating
    return ratings


def test_each_user_gives_their_largest_absolute_rating():
    ratings = np.array([[1.0, -3.0, np.nan], [np.nan] * 3, [0.5, np.inf, 2.0]])
    np.testing.assert_array_equal(largest_ratings(ratings), [3.0, 0.0, np.inf])


def test_the_utility_moves_by_at_most_one_when_one_user_is_replaced():
    """Brute force over replacements (on the grid, between, far above it, infinite)."""
    rng = np.random.default_rng(shifted(2))
    grid = np.array([0.1, 0.2, 0.4, 0.8, 1.6])
    values = rng.choice(np.r_[grid, 0.3, 0.05, 5.0], size=9)
    utility = scale_utility(values, grid, 0.5)
    moves = [np.abs(scale_utility(np.r_[value, values[1:]], grid, 0.5) - utility).max()
             for value in (0.0, 0.1, 0.15, 0.8, 1.6, 3.0, np.inf)]
    assert max(moves) <= 1.0
    assert max(moves) == 1.0  # attained: the bound is tight
    # every value beyond the grid: the top candidate alone is best
    assert np.argmax(scale_utility(np.full(9, 7.0), grid, 0.5)) == len(grid) - 1
    assert np.sum(scale_utility(np.full(9, 7.0), grid, 0.5) == 0) == 1


def test_a_huge_epsilon_tightens_to_the_median_and_keeps_the_default_relation():
    """h is the grid point nearest the median of the users' largest |rating| (within a
    grid step, 12 a decade), C = sqrt(3/8) h^2; the bound only ever tightens."""
    ratings = _ratings(0)
    spec = _spec(scale_epsilon=1e6)
    median = np.median(np.nan_to_num(np.nanmax(np.abs(ratings), axis=1, initial=0.0)))
    fitted = tightened(spec, user_blocks(ratings), np.random.default_rng(0))
    assert fitted.scale is None
    assert median / 10 ** (1 / 12) <= fitted.half_width <= median * 10 ** (1 / 12)
    assert fitted.clip_norm == pytest.approx(math.sqrt(3 / 8) * fitted.half_width**2)
    # ratings far above the bound: the top candidate, the public bound itself
    loud = tightened(spec, user_blocks(1e3 * ratings), np.random.default_rng(0))
    assert loud.half_width == pytest.approx(LOOSE_H) and loud.clip_norm <= LOOSE_C
    assert SCALE_GRID[-1] == 1.0


@pytest.mark.parametrize("select", [False, True])
def test_the_ledger_charges_the_scale_then_the_gaussian_releases(select):
    """The quantile is a pure-DP event of its epsilon; the Gaussian releases share one
    multiplier calibrated to the rest (composed here independently: exact GDP)."""
    spec = _spec(epsilon=0.95, n_iter=2)
    spec = rank_choice(spec) if select else spec
    events = spec.events()
    scale, *rest = events
    assert isinstance(scale, PureEvent) and scale.epsilon == pytest.approx(0.05)
    assert scale.label.endswith("rating scale")
    gaussian = [event for event in rest if not isinstance(event, PureEvent)]
    assert len(gaussian) == (3 if select else 2)
    gaussian_epsilon = 0.95 * (0.9 if select else 1.0)
    assert gdp_delta(gaussian_epsilon, composed_mu(gaussian)) == pytest.approx(1e-5,
                                                                              rel=1e-4)
    pure = sum(event.epsilon for event in events if isinstance(event, PureEvent))
    assert pure == pytest.approx(0.05 + (0.095 if select else 0.0))


def test_the_release_is_staged_at_the_tightened_sensitivity():
    """Every Gaussian stage states 2C, sqrt(2) C or 2h of the released scale, and the
    quantile stage comes first."""
    ratings = _ratings(1)
    stages, fitted = stages_of(rank_choice(_spec(epsilon=4.0)), ratings, seed=0)
    h = fitted["rating_scale_"]
    clip = math.sqrt(3 / 8) * h**2
    assert h < LOOSE_H / 10 and fitted["clip_norm_"] == LOOSE_C
    label = "PrivateMatrixCompletion DP-ALS: "
    assert next(iter(stages)) == label + "rating scale"
    assert stages[label + "spectral start"].sensitivity == pytest.approx(math.sqrt(2) * clip)
    assert stages[label + "item statistics"].sensitivity == pytest.approx(2 * clip)
    means = "PrivateMatrixCompletion rank choice: item means"
    assert stages[means].sensitivity == pytest.approx(2 * h)


@parametrize_private_checks([mechanism_case(
    dataclasses.replace(_spec(), n_samples=N_USERS), _ratings(3),
    skipped={"check_audit": "audited through PrivateMatrixCompletion"})])
def test_every_check_on_the_mechanism_alone(estimator, check):
    check(estimator)


def _issue_case(seed):
    """Issue 31: 400 users x 30 items, rank 2, 40% observed, entries of scale 0.26."""
    rng = np.random.default_rng(shifted(100 + seed))
    basis = np.linalg.qr(rng.standard_normal((30, 2)))[0]
    full = rng.standard_normal((400, 2)) @ basis.T
    return np.where(rng.random(full.shape) < 0.4, full, np.nan), basis


def test_a_loose_clip_norm_recovers_the_item_subspace_at_a_huge_epsilon():
    """clip_norm=50 (about 200 times the entries' scale), epsilon 1e6, other defaults:
    span(1, W) within 0.1 rad of span(1, B) on 10 of 10 draws (0.003-0.024 rad seen;
    0.14-0.18 rad with C as given, ``clip_quantile=None``)."""
    ones = np.ones((30, 1))
    for seed in range(10):
        ratings, basis = _issue_case(seed)
        est = PrivateMatrixCompletion(rank=2, epsilon=1e6, clip_norm=50,
                                      random_state=seed).fit(to_backend(ratings))
        assert est.budget_.spent_epsilon == pytest.approx(1e6, rel=1e-6)
        assert est.rating_scale_ < 1.0 and est.clip_norm_ == 50
        angle = subspace_angles(np.c_[ones, est.components_.T], np.c_[ones, basis]).max()
        assert angle < 0.1, (seed, angle)
