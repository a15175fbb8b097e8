"""The private search: the best of a random number of private runs, one ledger event.

fit(X, y): check parameters -> candidates (public) -> a seeded split of the data into
training and validation parts (public; the estimator's split protocol, ``splits``) -> each
candidate's planned events at a trial epsilon (``planning``: nothing read) -> the largest
per-run epsilon whose SelectionEvent
fits the search's share, and the refit's epsilon -> budget.check -> every record checked
as the estimator's fit checks it (an invalid one is refused wherever the split puts it;
before the planning for an estimator whose planning reads data) -> K drawn from its law
and never published -> k_max runs (``max_runs``, public), the best of the first min(K,
k_max) kept (``best_of_runs.BestOfRuns`` through ``run_release``: the SelectionEvent
reserved, then spent) -> refit (its own events).
"""

import contextlib
import math
import warnings
from numbers import Integral, Real
from typing import ClassVar

import numpy as np
from sklearn.base import MetaEstimatorMixin, clone
from sklearn.utils._param_validation import HasMethods, Interval, Options, StrOptions
from sklearn.utils.metaestimators import available_if

from geomstats_dp._backend import get_rng
from geomstats_dp.learning import PrivateEstimator
from geomstats_dp.learning.mechanisms.base import run_release
from geomstats_dp.model_selection import best_of_runs
from geomstats_dp.model_selection.calibration import largest_epsilon
from geomstats_dp.model_selection.planning import planned_events
from geomstats_dp.model_selection.scores import SCORE_METHODS, score_mechanism
from geomstats_dp.model_selection.splits import split_class
from geomstats_dp.model_selection.validation_losses import default_loss_bound
from geomstats_dp.privacy import ApproxDPEvent, PrivacyBudget, SelectionEvent, compose
from geomstats_dp.privacy.selection import max_runs

RUN_LAWS = {"logarithmic": 0.0, "geometric": 1.0, "poisson": math.inf}
# default E[K]: a given candidate is never tried with probability e^-2 under the Poisson law
RUNS_PER_CANDIDATE = 2
# the most candidates a search takes: each is planned at every step of the calibration
MAX_CANDIDATES = 1000
# max_runs="auto": P[K > k_max] <= delta / (TRUNCATION_SHARE (1 + e^epsilon)), so that the
# accountant's (1 + e^epsilon) P[K > k_max] is at most 1% of delta
TRUNCATION_SHARE = 100
RESERVED = ("epsilon", "delta", "budget", "random_state", "secure")
SEARCH_FITTED = ("best_index_", "best_params_", "best_score_", "best_estimator_",
                 "cv_results_", "run_epsilon_", "refit_epsilon_", "events_", "budget_",
                 "n_candidates_", "loss_bound_")


def _delegate(name):
    """``available_if`` check: the fitted best estimator has method ``name``."""
    return lambda search: hasattr(search.best_estimator_, name)


