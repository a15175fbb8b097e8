"""Budgets across threads: ``with budget:`` reaches fits in worker threads, and concurrent
fits of one budget are refused at their check, before they read any data."""

import threading
import time
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from geomstats.geometry.euclidean import Euclidean
from joblib import Parallel, delayed

from geomstats_dp._backend import to_numpy
from geomstats_dp.learning import PrivateERM
from geomstats_dp.optim import SquaredDistanceLoss
from geomstats_dp.privacy import (
    BudgetExceededError,
    PrivacyBudget,
    PureEvent,
    resolve_budget,
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
def test_fits_in_worker_threads_charge_the_open_block(workers, fresh_default):
    """Estimators created outside the block, fitted inside it by a thread pool: a 0.6
    budget takes one fit of 0.5 and refuses the other before it reads the data."""
    loss = ReadCounter(Euclidean(2), pause=0.2)
    estimators = [_estimator(loss), _estimator(loss)]
    budget = PrivacyBudget(0.6, 1e-5)
    with budget, ThreadPoolExecutor(max_workers=workers) as pool:
        outcomes = list(pool.map(_fit_or_refusal, estimators))
    fitted = [o for o in outcomes if not isinstance(o, BudgetExceededError)]
    refused = [o for o in outcomes if isinstance(o, BudgetExceededError)]
    assert len(fitted) == 1 and len(refused) == 1
    assert fitted[0].budget_ is budget and budget.events == fitted[0].events_
    assert loss.reads == 1  # the refused fit read nothing
    assert fresh_default.events == ()


def test_concurrent_fits_without_a_budget_share_the_bounded_default_ledger(fresh_default):
    """No block: each fit has its own (0.5, 1e-5) and both are held in the bounded
    default ledger while they run, so the second is refused before it reads data."""
    bounded = PrivacyBudget(0.6, 1e-5)
    set_default_budget(bounded)
    loss = ReadCounter(Euclidean(2), pause=0.2)
    with ThreadPoolExecutor(max_workers=2) as pool:
        outcomes = list(pool.map(_fit_or_refusal, [_estimator(loss), _estimator(loss)]))
    fitted = [o for o in outcomes if not isinstance(o, BudgetExceededError)]
    assert len(fitted) == 1 and loss.reads == 1
    assert bounded.events == fitted[0].events_


def test_joblib_threading_backend_charges_the_open_block(fresh_default):
    budget = PrivacyBudget(5.0, 1e-5)
    estimators = [_estimator(SquaredDistanceLoss(Euclidean(2))) for _ in range(3)]
    with budget:
        fitted = Parallel(n_jobs=2, backend="threading")(
            delayed(_fit_or_refusal)(estimator) for estimator in estimators
        )
    assert all(fit.budget_ is budget for fit in fitted)
    assert len(budget.events) == 3 and fresh_default.events == ()


def test_blocks_of_different_budgets_in_other_threads_are_ambiguous():
    opened, done = threading.Barrier(3), threading.Event()

    def hold(budget):
        with budget:
            opened.wait()
            done.wait()

    threads = [threading.Thread(target=hold, args=(PrivacyBudget(1.0, 1e-5),))
               for _ in range(2)]
    for thread in threads:
        thread.start()
    opened.wait()
    try:
        with ThreadPoolExecutor(1) as pool, pytest.raises(ValueError, match="budget="):
            pool.submit(resolve_budget, None, 1.0, 1e-5).result()
    finally:
        done.set()
        for thread in threads:
            thread.join()
    # the blocks are closed: a fit in a new thread gets a budget of its own again
    with ThreadPoolExecutor(1) as pool:
        own = pool.submit(resolve_budget, None, 1.0, 1e-5).result()
    assert own.events == () and own.epsilon == 1.0


def test_concurrent_reservations_never_exceed_the_budget():
    budget = PrivacyBudget(1.0, 0.0)
    outcomes, start = [], threading.Barrier(30)

    def fit():
        start.wait()
        try:
            reservation = budget.reserve(PureEvent(0.1))
        except BudgetExceededError:
            outcomes.append(False)
            return
        time.sleep(0.01)  # "the optimisation": every other check counts this hold
        reservation.spend(PureEvent(0.1))
        outcomes.append(True)

    with ThreadPoolExecutor(max_workers=30) as pool:
        for _ in range(30):
            pool.submit(fit)
    assert sum(outcomes) == 10
    assert budget.spent_epsilon == pytest.approx(1.0) and len(budget.events) == 10


def test_a_cancelled_or_collected_reservation_frees_its_hold():
    budget = PrivacyBudget(1.0, 0.0)
    budget.reserve(PureEvent(0.8)).cancel()
    held = budget.reserve(PureEvent(0.8))
    with pytest.raises(BudgetExceededError, match="held by fits in progress"):
        budget.check(PureEvent(0.8))
    del held  # a fit that failed after its check: its hold goes with it
    assert budget.check(PureEvent(0.8)) == pytest.approx(0.8)
    assert budget.events == ()


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
