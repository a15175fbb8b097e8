"""The SelectionEvent's epsilon against independent computations.

- dp-accounting's RDP accountant of ``RepeatAndSelectDpEvent`` (an independent
  implementation of Papernot & Steinke 2022) on the same orders;
- Theorem 2 written out here for a Gaussian run (r(a) = a / (2 z^2)) and converted here;
- the exact output law of the best of K draws of a small discrete epsilon-DP mechanism
  (through the probability generating function of K, in closed form), whose Renyi
  divergences must lie below the bound, while the best of a fixed k draws exceeds the
  bound of one run;
- the law of K sampled by ``sample_runs`` against its probability mass function.
"""

import math

import numpy as np
import pytest
from scipy import optimize, stats

from geomstats_dp.privacy import (
    GaussianEvent,
    PrivacyBudget,
    PureEvent,
    SelectionEvent,
    compose,
)
from geomstats_dp.privacy.renyi import ORDERS, event_rdp
from geomstats_dp.privacy.selection import law_gamma, law_mean, sample_runs
from tests.conftest import shifted

pytestmark = pytest.mark.backend_independent

SETTINGS = [(2.0, 10.0, 0.0), (1.0, 5.0, 1.0), (3.0, 20.0, 0.5), (2.0, 10.0, math.inf),
            (0.8, 3.0, 2.0)]


@pytest.mark.parametrize("z, mean, shape", SETTINGS)
def test_rdp_curve_matches_dp_accounting(z, mean, shape):
    dp_event = pytest.importorskip("dp_accounting.dp_event")
    from dp_accounting.rdp import rdp_privacy_accountant

    event = SelectionEvent(((GaussianEvent(z),),), (), mean, shape)
    accountant = rdp_privacy_accountant.RdpAccountant(orders=list(ORDERS))
    accountant.compose(dp_event.RepeatAndSelectDpEvent(dp_event.GaussianDpEvent(z), mean,
                                                      shape))
    np.testing.assert_allclose(event_rdp(event), accountant._rdp, rtol=1e-8)
    assert compose([event], 1e-5).epsilon == pytest.approx(accountant.get_epsilon(1e-5),
                                                          rel=1e-3)


def _gamma_of_mean(mean, shape):
    """gamma of D_{shape, gamma} with E[K] = mean, from the mean's closed form."""
    def expected(gamma):
        if shape == 0:
            return (1 - gamma) / (gamma * math.log(1 / gamma))
        return shape * (1 - gamma) / (gamma * (1 - gamma**shape))

    return optimize.brentq(lambda g: expected(g) - mean, 1e-12, 1 - 1e-12, xtol=1e-15)


@pytest.mark.parametrize("z, mean, shape", [s for s in SETTINGS if s[2] != math.inf])
def test_epsilon_matches_theorem_2_written_out(z, mean, shape):
    delta = 1e-6
    orders = ORDERS
    run = orders / (2 * z**2)
    gamma = _gamma_of_mean(mean, shape)
    hat = min((1 - 1 / mu) * run[j] + math.log(1 / gamma) / mu for j, mu in enumerate(orders))
    bound = run + (1 + shape) * hat + math.log(mean) / (orders - 1)
    bound = np.array([bound[i:].min() for i in range(len(orders))])
    expected = min(bound[i] + math.log((a - 1) / a) - (math.log(delta) + math.log(a)) / (a - 1)
                   for i, a in enumerate(orders))
    event = SelectionEvent(((GaussianEvent(z),),), (), mean, shape)
    epsilon = compose([event], delta).epsilon
    assert expected - 1e-9 <= epsilon <= expected * (1 + 1e-2)


def _pgf(mean, shape):
    """E[s^K] of the law of K, in closed form."""
    if shape == math.inf:
        return lambda s: np.exp(mean * (s - 1))
    gamma = _gamma_of_mean(mean, shape)
    if shape == 0:
        return lambda s: np.log1p(-(1 - gamma) * s) / math.log(gamma)
    return lambda s: ((1 - (1 - gamma) * s) ** -shape - 1) / (gamma**-shape - 1)


def _best_of(probabilities, pgf):
    """Law of the largest of K draws (outputs ordered by score, the last is the best)."""
    cumulative = np.concatenate([[0.0], np.cumsum(probabilities)])
    return np.diff(pgf(np.minimum(cumulative, 1.0)))


def _renyi(p, q, order):
    """D_order(p || q) in logs (q > 0 everywhere here)."""
    terms = order * np.log(p) + (1 - order) * np.log(q)
    return float(np.logaddexp.reduce(terms)) / (order - 1)


def _neighbours(epsilon, m=6):
    """An epsilon-DP mechanism with m ordered outputs: the dataset pushes the best output up,
    the neighbour pushes it down (log-ratio of every output within epsilon)."""
    shift = np.linspace(-0.5, 0.5, m)
    p = np.exp(epsilon * shift)
    q = np.exp(-epsilon * shift)
    return p / p.sum(), q / q.sum()