class BasePrivateSearchCV(MetaEstimatorMixin, PrivateEstimator):
    """Common core of PrivateGridSearchCV and PrivateRandomizedSearchCV.

    Subclasses define ``_candidates(rng) -> list of dict`` (public settings).
    """

    _FITTED = SEARCH_FITTED
    _parameter_constraints: ClassVar[dict] = {
        "estimator": [HasMethods(["fit", "get_params"])],
        "epsilon": [Interval(Real, 0, math.inf, closed="neither")],
        "delta": [Interval(Real, 0, 1, closed="neither")],
        "loss_bound": [Interval(Real, 0, math.inf, closed="neither"), None],
        "runs": [StrOptions(set(RUN_LAWS)), Interval(Real, 0, None, closed="left"),
                 Options(Real, {math.inf})],  # a shape; inf is the Poisson law
        "mean_runs": [Interval(Real, 1, math.inf, closed="left"), None],
        "validation_fraction": [Interval(Real, 0, 1, closed="neither")],
        "refit": ["boolean"],
        "refit_fraction": [Interval(Real, 0, 1, closed="neither")],
        "score_method": [StrOptions(set(SCORE_METHODS))],
        "max_runs": [StrOptions({"auto"}), Interval(Integral, 1, None, closed="left"), None],
        "budget": [PrivacyBudget, None],
        "random_state": [Interval(Integral, 0, None, closed="left"), np.random.Generator,
                         None],
    }

    def __init__(self, estimator, *, epsilon=1.0, delta=1e-5, loss_bound=None,
                 runs="poisson", mean_runs=None, validation_fraction=0.25, refit=True,
                 refit_fraction=0.5, score_method="laplace", max_runs="auto", budget=None,
                 random_state=None):
        self.estimator = estimator
        self.epsilon = epsilon
        self.delta = delta
        self.loss_bound = loss_bound
        self.runs = runs
        self.mean_runs = mean_runs
        self.validation_fraction = validation_fraction
        self.refit = refit
        self.refit_fraction = refit_fraction
        self.score_method = score_method
        self.max_runs = max_runs
        self.budget = budget
        self.random_state = random_state
        self._remember_budget()

    # -- public checks ------------------------------------------------------------------

    def _check_params(self):
        """The rules that join parameters (each parameter alone is checked by
        ``_parameter_constraints``); return the law's shape."""
        if self._loss_bound() is None:
            raise ValueError(
                "loss_bound must be a public bound B on the per-record validation loss "
                "(the private score clips to [0, B]); it is never inferred from the data, "
                f"and {type(self.estimator).__name__}'s space and loss give none"
            )
        params = self.estimator.get_params(deep=False)
        for name in ("epsilon", "delta", "budget", "random_state"):
            if name not in params:
                raise TypeError(
                    f"estimator must be an estimator of geomstats_dp with a {name!r} "
                    f"parameter, got {type(self.estimator).__name__}"
                )
        if isinstance(self.runs, str):
            return RUN_LAWS[self.runs]
        return float(self.runs)

    def _loss_bound(self):
        """``loss_bound``, else the bound the space gives (``default_loss_bound``)."""
        if self.loss_bound is not None:
            return self.loss_bound
        return default_loss_bound(self.estimator)

    def _public_runs(self, mean, shape):
        """k_max, the public number of runs of every search (None: K runs, module notes
        of ``search``)."""
        if self.max_runs is None:
            return None
        if isinstance(self.max_runs, str) and self.max_runs == "auto":
            tail = self.delta / (TRUNCATION_SHARE * (1 + math.exp(min(self.epsilon, 700.0))))
            return max_runs(mean, shape, tail)
        runs = int(self.max_runs)
        if runs < mean:
            raise ValueError(
                f"max_runs must be None, 'auto' or an integer >= the mean number of runs "
                f"({mean:g}), got {runs}"
            )
        return runs

    def _checked_candidates(self, rng):
        candidates = [dict(candidate) for candidate in self._candidates(rng)]
        if not candidates:
            raise ValueError("the search has no candidate")
        names = self.estimator.get_params(deep=False)
        for index, candidate in enumerate(candidates):
            for name in candidate:
                if name in RESERVED:
                    raise ValueError(
                        f"candidate {index} sets {name!r}, which the search sets itself "
                        f"({', '.join(RESERVED)} are not searched)"
                    )
                if name not in names:
                    raise ValueError(
                        f"candidate {index} sets {name!r}, not a parameter of "
                        f"{type(self.estimator).__name__}"
                    )
        return candidates

    # -- fit ----------------------------------------------------------------------------

    def fit(self, X, y=None):
        """Choose a candidate privately; refit it on all data if ``refit``.

        Parameters
        ----------
        X : array-like, shape=[n_samples, ...]; or list of array-like for PriRFed
            The records (n_samples public; the training part needs >= 2); for
            ``PriRFed``, the agents' records, each agent's split in the same way
            (``federated.search_split``).
        y : array-like, shape=[n_samples, ...], optional
            Targets, for estimators fitted on (X, y).

        Returns
        -------
        self
        """
        self._validate_params()
        budget = self._start_fit(self.epsilon, self.delta)
        shape = self._check_params()
        rng = get_rng(self.random_state, secure=self._secure)
        candidates = self._checked_candidates(rng)
        if getattr(self.estimator, "_planning_reads_data", False):
            self._check_data(X, y)  # planning it fits on the training part: check first
        splits = split_class(self.estimator)(X, y, self.validation_fraction, rng)
        refit_seed = int(rng.integers(2**31 - 1))  # drawn before K: it does not depend on it
        mean = float(self.mean_runs or RUNS_PER_CANDIDATE * len(candidates))
        law = (mean, shape, self._public_runs(mean, shape))
        mechanism = score_mechanism(self.score_method, secure=self._secure)
        with _public_warnings():
            run_epsilon, (selection, charged) = self._calibrate_search(
                candidates, splits, mechanism, law)
            refit_epsilon, refit_delta, refit_events = self._calibrate_refit(
                candidates, splits, selection)
        budget.check(selection, *refit_events)  # the refit's room too, before any value
        self._check_data(X, y)
        runs = best_of_runs.BestOfRuns(self.estimator, tuple(candidates), run_epsilon,
                                       self.delta, self._loss_bound(), selection,
                                       tuple(charged), mechanism, self._secure)
        best = run_release(runs, budget, splits, None, random_state=rng)
        self._set_fitted(candidates, best, run_epsilon, budget)
        self.refit_epsilon_ = refit_epsilon
        if self.refit:
            self.best_estimator_ = self._refit(candidates[self.best_index_], splits,
                                               (refit_epsilon, refit_delta), budget,
                                               refit_seed)
            self.events_ += getattr(self.best_estimator_, "events_", ())  # SP: none
        return self

    def _check_data(self, X, y):
        """Check every record of (X, y) as the estimator's fit does, before any run or
        charge: an invalid record raises the same error (its index in X) wherever the
        split puts it."""
        check = getattr(clone(self.estimator), "_check_data", None)
        if check is not None:
            check(X, y) if y is not None else check(X)

    @property
    def _secure(self):
        """Whether the estimator draws from the operating system's entropy."""
        return bool(self.estimator.get_params(deep=False).get("secure", False))

    def _candidate(self, params, epsilon, budget, random_state, delta=None):
        """A fresh estimator with the candidate's settings, fitted at ``epsilon`` and
        ``delta`` (default the search's)."""
        return best_of_runs.candidate(self.estimator, params, epsilon,
                                      self.delta if delta is None else delta, budget,
                                      random_state, self._secure)

    def _selection(self, candidates, splits, mechanism, law, epsilon):
        """(SelectionEvent, each candidate's charged events) of runs at ``epsilon``; ``law``
        is (E[K], shape, k_max).

        The selection's ledgers are the runs' RDP ledgers (``splits.run_cost``: one per
        candidate for a record split, one per agent plan for PriRFed); nothing is read.
        """
        costs = [splits.run_cost(self._candidate(params, epsilon, None, None))
                 for params in candidates]
        score = mechanism.events(epsilon, self.delta,
                                 self._loss_bound() / splits.n_validation,
                                 f"{type(self).__name__}: private score")
        ledgers = tuple(ledger for _, run_ledgers in costs for ledger in run_ledgers)
        mean, shape, runs = law
        selection = SelectionEvent(ledgers, score, mean, shape,
                                   label=f"{type(self).__name__}: best of K runs",
                                   max_runs=runs)
        return selection, [charged for charged, _ in costs]

    def _calibrate_search(self, candidates, splits, mechanism, law):
        """The per-run epsilon, and the SelectionEvent and charged events at it, that fit
        the search's share."""
        target = self.epsilon * (1 - self.refit_fraction if self.refit else 1.0)

        def cost(epsilon):
            event, _ = self._selection(candidates, splits, mechanism, law, epsilon)
            return compose([event], self.delta).epsilon

        epsilon = largest_epsilon(cost, target, "search")
        return epsilon, self._selection(candidates, splits, mechanism, law, epsilon)

    def _calibrate_refit(self, candidates, splits, selection):
        """Refit epsilon (one for every candidate), delta, and the costliest candidate's
        events.

        A refit that charges an (epsilon, delta) event (``ApproxDPEvent``: PriRFed) states
        its own delta, which must leave the selection a share: it is fitted at
        ``refit_fraction`` delta; any other refit at the search's delta. (None, None, ())
        when the refit is off or the estimator's fit releases nothing.
        """
        if not self.refit:
            return None, None, ()

        def refits(epsilon, delta):
            return [
                planned_events(splits.fit_all,
                               self._candidate(params, epsilon, None, None, delta))
                for params in candidates
            ]

        planned = refits(self.epsilon, self.delta)
        if not any(planned):
            return None, None, ()
        approx = any(isinstance(event, ApproxDPEvent) for events in planned for event in events)
        delta = self.refit_fraction * self.delta if approx else self.delta

        def cost(epsilon):
            return max(compose((selection, *events), self.delta).epsilon
                       for events in refits(epsilon, delta))

        epsilon = largest_epsilon(cost, self.epsilon, "refit")
        costliest = max(refits(epsilon, delta),
                        key=lambda events: compose((selection, *events), self.delta).epsilon)
        return epsilon, delta, costliest

    def _set_fitted(self, candidates, best, run_epsilon, budget):
        """The fitted attributes from ``best``, the search's release (``BestOfRuns``)."""
        index, estimator, score = (best["best_index_"], best["best_estimator_"],
                                   best["best_score_"])
        if estimator is not None:  # the user's settings; its release is in the selection
            estimator.set_params(random_state=self.estimator.random_state,
                                 budget=self.estimator.budget)
            estimator.budget_ = budget
        released = np.full(len(candidates), np.nan)
        released[index] = score
        self.best_index_ = index
        self.best_params_ = dict(candidates[index])
        self.best_score_ = score
        self.best_estimator_ = estimator
        self.cv_results_ = {
            "params": [dict(candidate) for candidate in candidates],
            "selected": np.arange(len(candidates)) == index,
            "released_score": released,
        }
        self.run_epsilon_ = run_epsilon
        self.loss_bound_ = self._loss_bound()
        self.n_candidates_ = len(candidates)
        self.events_ = best["events_"]
        self.budget_ = budget

    def _refit(self, params, splits, guarantee, budget, seed):
        """Fit the chosen candidate on all data at ``guarantee`` (epsilon, delta); seeded
        by the estimator's random_state, else by the search's."""
        random_state = self.estimator.random_state
        estimator = self._candidate(params, guarantee[0], budget,
                                    seed if random_state is None else random_state,
                                    guarantee[1])
        splits.fit_all(estimator)
        estimator.set_params(random_state=random_state)
        return estimator

    @property
    def best_loss_(self):
        """The released noisy mean validation loss of the chosen candidate, -best_score_
        (lower is better; NaN where the search returned its first candidate untried)."""
        return -self.best_score_

    # -- delegation to the chosen estimator ---------------------------------------------

    @available_if(_delegate("predict"))
    def predict(self, X):
        """``best_estimator_.predict(X)``."""
        return self.best_estimator_.predict(X)

    @available_if(_delegate("transform"))
    def transform(self, X):
        """``best_estimator_.transform(X)``."""
        return self.best_estimator_.transform(X)


@contextlib.contextmanager
def _public_warnings():
    """Show each distinct warning of the planning (public quantities only) once."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    seen = set()
    for message in caught:
        key = (message.category, str(message.message))
        if key not in seen:
            seen.add(key)
            warnings.warn(message.message, message.category, stacklevel=4)
