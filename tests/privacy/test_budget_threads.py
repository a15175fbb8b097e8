"""Budgets across threads: ``with budget:`` is visible only in the thread that opened it
(estimators created inside it remember it, in any thread), and concurrent fits of one
budget are refused at their check, before they read any data."""

import threading
import time
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from geomstats.geometry.euclidean import Euclidean
from joblib import Parallel, delayed
from sklearn.base import clone

from geomstats_dp._backend import to_numpy
from geomstats_dp.learning import PrivateERM
from geomstats_dp.optim import SquaredDistanceLoss
from geomstats_dp.privacy import (
    BudgetExceededError,
    PrivacyBudget,
    set_default_budget,
)
from tests.optim.spies import TangentGaussianSpy
from tests.privacy.ledgers import fresh_default  # noqa: F401 (fixture)

DATA = np.random.default_rng(0).uniform(-1, 1, size=(30, 2))


class ReadCounter(SquaredDistanceLoss):
    """The squared distance, counting the fits that read their data's values."""

    def __init__(self, space, pause=0.0):
        super().__init__(space)
        self.pause = pause
        self.reads = 0
        self._lock = threading.Lock()

    def check_data(self, data):
        with self._lock:
            self.reads += 1
        time.sleep(self.pause)  # keep this fit in progress while the other one starts
        return super().check_data(data)


def _estimator(loss, **params):
    return PrivateERM(Euclidean(2), loss, epsilon=0.5, clip_norm=2.0, n_iter=3,
                      random_state=0, **params)


def _fit_or_refusal(estimator):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return estimator.fit(DATA)
    except BudgetExceededError as error:
        return error


@pytest.mark.parametrize("workers", [1, 2])
def test_fits_in_worker_threads_charge_the_block_their_estimators_were_created_in(
        workers, fresh_default):
    """Estimators created inside the block, fitted there by a thread pool: a 0.6
    budget takes one fit of 0.5 and refuses the other before it reads the data."""
    loss = ReadCounter(Euclidean(2), pause=0.2)
    budget = PrivacyBudget(0.6, 1e-5)
    with budget, ThreadPoolExecutor(max_workers=workers) as pool:
        estimators = [_estimator(loss), _estimator(loss)]
        outcomes = list(pool.map(_fit_or_refusal, estimators))
    fitted = [o for o in outcomes if not isinstance(o, BudgetExceededError)]
    refused = [o for o in outcomes if isinstance(o, BudgetExceededError)]
    assert len(fitted) == 1 and len(refused) == 1
    assert fitted[0].budget_ is budget and budget.events == fitted[0].events_
    assert loss.reads == 1  # the refused fit read nothing
    assert fresh_default.events == ()


def test_joblib_threading_backend_charges_the_block_of_estimators_created_inside(
        fresh_default):
    budget = PrivacyBudget(5.0, 1e-5)
    with budget:
        estimators = [_estimator(SquaredDistanceLoss(Euclidean(2))) for _ in range(3)]
        fitted = Parallel(n_jobs=2, backend="threading")(
            delayed(_fit_or_refusal)(estimator) for estimator in estimators
        )
    assert all(fit.budget_ is budget for fit in fitted)
    assert len(budget.events) == 3 and fresh_default.events == ()


def test_a_block_open_in_another_thread_is_not_charged(fresh_default):
    """Issue 29, finding 4: thread A holds ``with block:`` open; thread B, with no block
    of its own, creates and fits an estimator without a budget. B's fit is charged to a
    budget of its own, recorded in the default ledger; A's block is not touched (it
    was, and the default ledger missed the release). The same for a thread started
    inside the block."""
    block = PrivacyBudget(10.0, 1e-5)
    opened, fits_done = threading.Event(), threading.Event()
    results = {}

    def holder():
        with block:
            opened.set()
            fits_done.wait(timeout=60)
            inner = threading.Thread(target=fitter, args=("started inside",))
            inner.start()
            inner.join()

    def fitter(name):
        results[name] = _fit_or_refusal(_estimator(SquaredDistanceLoss(Euclidean(2))))

    owner = threading.Thread(target=holder)
    owner.start()
    assert opened.wait(timeout=60)
    other = threading.Thread(target=fitter, args=("other thread",))
    other.start()
    other.join()
    fits_done.set()
    owner.join()
    assert block.events == ()
    for name in ("other thread", "started inside"):
        fit = results[name]
        assert fit.budget_ is not block and fit.budget_.events == fit.events_, name
        assert fit.budget_.epsilon == 0.5, name
    assert fresh_default.events == (results["other thread"].events_
                                    + results["started inside"].events_)


def test_an_estimator_created_inside_a_block_charges_it_from_any_thread(fresh_default):
    """The documented default: an estimator (or its clone) created inside the block
    remembers it, and is charged to it when fitted in another thread after the block
    is closed."""
    block = PrivacyBudget(10.0, 1e-5)
    with block:
        estimator = _estimator(SquaredDistanceLoss(Euclidean(2)))
    copies = [estimator, clone(estimator)]
    with ThreadPoolExecutor(1) as pool:
        fitted = list(pool.map(_fit_or_refusal, copies))
    assert all(fit.budget_ is block for fit in fitted)
    assert block.events == fitted[0].events_ + fitted[1].events_
    assert fresh_default.events == ()


def test_a_refit_after_a_failed_fit_is_not_blocked_by_its_hold(fresh_default):
    """The failed fit's frame (kept by its traceback) still references its reservation;
    the same thread's next reservation gives that hold up."""
    budget = PrivacyBudget(0.5, 1e-5)
    corrupted = DATA.copy()
    corrupted[4, 1] = np.nan
    with pytest.raises(ValueError, match="non-finite") as failure:
        _estimator(SquaredDistanceLoss(Euclidean(2)), budget=budget).fit(corrupted)
    refit = _fit_or_refusal(_estimator(SquaredDistanceLoss(Euclidean(2)), budget=budget))
    assert failure.value is not None and not isinstance(refit, BudgetExceededError)
    assert budget.events == refit.events_


def test_a_bounded_default_ledger_refuses_before_reading_or_drawing(monkeypatch,
                                                                    fresh_default):
    bounded = PrivacyBudget(0.6, 1e-5)
    set_default_budget(bounded)
    spy = TangentGaussianSpy(monkeypatch)
    loss = ReadCounter(Euclidean(2))
    first = _fit_or_refusal(_estimator(loss))
    assert bounded.events == first.events_
    reads, draws = loss.reads, len(spy.draws)
    assert reads == 1 and draws == 3
    refused = _fit_or_refusal(_estimator(loss))
    assert isinstance(refused, BudgetExceededError)
    assert "beyond the budget epsilon=0.6" in str(refused)
    assert (loss.reads, len(spy.draws)) == (reads, draws)  # nothing read, no noise drawn
    assert bounded.events == first.events_
    assert np.all(np.isfinite(to_numpy(first.estimate_)))
