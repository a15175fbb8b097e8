"""Reservations: events held against a budget between a fit's check and its charge."""

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from geomstats_dp.privacy import BudgetExceededError, PrivacyBudget, PureEvent


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


def test_spend_charges_the_final_events_and_frees_the_hold():
    budget = PrivacyBudget(1.0, 0.0)
    reservation = budget.reserve(PureEvent(0.6))
    assert reservation.spend(PureEvent(0.4)) == pytest.approx(0.4)  # the final events
    assert budget.spent_epsilon == pytest.approx(0.4)
    assert budget.check(PureEvent(0.6)) == pytest.approx(1.0)  # no hold left
