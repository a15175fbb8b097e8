"""budget.spend(epsilon, delta) for a release made with another tool; get_epsilon(delta)."""

import math

import pytest
from scipy import optimize, stats

from geomstats_dp.privacy import ApproxDPEvent, GaussianEvent, PrivacyBudget, compose

pytestmark = pytest.mark.backend_independent


def _gdp_epsilon(mu, delta):
    """Epsilon of mu-GDP at delta (Dong, Roth & Su 2022, Cor. 2.13), solved with brentq."""

    def excess(epsilon):
        return (stats.norm.cdf(-epsilon / mu + mu / 2)
                - math.exp(epsilon) * stats.norm.cdf(-epsilon / mu - mu / 2) - delta)

    return optimize.brentq(excess, 0.0, 100.0, xtol=1e-12)


def test_external_releases_add_by_basic_composition_at_their_delta():
    budget = PrivacyBudget(2.0, 1e-5)
    budget.spend(0.5, 1e-6)
    budget.spend(0.7, 2e-6)
    assert budget.events == (ApproxDPEvent(0.5, 1e-6, "external release"),
                             ApproxDPEvent(0.7, 2e-6, "external release"))
    assert budget.get_epsilon(3e-6) == pytest.approx(1.2, rel=1e-12)
    assert budget.get_epsilon(2e-6) == math.inf  # below the releases' own deltas
    assert budget.remaining_epsilon == pytest.approx(2.0 - budget.get_epsilon(1e-5))


def test_many_small_releases_use_advanced_composition():
    budget = PrivacyBudget(10.0, 1e-5)
    for _ in range(50):
        budget.spend(0.1, 1e-8)
    delta_prime = 1e-5 - 50 * 1e-8  # the whole slack, nothing else in the ledger
    advanced = (math.sqrt(2 * math.log(1 / delta_prime) * 50 * 0.1**2)
                + 50 * 0.1 * math.expm1(0.1))
    assert advanced < 5.0  # below the basic sum
    assert budget.spent_epsilon == pytest.approx(advanced, rel=1e-9)
    assert budget.accountant == "advanced"


def test_an_external_release_is_not_composed_as_a_gaussian():
    budget = PrivacyBudget(5.0, 1e-5)
    budget.spend(GaussianEvent(1.0))
    budget.spend(0.5, 1e-6)
    # basic composition: the Gaussian part at the delta left over, plus 0.5
    expected = _gdp_epsilon(1.0, 1e-5 - 1e-6) + 0.5
    assert budget.spent_epsilon == pytest.approx(expected, rel=1e-6)
    assert budget.accountant == "gdp+basic"
    assert budget.get_epsilon(1e-3) == pytest.approx(_gdp_epsilon(1.0, 1e-3 - 1e-6) + 0.5,
                                                     rel=1e-6)


def test_an_external_release_past_the_budget_is_refused():
    budget = PrivacyBudget(1.0, 1e-5)
    budget.spend(0.8)  # delta 0: a pure release
    with pytest.raises(ValueError, match="beyond the budget"):
        budget.spend(0.3, 1e-7)
    assert len(budget.events) == 1
    with pytest.raises(ValueError, match="delta"):
        budget.spend(0.1, 1.5)


def test_compose_states_external_events_with_their_accountant():
    guarantee = compose([ApproxDPEvent(1.0, 1e-6)], 1e-6)
    assert (guarantee.epsilon, guarantee.accountant) == (1.0, "basic")
