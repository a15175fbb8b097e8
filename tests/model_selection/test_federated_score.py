"""private_score of a fitted PriRFed on a federation: the agents' noise, neighbours, refusal,
and the error shrinking with the validation size.

The law of the agents' noise (drawn in numpy by the score classes, 500 scores) is
checked once, on numpy; the other tests run the score's backend path on every backend.
"""

import math
import warnings

import numpy as np
import pytest
from geomstats.geometry.euclidean import Euclidean
from scipy import optimize, stats

from geomstats_dp._backend import to_numpy
from geomstats_dp.federated import PriRFed
from geomstats_dp.model_selection import private_score
from geomstats_dp.model_selection import splits as splits_module
from geomstats_dp.model_selection.scores import GaussianScore, LaplaceScore
from geomstats_dp.optim import SquaredDistanceLoss
from geomstats_dp.privacy import BudgetExceededError, PrivacyBudget
from tests.conftest import shifted
from tests.model_selection.score_grid import grid, laplace_sensitivity

SPACE = Euclidean(2)
CENTRE = np.array([3.0, 3.0])
SIZES = (10, 14, 18)  # validation records per agent: n_val = 42
BOUND = 2.0


def federation(sizes=SIZES, seed=0):
    rng = np.random.default_rng(shifted(seed))
    return [CENTRE + 0.5 * rng.standard_normal((size, 2)) for size in sizes]


@pytest.fixture(scope="module")
def fitted():
    return PriRFed(SPACE, epsilon=20.0, clip_norm=5.0, random_state=shifted(0),
                   budget=PrivacyBudget(20.0, 1e-5)).fit(federation((60, 60, 60), seed=9))


def clipped_risk(estimator, agents):
    """The clipped mean of d^2 / 2 to the release over every agent's records."""
    estimate = to_numpy(estimator.estimate_)
    losses = np.concatenate([0.5 * ((records - estimate) ** 2).sum(axis=1)
                             for records in agents])
    return np.clip(losses, 0.0, BOUND).mean()


def recorded_draws(monkeypatch, mechanism_class):
    """(event, draw) of every noise draw of ``mechanism_class`` from now on."""
    drawn = []
    original = mechanism_class.noise

    def noise(mechanism, event, *args):
        value = original(mechanism, event, *args)
        drawn.append((event, value))
        return value

    monkeypatch.setattr(mechanism_class, "noise", noise)
    return drawn


def _gaussian_delta(epsilon, mu):
    """Balle & Wang (2018): the delta of a mu-GDP mechanism at epsilon."""
    return (stats.norm.cdf(-epsilon / mu + mu / 2)
            - math.exp(epsilon) * stats.norm.cdf(-epsilon / mu - mu / 2))


@pytest.mark.backend_independent
@pytest.mark.parametrize("method", ["laplace", "gaussian"])
def test_every_agent_draws_the_calibrated_noise(fitted, monkeypatch, method):
    """500 scores, three agents' draws each. The std of the 1,500 draws pooled is within 5
    standard errors of the calibrated one (9% Gaussian, 14% Laplace), and each agent's
    within 5 of its 500 draws (16%, 25%): this refutes a std off by sqrt(2) (a Gaussian
    variance calibrated as a std, a Laplace scale taken for its std) and an agent drawing
    at half or twice the scale."""
    epsilon, delta, n_draws = 0.7, 1e-5, 500
    n_val = sum(SIZES)
    sensitivity = BOUND / n_val
    if method == "laplace":
        drawn = recorded_draws(monkeypatch, LaplaceScore)
        sensitivity = laplace_sensitivity(sensitivity, epsilon)  # the grid's, adjusted
        std = math.sqrt(2) * sensitivity / epsilon
    else:
        drawn = recorded_draws(monkeypatch, GaussianScore)
        z = optimize.brentq(lambda z: _gaussian_delta(epsilon, 1 / z) - delta, 0.1, 100)
        std = z * sensitivity
    agents = federation()
    centre = -clipped_risk(fitted, agents)
    rng = np.random.default_rng(shifted(4))
    budget = PrivacyBudget(1e6, 0.5)
    scores = np.array([private_score(fitted, agents, epsilon=epsilon, delta=delta,
                                     loss_bound=BOUND, method=method, budget=budget,
                                     random_state=rng) for _ in range(n_draws)])
    assert len(drawn) == len(SIZES) * n_draws  # one draw per agent and score
    event = drawn[0][0]
    assert event.sensitivity == pytest.approx(sensitivity)
    if method == "laplace":
        assert event.noise_scale == pytest.approx(sensitivity / epsilon)
    else:
        assert event.noise_std == pytest.approx(std, rel=1e-4)
    draws = np.array([value for _, value in drawn]).reshape(n_draws, len(SIZES))
    # the score is minus the clipped risk plus the agents' draws, nothing else (each
    # agent's share rounded to the grid by the discrete Laplace: half a step each)
    rounding = len(SIZES) * grid(BOUND / n_val, BOUND / (n_val * epsilon))[0] / 2
    np.testing.assert_allclose(scores, centre - draws.sum(axis=1),
                               atol=rounding if method == "laplace" else 1e-9)
    # the draws have the calibrated standard deviation: 5 standard errors of a sample
    # std, sqrt((2 + excess kurtosis) / (4 n)), the kurtosis 0 (Gaussian) or 3
    kurtosis = 0 if method == "gaussian" else 3
    for std_found, n in ((draws.std(), draws.size), (draws.std(axis=0), n_draws)):
        np.testing.assert_allclose(std_found / std, 1.0,
                                   atol=5 * math.sqrt((2 + kurtosis) / (4 * n)))
    assert budget.events == (event,) * n_draws  # one event of the score's sensitivity


