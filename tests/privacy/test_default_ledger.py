"""The process-wide default ledger records every release made without a budget."""

import geomstats.backend as gs
import numpy as np
import pytest
from geomstats.geometry.euclidean import Euclidean

from geomstats_dp._backend import to_backend
from geomstats_dp.learning import PrivateFrechetMean
from geomstats_dp.privacy import (
    BudgetExceededError,
    PrivacyBudget,
    UnboundedLedger,
    compose_epsilon,
    get_default_budget,
    set_default_budget,
)
from tests.privacy.ledgers import fresh_default  # noqa: F401 (fixture)




def _data():
    return to_backend(np.random.default_rng(0).uniform(-1, 1, size=(20, 1)))


def _fit(**kwargs):
    space = Euclidean(1)
    return PrivateFrechetMean(space, clip_norm=2.0, n_iter=3, random_state=0, **kwargs).fit(
        _data()
    )


def test_two_fits_without_a_budget_compose_in_the_default_ledger(fresh_default):
    first, second = _fit(), _fit()
    assert isinstance(fresh_default, UnboundedLedger)
    assert fresh_default.events == first.events_ + second.events_
    # each fit is still calibrated and checked for its own (epsilon, delta) = (1, 1e-5)
    for fitted in (first, second):
        assert fitted.budget_ is not fresh_default
        assert (fitted.budget_.epsilon, fitted.budget_.delta) == (1.0, 1e-5)
        assert fitted.budget_.events == fitted.events_
        assert fitted.budget_.spent_epsilon == pytest.approx(1.0, rel=1e-6)
    expected = compose_epsilon(first.events_ + second.events_, 1e-5)
    assert fresh_default.get_epsilon(1e-5) == pytest.approx(expected)
    assert fresh_default.spent_epsilon > 1.3  # two releases of epsilon 1 compose above 1


def test_a_fit_without_a_budget_is_calibrated_like_one_with_its_own_budget(fresh_default):
    implicit = _fit()
    explicit = _fit(budget=PrivacyBudget(1.0, 1e-5))
    assert implicit.noise_multiplier_ == explicit.noise_multiplier_
    assert gs.allclose(implicit.estimate_, explicit.estimate_)
    assert fresh_default.events == implicit.events_  # the explicit budget is not recorded


def test_a_bounded_default_budget_refuses_before_charging(fresh_default):
    bounded = PrivacyBudget(1.2, 1e-5)
    assert set_default_budget(bounded) is fresh_default
    first = _fit()
    assert bounded.events == first.events_
    with pytest.raises(BudgetExceededError, match="beyond the budget epsilon=1.2"):
        _fit()
    assert bounded.events == first.events_  # the refused fit charged nothing


def test_releases_under_an_active_budget_are_not_recorded_twice(fresh_default):
    with PrivacyBudget(3.0, 1e-5) as budget:
        fitted = _fit()
    assert fitted.budget_ is budget
    assert fresh_default.events == ()


@pytest.mark.backend_independent
def test_set_default_budget_checks_its_argument(fresh_default):
    with pytest.raises(TypeError, match="budget must be a PrivacyBudget or None, got float"):
        set_default_budget(1.0)
    ledger = get_default_budget()
    assert ledger.remaining_epsilon == float("inf") and ledger.epsilon == float("inf")
