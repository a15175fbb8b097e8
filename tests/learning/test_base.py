"""The pipeline every release goes through (``mechanisms.base.run_release``) and what
every estimator shares (``learning._base.PrivateEstimator``)."""

from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from sklearn.base import clone

from geomstats_dp.learning._base import PrivateEstimator
from geomstats_dp.learning.mechanisms import Mechanism, run_release
from geomstats_dp.privacy import BudgetExceededError, GaussianEvent, PrivacyBudget

pytestmark = pytest.mark.backend_independent
EVENT = GaussianEvent(3.0, label="toy")


@dataclass(frozen=True)
class Toy(Mechanism):
    """Releases the data's sum plus a draw; ``fail`` raises inside the release."""

    fail: bool = False
    refined: Any = None

    def events(self):
        return (EVENT,)

    def release(self, data, weights, rng):
        if self.fail:
            raise RuntimeError("inside the release")
        fitted = {"estimate_": float(np.sum(data)) + rng.standard_normal()}
        if self.refined is not None:
            fitted["events_"] = self.refined
        return fitted


def test_a_release_spends_its_events():
    budget = PrivacyBudget(5.0, 1e-5)
    fitted = run_release(Toy(), budget, np.ones(3), None, 0)
    assert fitted["events_"] == (EVENT,)
    assert budget.events == (EVENT,)
    assert fitted["estimate_"] == 3.0 + np.random.default_rng(0).standard_normal()


def test_refined_events_are_the_ones_spent():
    refined = (GaussianEvent(3.0, sensitivity=2.0, noise_std=6.0, label="toy"),)
    budget = PrivacyBudget(5.0, 1e-5)
    assert run_release(Toy(refined=refined), budget, np.ones(3), None, 0)["events_"] == (
        refined)
    assert budget.events == refined


def test_a_failed_release_charges_nothing_and_frees_its_room():
    budget = PrivacyBudget(5.0, 1e-5)
    with pytest.raises(RuntimeError, match="inside the release"):
        run_release(Toy(fail=True), budget, np.ones(3), None, 0)
    assert budget.events == ()
    run_release(Toy(), budget, np.ones(3), None, 0)  # the room was given back


def test_the_budget_is_checked_before_the_data_is_read():
    with pytest.raises(BudgetExceededError):
        run_release(Toy(), PrivacyBudget(0.01, 1e-5), None, None, 0)


class ToyEstimator(PrivateEstimator):
    _FITTED = ("estimate_", "budget_", "method_", "events_")

    def __init__(self, epsilon=5.0, budget=None, random_state=None, secure=False):
        self.epsilon = epsilon
        self.budget = budget
        self.random_state = random_state
        self.secure = secure
        self._remember_budget()

    def fit(self, X, fail=False):
        budget = self._start_fit(self.epsilon, 1e-5)
        return self._fit_release(budget, "toy", Toy(fail=fail), X, None)


def test_fitted_attributes_and_a_failed_fit_leaves_it_unfitted():
    estimator = ToyEstimator(random_state=0).fit(np.ones(3))
    assert estimator.method_ == "toy" and estimator.events_ == (EVENT,)
    with pytest.raises(RuntimeError):
        estimator.fit(np.ones(3), fail=True)
    assert not hasattr(estimator, "estimate_")


def test_a_dask_array_is_refused_by_a_mechanism_that_does_not_read_it():
    dask_array = pytest.importorskip("dask.array")
    budget = PrivacyBudget(5.0, 1e-5)
    with pytest.raises(TypeError, match="method='toy' does not read Dask arrays"):
        ToyEstimator(budget=budget).fit(dask_array.ones(3))
    assert budget.events == ()


def test_a_clone_charges_the_budget_active_at_creation():
    budget = PrivacyBudget(5.0, 1e-5)
    with budget:
        estimator = ToyEstimator(random_state=0)
    clone(estimator).fit(np.ones(3))
    assert budget.events == (EVENT,)