def test_neighbouring_federations_differ_only_in_the_score(fitted):
    agents = federation()
    neighbour = [records.copy() for records in agents]
    neighbour[1][3] = [40.0, -40.0]  # its loss is clipped to B
    released, ledgers = [], []
    for data in (agents, neighbour):
        budget = PrivacyBudget(1.0, 1e-5)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            released.append(private_score(fitted, data, epsilon=0.5, loss_bound=BOUND,
                                          budget=budget, random_state=shifted(7)))
        ledgers.append((budget.events, [str(w.message) for w in caught]))
    assert ledgers[0] == ledgers[1]
    assert released[0] != released[1]
    assert abs(released[0] - released[1]) <= BOUND / sum(SIZES) + 1e-12


def test_refused_before_any_value_is_read(fitted, monkeypatch):
    calls = []
    for name in ("check_data", "values", "gradients"):
        monkeypatch.setattr(SquaredDistanceLoss, name,
                            lambda *args, name=name: calls.append(name))
    monkeypatch.setattr(splits_module, "record_losses", lambda *args: calls.append("losses"))
    budget = PrivacyBudget(1.0, 1e-5)
    budget.spend(0.9)
    corrupted = federation()
    corrupted[2][0, 0] = np.nan
    with pytest.raises(BudgetExceededError):
        private_score(fitted, corrupted, epsilon=0.5, loss_bound=BOUND, budget=budget)
    assert calls == [] and len(budget.events) == 1


def test_error_shrinks_with_the_validation_size(fitted):
    """Records N(c, 0.25 I): the risk at the release r is (|c - r|^2 + 0.5) / 2 exactly
    (clipping at B = 2 changes it by less than 1e-3). At 10 records per agent the noise
    (std sqrt(3 * 2) B / (30 epsilon), about 0.16) dominates; at 1,000, a hundred times
    smaller, with the sampling error (about 0.005)."""
    estimate = to_numpy(fitted.estimate_)
    risk = (np.sum((CENTRE - estimate) ** 2) + 0.5) / 2
    errors = {}
    for size in (10, 1000):
        errors[size] = np.mean([
            abs(private_score(fitted, federation((size,) * 3, seed=seed), epsilon=1.0,
                              loss_bound=BOUND, budget=PrivacyBudget(1.0, 1e-5),
                              random_state=shifted(seed)) + risk)
            for seed in range(20)])
    assert errors[1000] < 0.2 * errors[10]
    assert errors[1000] < 0.02


@pytest.mark.parametrize("X, y, error, match", [
    (np.zeros((4, 2)), None, TypeError, "list of the agents"),
    ([], None, TypeError, "list of the agents"),
    ([np.zeros((3, 2)), np.zeros((0, 2))], None, ValueError, r"X\[1\] \(agent 1\)"),
    ([np.zeros((3, 2))], np.zeros(3), ValueError, "y must be None"),
])
def test_bad_federations_raise_naming_them(fitted, X, y, error, match):
    with pytest.raises(error, match=match):
        private_score(fitted, X, y, epsilon=1.0, loss_bound=BOUND,
                      budget=PrivacyBudget(1.0, 1e-5))
