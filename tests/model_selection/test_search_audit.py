"""Audit of the private search: the honest search is not refuted at the epsilon of its
SelectionEvent; a broken twin that always makes k runs and publishes the best is refuted at
the epsilon of one run (the cost it would claim without the random number of runs).

One candidate (a one-step DP-RGD mean on R^1 clipped at 0.01: it stays near 0), twelve
records, ten of them in the validation part; the release audited is ``best_score_``. The neighbours differ in one record
(0 or 10: loss about 0 or the bound B, a shift of the whole sensitivity B / 10 when it falls
in the validation part); the best of k noisy scores has a lower tail whose ratio between
the neighbours grows like e^(k epsilon_run). The per-run calibration depends on public
quantities only (identical in every audited run), so it is computed once. The searches
make K runs (``max_runs=None``): a public number of runs changes the output law by at most
P[K > k_max] and would multiply the audit's runs by k_max / E[K].

Size: 400 runs per dataset (120 calibrate the event, 280 evaluate it), at confidence 0.95.
Under seed shifts 0 to 3 the twin's lower bound was 2.09 to 3.16 against the one-run
epsilon 1.45 it refutes, and the honest search's 0.44 to 0.94 against its claim 3.5.
"""

import warnings

import numpy as np
import pytest
from geomstats.geometry.euclidean import Euclidean

from geomstats_dp.learning import PrivateFrechetMean
from geomstats_dp.model_selection import PrivateGridSearchCV, best_of_runs
from geomstats_dp.model_selection import _search as search_module
from geomstats_dp.privacy import PrivacyBudget, compose
from geomstats_dp.testing._audit import audit_release
from tests.conftest import BACKEND, shifted

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(BACKEND != "numpy", reason="audits run thousands of fits: numpy only"),
]

EPSILON, DELTA, N_RUNS, K = 3.5, 1e-3, 400, 4
DATASET = [[0.0]] * 12
NEIGHBOUR = [[0.0]] * 11 + [[10.0]]
AUDIT = {"delta": DELTA, "n_runs": N_RUNS, "confidence": 0.95,
         "calibration_fraction": 0.3}


def _search(seed):
    estimator = PrivateFrechetMean(Euclidean(1), clip_norm=0.01, n_iter=1, step_size=1.0,
                                   init_point=np.zeros(1))
    return PrivateGridSearchCV(estimator, {"n_iter": [1]}, epsilon=EPSILON, delta=DELTA,
                               loss_bound=0.5, runs="logarithmic", mean_runs=K, refit=False,
                               validation_fraction=0.8, budget=PrivacyBudget(EPSILON, DELTA),
                               max_runs=None, random_state=seed)


def _fit(data, seed):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.array([_search(seed).fit(np.asarray(data)).best_score_])


def test_search_audit(monkeypatch):
    reference = _search(0).fit(np.asarray(DATASET))
    run_epsilon, selection = reference.run_epsilon_, reference.events_[0]
    monkeypatch.setattr(search_module, "largest_epsilon", lambda *args: run_epsilon)
    honest = audit_release(_fit, DATASET, NEIGHBOUR, random_state=shifted(0), **AUDIT)
    # one run: a fit and a score on disjoint parts, the larger of the two
    one_run = max(compose(events, DELTA).epsilon
                  for events in (selection.candidates[0], selection.score))
    monkeypatch.setattr(best_of_runs, "sample_runs", lambda *args: K)
    broken = audit_release(_fit, DATASET, NEIGHBOUR, random_state=shifted(0), **AUDIT)
    assert compose([selection], DELTA).epsilon <= EPSILON * (1 + 1e-9)
    assert not honest.refutes(EPSILON), honest
    assert broken.refutes(one_run), (broken, one_run)
