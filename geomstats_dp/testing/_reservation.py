"""A fit that fails inside its release gives its reservation back; the budget is checked
before the release starts."""

import threading

import numpy as np
from sklearn.base import clone

from geomstats_dp.privacy import BudgetExceededError, PrivacyBudget
from geomstats_dp.privacy.stages import observe_stages
from geomstats_dp.testing._observables import fit_data, fresh_budget

FAIL_AT = 1  # the index of the stage (or random draw) that fails: the second
DRAWS = ("random", "standard_normal", "normal", "laplace", "uniform", "integers",
         "choice", "permutation", "exponential", "standard_exponential", "gumbel",
         "geometric", "binomial", "shuffle", "permuted")


class ReleaseFailure(RuntimeError):
    """Raised inside a release by ``check_failed_release_cancels``."""


class _FailingGenerator(np.random.Generator):
    """A generator whose ``FAIL_AT``-th draw raises ReleaseFailure (a fit that reports no
    stage is made to fail this way)."""

    def __init__(self, seed):
        super().__init__(np.random.PCG64(seed))
        self.draws = 0


def _failing(name):
    def draw(self, *args, **kwargs):
        self.draws += 1
        if self.draws > FAIL_AT:
            raise ReleaseFailure(f"draw {self.draws} of the release failed")
        return getattr(np.random.Generator, name)(self, *args, **kwargs)

    return draw


for _name in DRAWS:
    setattr(_FailingGenerator, _name, _failing(_name))


class _StageCounter:
    """Counts the stages of a fit; raises ReleaseFailure at stage ``fail_at``."""

    def __init__(self, fail_at=None):
        self.fail_at = fail_at
        self.count = 0

    def __call__(self, stage):
        self.count += 1
        if self.fail_at is not None and self.count > self.fail_at:
            raise ReleaseFailure(f"stage {stage.label!r} failed")
        return stage.release()


def _in_other_thread(function):
    """Run ``function()`` in another thread; return its exception, or None."""
    outcome = []

    def run():
        try:
            function()
        except Exception as error:  # noqa: BLE001 - reported to the caller
            outcome.append(error)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    return outcome[0] if outcome else None


def _fitted_names(estimator):
    return [name for name in vars(estimator) if name.endswith("_")
            and not name.startswith("_")]


def _check_budget_first(estimator, X, y, epsilon, delta):
    """A budget too small for the fit: BudgetExceededError before any stage runs."""
    fitted, counter = clone(estimator), _StageCounter()
    small = PrivacyBudget(epsilon / 10, delta)
    fitted.set_params(budget=small, random_state=0)
    try:
        with observe_stages(counter):
            fit_data(fitted, X, y)
    except BudgetExceededError:
        pass
    else:
        raise AssertionError("check_failed_release_cancels: a fit costing "
                             f"{epsilon:g} ran on a budget of {epsilon / 10:g}")
    if counter.count or small.spent_epsilon or _fitted_names(fitted):
        raise AssertionError("check_failed_release_cancels: a fit refused by its budget "
                             f"ran {counter.count} stages, charged "
                             f"{small.spent_epsilon:g} and keeps fitted attributes "
                             f"{_fitted_names(fitted)}")


def check_failed_release_cancels(estimator, X, y=None):
    """A fit that fails inside its release leaves no reservation behind, and the budget
    is checked before any release starts.

    Property: on a budget with room for one fit, a fit made to fail at its second stage
    (an observer raising there; a fit that reports no stage fails at its second random
    draw, where it takes a ``numpy.random.Generator`` as ``random_state``) raises, charges nothing, is left unfitted, and, checked from another thread
    while the failed fit's frames are still alive, the whole of the fit's events can be
    reserved on that budget again. A fit on a budget too small for it raises
    BudgetExceededError before any stage runs, charging nothing.

    Parameters
    ----------
    estimator : estimator
        Unfitted template (cloned for each fit).
    X, y : array-like

    Raises
    ------
    AssertionError
        Naming what was left behind.
    """
    fitted, counter = clone(estimator), _StageCounter()
    budget = fresh_budget(fitted)
    fitted.set_params(budget=budget, random_state=0)
    with observe_stages(counter):
        fit_data(fitted, X, y)
    events = tuple(budget.events)
    if not events:
        return  # this fit releases nothing (a release made later, at predict)
    delta = budget.delta
    epsilon = budget.spent_epsilon
    _check_budget_first(estimator, X, y, epsilon, delta)

    room = PrivacyBudget(epsilon * (1 + 1e-9), delta)  # one fit, not two
    failing = clone(estimator)
    if counter.count:
        failing.set_params(budget=room, random_state=0)
        context = observe_stages(_StageCounter(min(FAIL_AT, counter.count - 1)))
    else:
        failing.set_params(budget=room, random_state=_FailingGenerator(0))
        context = observe_stages(_StageCounter())
    try:
        with context:
            fit_data(failing, X, y)
    except TypeError:
        if counter.count:
            raise
        return  # no stage and no generator taken: nothing makes its release fail
    except ReleaseFailure as error:
        # the failed fit's frames (its reservation, if not given up) live in the
        # traceback while this block runs
        failure = error
        taken = _in_other_thread(lambda: room.reserve(*events).cancel())
        if taken is not None:
            raise AssertionError(
                "check_failed_release_cancels: after a release failed, another thread "
                f"cannot reserve the fit's events ({type(taken).__name__}: {taken}); "
                "the failed fit still holds its reservation") from failure
    else:
        return  # the estimator recovers from a failed release on its own
    if room.spent_epsilon or room.events:
        raise AssertionError("check_failed_release_cancels: a failed release charged "
                             f"{room.spent_epsilon:g}")
    if _fitted_names(failing):
        raise AssertionError("check_failed_release_cancels: a failed fit keeps fitted "
                             f"attributes {_fitted_names(failing)}")
