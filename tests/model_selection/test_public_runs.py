"""The search's number of runs is public: its time cannot reveal the hidden K.

- every search makes k_max fits, whatever K (a spy on ``fit`` counts them, a spy on
  ``sample_runs`` records K);
- k_max and the truncation mass P[K > k_max] the accountant charges, against scipy's laws;
- the ledger's (epsilon, delta) stays valid once (1 + e^epsilon) P[K > k_max] is added.
"""

import math

import numpy as np
import pytest
from geomstats.geometry.hypersphere import Hypersphere
from scipy import stats

from geomstats_dp.learning import PrivateFrechetMean
from geomstats_dp.model_selection import PrivateGridSearchCV, best_of_runs
from geomstats_dp.model_selection.planning import PlanningBudget
from geomstats_dp.privacy import GaussianEvent, PrivacyBudget, SelectionEvent, compose
from geomstats_dp.privacy.renyi import ledger_epsilon
from geomstats_dp.privacy.selection import law_gamma, selection_truncation
from tests.optim.data import cloud

SPACE = Hypersphere(2)
GRID = {"step_size": [0.1, 0.5], "n_iter": [3]}


def _search(**kwargs):
    params = {"epsilon": 4.0, "delta": 1e-5, "loss_bound": 2.0, "refit": False,
              "budget": PrivacyBudget(4.0, 1e-5)}
    params.update(kwargs)
    return PrivateGridSearchCV(PrivateFrechetMean(SPACE, clip_norm=1.5), GRID, **params)


def _tail(mean, shape, runs):
    """P[K > runs] from scipy: Poisson, logarithmic, or negative binomial given K >= 1."""
    if shape == math.inf:
        return stats.poisson(mean).sf(runs)
    gamma = law_gamma(mean, shape)
    if shape == 0:
        return stats.logser(1 - gamma).sf(runs)
    return stats.nbinom(shape, gamma).sf(runs) / -math.expm1(shape * math.log(gamma))


def test_every_search_makes_the_public_number_of_fits(monkeypatch):
    """Seeds giving different K make the same number of (non-planning) fits: k_max."""
    fits, hidden = [], []
    fit = PrivateFrechetMean.fit

    def counted_fit(self, *args, **kwargs):
        result = fit(self, *args, **kwargs)
        if not isinstance(self.budget, PlanningBudget):
            fits[-1] += 1
        return result

    sample_runs = best_of_runs.sample_runs

    def recorded_runs(*args):
        hidden.append(sample_runs(*args))
        return hidden[-1]

    monkeypatch.setattr(PrivateFrechetMean, "fit", counted_fit)
    monkeypatch.setattr(best_of_runs, "sample_runs", recorded_runs)
    X = cloud(SPACE, 40, 0.5, 0)
    public = []
    for seed in range(6):
        fits.append(0)
        search = _search(random_state=seed).fit(X)
        public.append(getattr(search.events_[0], "max_runs", None))
    assert len(set(hidden)) > 1  # the seeds drew different K
    assert len(set(fits)) == 1
    assert fits == public and public[0] > max(hidden)


@pytest.mark.parametrize("shape", [math.inf, 0.0, 1.0, 3.0])
def test_truncation_mass_matches_scipy_and_is_charged(shape):
    """k_max is the smallest number with P[K > k_max] <= delta / (100 (1 + e^epsilon)),
    the event's truncation mass is scipy's, and the ledger's epsilon is valid at delta
    once (1 + e^epsilon) P[K > k_max] is set aside (scipy's mass)."""
    epsilon, delta = 4.0, 1e-5
    budget = PrivacyBudget(epsilon, delta)
    search = _search(runs=shape, mean_runs=3, budget=budget, random_state=0)
    search.fit(cloud(SPACE, 40, 0.5, 0))
    event = search.events_[0]
    runs, mean = event.max_runs, event.mean
    target = delta / (100 * (1 + math.exp(epsilon)))
    assert _tail(mean, shape, runs) <= target < _tail(mean, shape, runs - 1)
    tau = selection_truncation(event)
    assert tau == pytest.approx(_tail(mean, shape, runs), rel=1e-9)
    guarantee = compose(budget.events, delta)
    rdp_delta = delta - (1 + math.exp(guarantee.epsilon)) * _tail(mean, shape, runs)
    assert ledger_epsilon(budget.events, rdp_delta) <= guarantee.epsilon * (1 + 1e-12)
    assert guarantee.epsilon <= epsilon * (1 + 1e-9)


def test_a_small_public_number_of_runs_costs_delta():
    """k_max = 12 leaves a mass of 2.7e-4 above it (Poisson of mean 4): the guarantee is
    refused at delta = 1e-5 and charged at delta = 0.01, beyond the untruncated one."""
    run = (GaussianEvent(5.0),)
    event = SelectionEvent((run,), run, 4.0, math.inf, max_runs=12)
    untruncated = SelectionEvent((run,), run, 4.0, math.inf)
    tau = stats.poisson(4.0).sf(12)
    assert selection_truncation(event) == pytest.approx(tau, rel=1e-9)
    assert compose([event], 1e-5).epsilon == math.inf
    charged = compose([event], 0.01).epsilon
    assert compose([untruncated], 0.01).epsilon < charged < math.inf
    assert ledger_epsilon([event], 0.01 - (1 + math.exp(charged)) * tau) <= charged


def test_k_runs_without_a_public_number(monkeypatch):
    """``max_runs=None``: K fits, as before (the time then reveals K)."""
    fits = []
    fit = PrivateFrechetMean.fit

    def counted_fit(self, *args, **kwargs):
        result = fit(self, *args, **kwargs)
        if not isinstance(self.budget, PlanningBudget):
            fits.append(1)
        return result

    monkeypatch.setattr(PrivateFrechetMean, "fit", counted_fit)
    monkeypatch.setattr(best_of_runs, "sample_runs", lambda *args: 2)
    search = _search(max_runs=None, random_state=0).fit(cloud(SPACE, 40, 0.5, 0))
    assert len(fits) == 2 and search.events_[0].max_runs is None


@pytest.mark.parametrize("value, error", [(0, ValueError), (2.5, TypeError),
                                          ("all", TypeError), (1, ValueError)])
def test_bad_max_runs_raise_naming_it(value, error):
    with pytest.raises(error, match="max_runs"):
        _search(max_runs=value, random_state=0).fit(cloud(SPACE, 40, 0.5, 0))


def test_the_selection_is_among_the_first_k_runs(monkeypatch):
    """With K = 1 the released score is the first run's, whatever the later runs score."""
    scores = iter(np.linspace(1.0, 0.0, 1000))  # the first run has the worst loss
    monkeypatch.setattr(best_of_runs, "sample_runs", lambda *args: 1)
    monkeypatch.setattr("geomstats_dp.model_selection.splits.RecordSplit.noisy_loss",
                        lambda self, *args: next(scores))
    search = _search(random_state=0).fit(cloud(SPACE, 40, 0.5, 0))
    assert search.best_score_ == -1.0
