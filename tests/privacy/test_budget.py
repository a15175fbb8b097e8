"""The budget refuses over-spending before charging, composes shared releases, nests."""

import threading

import pytest

from geomstats_dp.privacy import (
    BudgetExceededError,
    GaussianEvent,
    PrivacyBudget,
    PrivacyLeakWarning,
    PureEvent,
    calibrate_gaussian,
    compose_epsilon,
    current_budget,
    resolve_budget,
)

pytestmark = pytest.mark.backend_independent


def release(epsilon, n_steps=100, label=""):
    """A full-batch release calibrated to ``epsilon`` at delta = 1e-5."""
    return GaussianEvent(calibrate_gaussian(epsilon, 1e-5, n_steps), n_steps, label=label)


def test_spending_past_the_total_raises_and_charges_nothing():
    budget = PrivacyBudget(1.0, 1e-5)
    first = release(0.8, label="first fit")
    budget.spend(first)
    spent = budget.spent_epsilon
    with pytest.raises(BudgetExceededError, match="second fit") as caught:
        budget.spend(release(0.8, label="second fit"))
    assert budget.events == (first,)
    assert budget.spent_epsilon == spent
    assert caught.value.required_epsilon > 1.0 == caught.value.budget_epsilon


def test_check_charges_nothing():
    budget = PrivacyBudget(1.0, 1e-5)
    planned = release(0.5)
    assert budget.check(planned) == pytest.approx(0.5, rel=1e-9)
    assert budget.events == () and budget.spent_epsilon == 0.0
    assert budget.remaining_epsilon == 1.0


def test_two_estimators_sharing_a_budget_compose():
    budget = PrivacyBudget(2.0, 1e-5)
    first, second = release(0.6, label="estimator A"), release(0.9, label="estimator B")
    budget.spend(first)
    budget.spend(second)
    both = compose_epsilon([first, second], 1e-5)
    assert budget.spent_epsilon == pytest.approx(both, rel=1e-12)
    assert max(0.6, 0.9) < budget.spent_epsilon <= 0.6 + 0.9
    assert budget.remaining_epsilon == pytest.approx(2.0 - both, rel=1e-12)
    assert budget.accountant == "gdp"


def test_a_calibrated_release_fills_the_budget_exactly():
    budget = PrivacyBudget(1.0, 1e-5)
    budget.spend(release(1.0))
    assert budget.spent_epsilon <= 1.0
    with pytest.raises(BudgetExceededError):
        budget.spend(PureEvent(1e-3))


def test_delta_zero_budget_admits_only_pure_releases():
    budget = PrivacyBudget(1.0, 0.0)
    budget.spend(PureEvent(0.4), PureEvent(0.6))
    assert budget.spent_epsilon == pytest.approx(1.0, rel=1e-12)
    with pytest.raises(BudgetExceededError):
        PrivacyBudget(1.0, 0.0).spend(GaussianEvent(100.0))


def test_context_manager_sets_and_nests_the_default_budget():
    outer, inner = PrivacyBudget(1.0, 1e-5), PrivacyBudget(0.5, 1e-6)
    assert current_budget() is None
    with outer as entered:
        assert entered is outer and current_budget() is outer
        with inner:
            assert current_budget() is inner
            assert resolve_budget(None, 3.0, 1e-5) is inner
        assert current_budget() is outer
        with pytest.raises(RuntimeError), inner:
            raise RuntimeError("a failing fit")
        assert current_budget() is outer
    assert current_budget() is None


def test_default_budget_is_per_context():
    seen = []
    with PrivacyBudget(1.0, 1e-5):
        worker = threading.Thread(target=lambda: seen.append(current_budget()))
        worker.start()
        worker.join()
    assert seen == [None]  # a new thread starts from an empty context


def test_resolve_budget_prefers_the_explicit_one():
    explicit = PrivacyBudget(1.0, 1e-5)
    with PrivacyBudget(2.0, 1e-5):
        assert resolve_budget(explicit, 3.0, 1e-5) is explicit
    fresh = resolve_budget(None, 3.0, 1e-4)
    assert (fresh.epsilon, fresh.delta, fresh.events) == (3.0, 1e-4, ())
    with pytest.raises(TypeError, match="budget"):
        resolve_budget("budget", 1.0, 1e-5)


def test_concurrent_spending_never_exceeds_the_budget():
    budget = PrivacyBudget(1.0, 0.0)
    outcomes = []

    def spend():
        try:
            budget.spend(PureEvent(0.1))
            outcomes.append(True)
        except BudgetExceededError:
            outcomes.append(False)

    workers = [threading.Thread(target=spend) for _ in range(30)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert sum(outcomes) == 10 and budget.spent_epsilon <= 1.0 + 1e-12


@pytest.mark.parametrize(
    ("arguments", "error", "name"),
    [((0.0, 1e-5), ValueError, "epsilon"), ((1.0, 1.0), ValueError, "delta")],
)
def test_budget_rejects_bad_totals(arguments, error, name):
    with pytest.raises(error, match=name):
        PrivacyBudget(*arguments)


def test_spend_rejects_non_events():
    with pytest.raises(TypeError, match=r"events\[0\]"):
        PrivacyBudget(1.0, 1e-5).spend("0.5")
    with pytest.raises(TypeError, match="3 numbers"):
        PrivacyBudget(1.0, 1e-5).spend(0.5, 1e-6, 1.0)


def test_leak_warning_is_a_user_warning():
    assert issubclass(PrivacyLeakWarning, UserWarning)
    assert issubclass(BudgetExceededError, ValueError)
