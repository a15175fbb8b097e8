"""Calibration finds the smallest noise meeting a target, fast and consistently."""

import pytest

from geomstats_dp.privacy import (
    GaussianEvent,
    PrivacyBudget,
    calibrate_gaussian,
    compose_epsilon,
)
from geomstats_dp.privacy import calibration

pytestmark = pytest.mark.backend_independent

SCHEMES = [
    {"n_steps": 100},
    {"n_steps": 100_000},
    {"n_steps": 1000, "sampling_rate": 0.01, "sampling": "without_replacement"},
    {"n_steps": 100_000, "sampling_rate": 0.01, "sampling": "without_replacement"},
    {"n_steps": 10_000, "sampling_rate": 0.1, "sampling": "without_replacement"},
    {
        "n_steps": 10_000,
        "sampling_rate": 0.01,
        "sampling": "poisson",
        "adjacency": "add_remove",
    },
]


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize(("epsilon", "delta"), [(1.0, 1e-5), (0.3, 1e-6)])
def test_calibration_round_trips(scheme, epsilon, delta):
    noise_multiplier = calibrate_gaussian(epsilon, delta, **scheme)
    achieved = compose_epsilon([GaussianEvent(noise_multiplier, **scheme)], delta)
    assert epsilon * (1 - 1e-3) <= achieved <= epsilon
    # Smallest: a 0.1 % smaller multiplier misses the target.
    smaller = GaussianEvent(noise_multiplier * (1 - 1e-3), **scheme)
    assert compose_epsilon([smaller], delta) > epsilon
    # And back: the epsilon of that multiplier calibrates to the same multiplier.
    assert calibrate_gaussian(achieved, delta, **scheme) == pytest.approx(
        noise_multiplier, rel=1e-3
    )


def test_calibration_is_cached():
    calibration._calibrate_gaussian.cache_clear()
    scheme = {"n_steps": 500, "sampling_rate": 0.02, "sampling": "without_replacement"}
    first = calibrate_gaussian(0.7, 1e-5, **scheme)
    assert calibrate_gaussian(0.7, 1e-5, **scheme) == first
    assert calibration._calibrate_gaussian.cache_info().hits == 1


@pytest.mark.parametrize(
    ("arguments", "error", "name"),
    [
        ((1.0, 0.0, 10), ValueError, "delta"),
        ((0.0, 1e-5, 10), ValueError, "epsilon"),
        ((1.0, 1e-5, 0), ValueError, "n_steps"),
        ((1.0, 1e-5, 10, 0.1, "poisson", "replace_one"), ValueError, "add_remove"),
        # RDP on orders up to 1024 cannot certify epsilon below ~3.5e-3 at delta = 1e-5.
        ((1e-3, 1e-5, 10, 0.1, "without_replacement"), ValueError, "cannot be met"),
    ],
)
def test_calibration_refuses_what_it_cannot_do(arguments, error, name):
    with pytest.raises(error, match=name):
        calibrate_gaussian(*arguments)


def test_budget_calibration_accounts_for_the_ledger():
    budget = PrivacyBudget(1.0, 1e-5)
    budget.spend(GaussianEvent(calibrate_gaussian(0.6, 1e-5, 50), n_steps=50))
    scheme = {"n_steps": 200, "sampling_rate": 0.05, "sampling": "without_replacement"}
    noise_multiplier = budget.calibrate_gaussian(**scheme)
    budget.check(GaussianEvent(noise_multiplier, **scheme))
    assert budget.check(GaussianEvent(noise_multiplier, **scheme)) >= 1.0 * (1 - 1e-3)
    with pytest.raises(ValueError):
        budget.check(GaussianEvent(noise_multiplier * (1 - 1e-3), **scheme))
