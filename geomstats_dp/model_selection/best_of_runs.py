"""The release of a private search: the best of a random number of runs, a frozen spec.

``BestOfRuns`` is the search's mechanism (``learning.mechanisms.base.Mechanism``), run by
``run_release`` (reserve, release, spend): K is drawn from its law and never published,
k_max runs are made (``max_runs``, public; K without it), each fits a uniformly random
candidate on the training part at the per-run epsilon and releases its private score on
the validation part, and the best of the first min(K, k_max) runs is released.
Adjacency, sensitivity and accountant: those of ``PrivateGridSearchCV`` (the whole search
is its ``SelectionEvent``, Papernot & Steinke 2022).
"""

import math
import sys
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.base import clone

from geomstats_dp.learning.mechanisms.base import Mechanism
from geomstats_dp.privacy import ApproxDPEvent, PrivacyBudget, PrivacyLeakWarning
from geomstats_dp.privacy.renyi import ledger_rdp
from geomstats_dp.privacy.selection import sample_runs
from geomstats_dp.privacy.stages import stage_group

# the stages' groups (``privacy.stages.stage_group``): "search run <k> training", ...
RUN_GROUP, TRAINING, VALIDATION = "search run", "training", "validation"


def candidate(template, params, epsilon, delta, budget, random_state, secure):
    """A fresh clone of ``template`` with the candidate's settings ``params``, charging
    ``budget``, fitted at ``epsilon`` and ``delta`` when ``epsilon`` is given.

    Parameters
    ----------
    template : estimator of geomstats_dp
    params : dict
    epsilon, delta : float or None
    budget : PrivacyBudget or None
    random_state : int or None
        None with ``secure`` (the estimator draws from the operating system).
    secure : bool

    Returns
    -------
    estimator : estimator of geomstats_dp
    """
    estimator = clone(template).set_params(
        **params, budget=budget, random_state=None if secure else random_state)
    if epsilon is not None:
        estimator.set_params(epsilon=epsilon, delta=delta)
    return estimator


@dataclass(frozen=True)
class BestOfRuns(Mechanism):
    """The best of K private runs of a search (module notes), from public quantities.

    Attributes
    ----------
    template : estimator of geomstats_dp
        The user's estimator; each run fits a clone of it (its parameters are public).
    candidates : tuple of dict
        The public candidate settings.
    run_epsilon, delta : float
        What each run's fit is calibrated to.
    loss_bound : float
        B, the bound the validation losses are clipped to.
    selection : SelectionEvent
        The whole search's event: its law of K, k_max, the runs' ledgers and the score's.
    charged : tuple of tuple
        Each candidate's planned events (a run that charges others is refused).
    score : GridScore or GaussianScore
        The private score's noise (``scores``).
    secure : bool
        Whether the runs' estimators draw from the operating system's entropy.
    """

    template: Any
    candidates: tuple
    run_epsilon: float
    delta: float
    loss_bound: float
    selection: Any
    charged: tuple
    score: Any
    secure: bool = False

    def events(self):
        """The search's one event, the ``SelectionEvent``."""
        return (self.selection,)

    def release(self, data, weights, rng):
        """Make the runs on the split ``data``; release the best of the first min(K, k_max).

        Every run draws, fits and scores alike, so the time of the search depends on
        k_max only. A run whose iterate fails numerically (LinAlgError, a function of its
        noisy iterates) scores -inf. (0, None, nan) when no run succeeds (K = 0 under the
        Poisson law): the first candidate, a public fallback.

        Parameters
        ----------
        data : RecordSplit or AgentSplit
            The seeded split of the records (``splits``).
        weights : None
            Unused.
        rng : numpy.random.Generator
            Draws K, the runs' candidates and seeds, and the scores' noise.

        Returns
        -------
        fitted : dict
            ``best_index_``, ``best_estimator_`` (None when no run succeeded) and
            ``best_score_``.
        """
        best = (0, None, -math.inf)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            hidden = sample_runs(self.selection.mean, self.selection.shape, rng)
            n_runs = hidden if self.selection.max_runs is None else self.selection.max_runs
            for run in range(n_runs):
                found = self._run(run, data, rng)
                if found is not None and run < hidden and found[2] > best[2]:
                    best = found
        _reemit_leaks(caught)
        index, estimator, score = best if best[1] is not None else (0, None, math.nan)
        return {"best_index_": index, "best_estimator_": estimator, "best_score_": score}

    def _run(self, run, splits, rng):
        """(candidate index, fitted estimator, score) of run ``run``; None if it failed."""
        index = int(rng.integers(len(self.candidates)))
        ledger = PrivacyBudget(sys.float_info.max, self.delta)
        estimator = candidate(self.template, self.candidates[index], self.run_epsilon,
                              self.delta, ledger, int(rng.integers(2**31 - 1)), self.secure)
        try:
            with stage_group(f"{RUN_GROUP} {run} {TRAINING}"):
                losses = splits.run(estimator)
        except np.linalg.LinAlgError:  # the run's iterate failed: the worst score
            return None
        if not same_cost(ledger.events, self.charged[index]):
            raise RuntimeError(
                f"candidate {index} charged other events than it planned; its "
                "estimator does not check its whole release before reading data"
            )
        with stage_group(f"{RUN_GROUP} {run} {VALIDATION}"):
            score = -splits.noisy_loss(losses, self.loss_bound, self.score,
                                       self.selection.score[0], rng)
        return index, estimator, score


def same_cost(charged, planned):
    """Whether two ledgers charge the same: the same (epsilon, delta) events, and the same
    RDP curve of the others (labels and stated scales aside)."""
    def split(events):
        approx = sorted((e.epsilon, e.delta) for e in events if isinstance(e, ApproxDPEvent))
        return (np.reshape(approx, (-1, 2)),
                ledger_rdp([e for e in events if not isinstance(e, ApproxDPEvent)]))

    (charged_approx, charged_rdp), (planned_approx, planned_rdp) = split(charged), split(planned)
    return (charged_approx.shape == planned_approx.shape
            and np.allclose(charged_approx, planned_approx, rtol=1e-9, atol=0.0)
            and np.allclose(charged_rdp, planned_rdp, rtol=1e-9, atol=0.0))


def _reemit_leaks(caught):
    """Show each distinct PrivacyLeakWarning of the runs once; others stay hidden.

    How many warnings the runs emitted would reveal K, so only a leak (which voids the
    guarantee anyway) is reported, once per message.
    """
    messages = {str(m.message) for m in caught if issubclass(m.category, PrivacyLeakWarning)}
    for message in sorted(messages):
        warnings.warn(message, PrivacyLeakWarning, stacklevel=4)
