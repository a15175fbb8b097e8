"""``model_selection.best_of_runs``: the search's release as a frozen mechanism, alone."""

import dataclasses
import math

import pytest
from geomstats.geometry.hypersphere import Hypersphere

from geomstats_dp.learning import PrivateFrechetMean
from geomstats_dp.learning.mechanisms.base import Mechanism, run_release
from geomstats_dp.model_selection import best_of_runs
from geomstats_dp.model_selection.best_of_runs import BestOfRuns, candidate, same_cost
from geomstats_dp.privacy import (
    ApproxDPEvent,
    GaussianEvent,
    PrivacyBudget,
    PureEvent,
    SelectionEvent,
)

pytestmark = pytest.mark.backend_independent

SPACE = Hypersphere(2)
TEMPLATE = PrivateFrechetMean(SPACE, clip_norm=1.0)
CANDIDATES = ({"n_iter": 1}, {"n_iter": 2}, {"n_iter": 3})
SCORES = {1: -3.0, 2: -1.0, 3: -2.0}  # the noisy loss of each candidate (by its n_iter)


class FakeSplit:
    """Runs without data: a run's losses are its candidate's n_iter; its noisy loss is
    minus the score of the table above."""

    def __init__(self):
        self.runs = []

    def run(self, estimator):
        self.runs.append(estimator.n_iter)
        return estimator.n_iter

    def noisy_loss(self, losses, loss_bound, mechanism, event, rng):
        return -SCORES[losses]


def runs(k_max, mean=1.0):
    selection = SelectionEvent(((GaussianEvent(20.0, 1),),), (PureEvent(0.1),), mean,
                               math.inf, max_runs=k_max)
    return BestOfRuns(TEMPLATE, CANDIDATES, 1.0, 1e-5, 1.0, selection,
                      ((), (), ()), None)


def test_the_spec_is_a_frozen_mechanism_whose_event_is_the_selection():
    spec = runs(6)
    assert isinstance(spec, Mechanism) and spec.events() == (spec.selection,)
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.run_epsilon = 2.0


@pytest.mark.parametrize("hidden", [0, 2, 5])
def test_k_max_runs_are_made_and_the_best_of_the_first_k_released(monkeypatch, hidden):
    monkeypatch.setattr(best_of_runs, "sample_runs", lambda *args: hidden)
    monkeypatch.setattr(best_of_runs, "same_cost", lambda charged, planned: True)
    split, budget = FakeSplit(), PrivacyBudget(100.0, 0.5)
    fitted = run_release(runs(5), budget, split, None, random_state=0)
    assert len(split.runs) == 5  # k_max, whatever K
    if hidden == 0:
        assert (fitted["best_index_"], fitted["best_estimator_"]) == (0, None)
        assert math.isnan(fitted["best_score_"])
    else:
        first = split.runs[:hidden]
        assert fitted["best_score_"] == max(SCORES[n_iter] for n_iter in first)
        assert CANDIDATES[fitted["best_index_"]]["n_iter"] == max(first, key=SCORES.get)
    assert fitted["events_"] == (runs(5).selection,) == budget.events  # charged once


def test_a_run_that_charges_other_events_than_planned_is_refused():
    assert same_cost((GaussianEvent(2.0, 3),), (GaussianEvent(2.0, 3, label="planned"),))
    assert not same_cost((GaussianEvent(2.0, 3),), (GaussianEvent(2.0, 4),))
    assert not same_cost((ApproxDPEvent(1.0, 1e-6),), ())


def test_a_candidate_is_a_fresh_clone_with_its_settings():
    budget = PrivacyBudget(1.0, 1e-5)
    made = candidate(TEMPLATE, {"n_iter": 7}, 0.5, 1e-6, budget, 3, secure=False)
    assert made is not TEMPLATE and TEMPLATE.n_iter != 7
    assert (made.n_iter, made.epsilon, made.delta, made.budget, made.random_state) == (
        7, 0.5, 1e-6, budget, 3)
    secure = candidate(TEMPLATE, {}, None, None, None, 3, secure=True)
    assert secure.random_state is None and secure.epsilon == TEMPLATE.epsilon