@pytest.mark.parametrize("epsilon, mean, shape", [(0.5, 10.0, 0.0), (1.0, 5.0, 1.0),
                                                  (0.3, 20.0, 0.5), (0.5, 8.0, math.inf)])
def test_exact_output_law_within_the_bound(epsilon, mean, shape):
    p, q = _neighbours(epsilon)
    assert np.abs(np.log(p / q)).max() <= epsilon + 1e-12
    pgf = _pgf(mean, shape)
    best_p, best_q = _best_of(p, pgf), _best_of(q, pgf)
    bound = event_rdp(SelectionEvent(((PureEvent(epsilon),),), (), mean, shape))
    for index in (0, 3, 8, 18, 40):
        for first, second in ((best_p, best_q), (best_q, best_p)):
            assert _renyi(first, second, ORDERS[index]) <= bound[index] + 1e-12
    # the broken twin: the best of a fixed number of randomized responses, at a high order
    rr_p, rr_q = _neighbours(epsilon, m=2)
    fixed = int(mean)
    twin = _renyi(_best_of(rr_q, lambda s: s**fixed), _best_of(rr_p, lambda s: s**fixed),
                  ORDERS[40])
    assert twin > event_rdp(PureEvent(epsilon))[40]


@pytest.mark.parametrize("mean, shape", [(10.0, 0.0), (4.0, 1.0), (6.0, 0.5), (3.0, math.inf)])
def test_sampled_runs_follow_the_law(mean, shape):
    rng = np.random.default_rng(shifted(7))
    draws = np.array([sample_runs(mean, shape, rng) for _ in range(20000)])
    assert (draws >= (0 if shape == math.inf else 1)).all()
    standard_error = draws.std() / math.sqrt(len(draws))
    assert abs(draws.mean() - mean) < 5 * standard_error
    for k in (1, 2, 5):
        expected = _pmf(k, mean, shape)
        observed = np.mean(draws == k)
        assert abs(observed - expected) < 5 * math.sqrt(expected * (1 - expected) / len(draws))


def _pmf(k, mean, shape):
    """P[K = k]: Poisson, logarithmic, or a negative binomial conditioned on K >= 1."""
    if shape == math.inf:
        return stats.poisson(mean).pmf(k)
    gamma = _gamma_of_mean(mean, shape)
    if shape == 0:
        return (1 - gamma) ** k / (k * math.log(1 / gamma))
    return stats.nbinom.pmf(k, shape, gamma) / (1 - stats.nbinom.pmf(0, shape, gamma))


@pytest.mark.parametrize("mean, shape", [(1.5, 0.0), (10.0, 0.0), (10.0, 1.0), (7.0, 3.0)])
def test_gamma_gives_the_mean(mean, shape):
    assert law_mean(law_gamma(mean, shape), shape) == pytest.approx(mean, rel=1e-9)
    assert law_gamma(mean, shape) == pytest.approx(_gamma_of_mean(mean, shape), rel=1e-6)


def test_run_curve_is_the_largest_over_candidates_and_score():
    small, large = (GaussianEvent(4.0),), (GaussianEvent(1.0, n_steps=2),)
    score = (PureEvent(0.1),)
    mixed = SelectionEvent((small, large), score, 5.0)
    alone = SelectionEvent((large,), (), 5.0)
    np.testing.assert_allclose(event_rdp(mixed), event_rdp(alone))


def test_ledger_composes_selection_by_rdp():
    selection = SelectionEvent(((GaussianEvent(3.0),),), (PureEvent(0.2),), 8.0)
    refit = GaussianEvent(2.0, n_steps=10)
    both = compose([selection, refit], 1e-5)
    assert both.accountant == "rdp"
    orders = ORDERS
    total = event_rdp(selection) + 10 * orders / (2 * 2.0**2)
    by_hand = min(total + np.log1p(-1 / orders) - (math.log(1e-5) + np.log(orders)) / (orders - 1))
    assert by_hand - 1e-9 <= both.epsilon <= by_hand * (1 + 1e-2)
    assert compose([selection], 0.0).epsilon == math.inf
    with pytest.raises(ValueError, match="pld"):
        compose([selection], 1e-5, method="pld")
    budget = PrivacyBudget(both.epsilon * 1.001, 1e-5)
    budget.spend(selection, refit)
    assert budget.spent_epsilon == pytest.approx(both.epsilon)


@pytest.mark.parametrize("kwargs, error", [
    ({"candidates": (), "score": (), "mean": 2.0}, ValueError),
    ({"candidates": ((GaussianEvent(1.0),),), "score": (), "mean": 0.5}, ValueError),
    ({"candidates": ((GaussianEvent(1.0),),), "score": (), "mean": 2.0, "shape": -1.0},
     ValueError),
    ({"candidates": ((GaussianEvent(1.0, sampling_rate=0.1, sampling="poisson",
                                    adjacency="add_remove"),),), "score": (), "mean": 2.0},
     ValueError),
])
def test_selection_event_checks_its_fields(kwargs, error):
    with pytest.raises(error):
        SelectionEvent(**kwargs)
