"""scikit-learn and pickle: clones charge the same ledger; copies in other processes refuse."""

import copy
import pickle
import warnings

import geomstats.backend as gs
import numpy as np
import pytest
from geomstats.geometry.euclidean import Euclidean
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, cross_val_score

from geomstats_dp._backend import to_backend
from geomstats_dp.learning import PrivateFrechetMean
from geomstats_dp.privacy import (
    DetachedBudgetError,
    PrivacyBudget,
    PrivacyLeakWarning,
)
from tests.privacy.ledgers import fresh_default  # noqa: F401 (fixture)




def _data(n=12):
    return to_backend(np.random.default_rng(1).uniform(-1, 1, size=(n, 1)))


def _estimator(**kwargs):
    return PrivateFrechetMean(Euclidean(1), clip_norm=2.0, n_iter=2, random_state=0, **kwargs)


def test_a_budget_is_a_shared_handle_under_copy_and_clone():
    budget = PrivacyBudget(1.0, 1e-5)
    assert copy.deepcopy(budget) is budget
    assert copy.copy(budget) is budget
    assert clone(budget) is budget


def test_clone_with_an_explicit_budget_charges_the_same_ledger():
    budget = PrivacyBudget(3.0, 1e-5)
    cloned = clone(_estimator(budget=budget))
    assert cloned.budget is budget
    cloned.fit(_data())
    assert budget.events == cloned.events_


@pytest.mark.parametrize("clone_inside", [True, False])
def test_clone_of_an_estimator_created_in_a_with_block(clone_inside, fresh_default):
    budget = PrivacyBudget(3.0, 1e-5)
    with budget:
        estimator = _estimator()
        if clone_inside:
            cloned = clone(estimator)
    if not clone_inside:
        cloned = clone(estimator)
    cloned.fit(_data())
    assert cloned.budget_ is budget
    assert budget.events == cloned.events_
    assert fresh_default.events == ()


def test_a_fitted_estimator_pickles_and_its_budget_is_a_detached_copy():
    budget = PrivacyBudget(3.0, 1e-5)
    fitted = _estimator(budget=budget).fit(_data())
    restored = pickle.loads(pickle.dumps(fitted))
    assert gs.allclose(restored.estimate_, fitted.estimate_)
    assert restored.budget_ is restored.budget and restored.budget_ is not budget
    assert restored.budget_.events == budget.events and restored.budget_.detached
    with pytest.raises(DetachedBudgetError, match="unpickled"):
        restored.fit(_data())
    copied = restored.budget  # the failed fit cleared budget_; the parameter remains
    assert copied.events == budget.events == fitted.events_  # nothing charged
    resumed = copied.resume()
    assert not resumed.detached and resumed.events == budget.events
    resumed.spend(0.1)
    assert len(resumed.events) == len(budget.events) + 1  # an independent ledger


def _cross_validate(estimator, n_jobs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)  # score reads the raw data
        warnings.simplefilter("ignore", UserWarning)  # small n: the noise dominates
        return cross_val_score(estimator, _data(), cv=3, n_jobs=n_jobs)


def _grid_search(estimator, n_jobs):
    search = GridSearchCV(estimator, {"epsilon": [0.5, 1.0]}, cv=3, n_jobs=n_jobs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # leak (score), noise dominates
        return search.fit(_data())


@pytest.mark.parametrize("explicit", [True, False])
def test_cross_val_score_in_one_process_charges_one_ledger(explicit, fresh_default):
    budget = PrivacyBudget(10.0, 1e-5)
    if explicit:
        estimator = _estimator(budget=budget)
    else:
        with budget:
            estimator = _estimator()
    scores = _cross_validate(estimator, n_jobs=1)
    assert np.all(np.isfinite(scores))
    assert len(budget.events) == 3  # one event (the rgd steps) per fold
    assert fresh_default.events == ()


def test_grid_search_in_one_process_charges_one_ledger():
    budget = PrivacyBudget(10.0, 1e-5)
    _grid_search(_estimator(budget=budget), n_jobs=1)
    assert len(budget.events) == 2 * 3 + 1  # 2 candidates x 3 folds, and the refit


def test_without_a_budget_every_clone_is_recorded_in_the_default_ledger(fresh_default):
    _cross_validate(_estimator(), n_jobs=1)
    assert len(fresh_default.events) == 3


@pytest.mark.slow
@pytest.mark.parametrize("search", [_cross_validate, _grid_search])
@pytest.mark.parametrize("explicit", [True, False])
def test_worker_processes_refuse_before_charging(search, explicit, fresh_default):
    budget = PrivacyBudget(10.0, 1e-5)
    estimator = _estimator(budget=budget) if explicit else _estimator()
    message = "unpickled" if explicit else "worker process"
    with pytest.raises(ValueError, match="fits failed") as error:
        search(estimator, n_jobs=2)
    assert message in str(error.value)
    assert budget.events == () and fresh_default.events == ()
