"""private_score: the noise drawn against the calibrated one, clipping, charging, refusal.

The noise laws (numpy draws around the clipped mean loss) are checked once, on numpy; the
other tests run the score's backend path on every backend.
"""

import math
import warnings

import numpy as np
import pytest
from geomstats.geometry.hypersphere import Hypersphere
from scipy import optimize, stats

from geomstats_dp.learning import PrivateFrechetMean
from geomstats_dp.model_selection import private_score, record_losses
from geomstats_dp.model_selection import splits as splits_module
from geomstats_dp.model_selection.clipping import clipped_losses
from geomstats_dp.privacy import BudgetExceededError, PrivacyBudget
from tests.conftest import shifted
from tests.optim.data import cloud

SPACE = Hypersphere(2)
N_DRAWS = 3000


def _clipped_mean(losses, loss_bound):
    return float(clipped_losses(losses, loss_bound).mean())


@pytest.fixture(scope="module")
def fitted():
    X = cloud(SPACE, 40, 0.5, shifted(0))
    estimator = PrivateFrechetMean(SPACE, epsilon=5.0, clip_norm=1.0, random_state=shifted(0),
                                   budget=PrivacyBudget(5.0, 1e-5)).fit(X)
    return estimator, X


def _draws(estimator, X, **kwargs):
    rng = np.random.default_rng(shifted(1))
    return np.array([
        private_score(estimator, X, budget=PrivacyBudget(10.0, 1e-5), random_state=rng,
                      **kwargs)
        for _ in range(N_DRAWS)
    ])


@pytest.mark.backend_independent
def test_laplace_noise_has_the_calibrated_scale(fitted):
    estimator, X = fitted
    epsilon, bound = 0.5, 0.3
    centre = -_clipped_mean(record_losses(estimator, X), bound)
    noise = _draws(estimator, X, epsilon=epsilon, loss_bound=bound) - centre
    scale = bound / (len(X) * epsilon)
    assert stats.kstest(noise, stats.laplace(scale=scale).cdf).pvalue > 1e-3
    # mean |noise| estimates the scale with relative standard error 1 / sqrt(N)
    assert abs(np.abs(noise).mean() / scale - 1) < 5 / math.sqrt(N_DRAWS)


def _gaussian_delta(epsilon, mu):
    """Balle & Wang (2018): the delta of a mu-GDP mechanism at epsilon."""
    return (stats.norm.cdf(-epsilon / mu + mu / 2)
            - math.exp(epsilon) * stats.norm.cdf(-epsilon / mu - mu / 2))


@pytest.mark.backend_independent
def test_gaussian_noise_has_the_calibrated_standard_deviation(fitted):
    estimator, X = fitted
    epsilon, delta, bound = 0.8, 1e-5, 0.3
    z = optimize.brentq(lambda z: _gaussian_delta(epsilon, 1 / z) - delta, 0.1, 100)
    centre = -_clipped_mean(record_losses(estimator, X), bound)
    noise = _draws(estimator, X, epsilon=epsilon, delta=delta, loss_bound=bound,
                   method="gaussian") - centre
    std = z * bound / len(X)
    assert stats.kstest(noise, stats.norm(scale=std).cdf).pvalue > 1e-3
    # the sample standard deviation has relative standard error 1 / sqrt(2 N)
    assert abs(noise.std() / std - 1) < 5 / math.sqrt(2 * N_DRAWS)


def test_score_is_charged_with_its_sensitivity(fitted):
    estimator, X = fitted
    budget = PrivacyBudget(1.0, 1e-5)
    private_score(estimator, X, epsilon=0.4, loss_bound=2.0, budget=budget, random_state=0)
    (event,) = budget.events
    assert event.epsilon == 0.4
    # B / n = 0.05 rounded to the grid of step 2^-5 / 2^10 (the largest power of two
    # <= min(0.05, 0.05 / 0.4), over 2^10): 1638.4 grid units, moved by at most 1639
    step = 2.0**-15
    assert event.sensitivity == 1639 * step
    assert event.noise_scale == 1639 * step / 0.4
    assert budget.spent_epsilon == pytest.approx(0.4)


def test_refused_before_the_losses_are_computed(fitted, monkeypatch):
    estimator, X = fitted
    calls = []
    monkeypatch.setattr(splits_module, "record_losses", lambda *a: calls.append(1))
    budget = PrivacyBudget(1.0, 1e-5)
    budget.spend(0.9)
    with pytest.raises(BudgetExceededError):
        private_score(estimator, X, epsilon=0.5, loss_bound=1.0, budget=budget)
    assert calls == [] and len(budget.events) == 1


def test_clipping_bounds_the_change_of_one_record():
    losses = np.array([0.1, np.nan, np.inf, -3.0, 7.0, 0.4])
    assert _clipped_mean(losses, 1.0) == pytest.approx((0.1 + 1 + 1 + 0 + 1 + 0.4) / 6)
    rng = np.random.default_rng(shifted(2))
    for _ in range(200):
        values = rng.standard_normal(10) * 3
        neighbour = values.copy()
        neighbour[rng.integers(10)] = rng.choice([np.nan, -np.inf, 1e9, -5.0])
        assert abs(_clipped_mean(values, 2.0) - _clipped_mean(neighbour, 2.0)) <= 2.0 / 10 + 1e-12


@pytest.mark.parametrize("kwargs, error, match", [
    ({"epsilon": 0.0, "loss_bound": 1.0}, ValueError, "epsilon"),
    ({"epsilon": 1.0, "loss_bound": -1.0}, ValueError, "loss_bound"),
    ({"epsilon": 1.0, "loss_bound": 1.0, "method": "cauchy"}, ValueError, "method"),
    ({"epsilon": 1.0, "loss_bound": 1.0, "method": "gaussian", "delta": 0.0}, ValueError,
     "delta"),
])
def test_bad_settings_raise_naming_them(fitted, kwargs, error, match):
    estimator, X = fitted
    with pytest.raises(error, match=match):
        private_score(estimator, X, budget=PrivacyBudget(2.0, 1e-5), **kwargs)


def test_a_record_that_makes_the_log_fail_is_silent(caplog):
    """At an ill-conditioned released point, the log of one validation record has a
    negative eigenvalue: geomstats logs it and numpy warns "invalid value". Neither may
    tell this validation set from its neighbour (that record replaced by a benign one):
    both score with no warning and no log record, and the bad record counts as B."""
    from geomstats.geometry.spd_matrices import SPDMatrices

    space = SPDMatrices(3)
    rng = np.random.default_rng(0)
    benign = np.stack([a @ a.T / 3 + np.eye(3) for a in rng.normal(size=(20, 3, 3))])
    estimator = PrivateFrechetMean(space, epsilon=1.0, clip_norm=1.0, random_state=0)
    with pytest.warns(UserWarning):  # the schedule's public warning, not under test
        estimator.fit(benign)
    estimator.estimate_ = np.diag([1e-9, 1.0, 1e9])  # a far, ill-conditioned release
    neighbour = benign.copy()
    neighbour[0] = np.diag([1e-9, 1e9, 1.0])
    assert not np.all(np.isfinite(record_losses(estimator, neighbour)))  # the premise
    seen = []
    for data in (benign, neighbour):
        caplog.clear()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            private_score(estimator, data, epsilon=1.0, loss_bound=10.0, random_state=1)
        seen.append(([str(w.message) for w in caught], list(caplog.records)))
    assert seen == [([], []), ([], [])]
