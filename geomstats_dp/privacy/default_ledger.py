"""The process-wide default ledger: where releases made without a budget are recorded.

A fit with no explicit budget and none active (``with budget:``) is charged to a fresh
``PrivacyBudget(epsilon, delta)`` of its own, so it is still calibrated and checked for the
estimator's (epsilon, delta); its releases are also recorded in the default ledger, so two
such fits of the same data are composed somewhere. As in diffprivlib, the default ledger is
unbounded unless set: ``set_default_budget(PrivacyBudget(...))`` bounds every later release
made without a budget, which is then refused (BudgetExceededError, nothing charged) once the
default budget would be exceeded.

The default ledger belongs to one process. In a worker process started by
``multiprocessing`` or joblib's loky backend a fit without a budget is refused
(DetachedBudgetError) unless ``set_default_budget`` was called in that process: its charges
would otherwise never reach the parent's ledger.
"""

import math
import multiprocessing
import threading

from geomstats_dp.privacy import active_budgets
from geomstats_dp.privacy._exceptions import DetachedBudgetError
from geomstats_dp.privacy.budget import PrivacyBudget

DEFAULT_LEDGER_DELTA = 1e-5  # delta at which the unbounded ledger states spent_epsilon

_STATE = {"ledger": None, "set_here": False}
_STATE_LOCK = threading.Lock()


class UnboundedLedger(PrivacyBudget):
    """A ledger with no total: every release fits; it only records.

    Its ``epsilon`` is infinite; ``spent_epsilon`` is stated at ``delta`` (1e-5 unless
    given) and ``get_epsilon(delta)`` at any other delta. Spending does not compose the
    ledger (so that recording stays cheap) and returns nan; releases of different
    adjacencies may be recorded, and composing such a ledger then raises ValueError.

    Parameters
    ----------
    delta : float
        Delta at which ``spent_epsilon`` is stated.
    """

    def __init__(self, delta=DEFAULT_LEDGER_DELTA):
        super().__init__(1.0, delta)
        self._epsilon = math.inf

    @property
    def remaining_epsilon(self):
        """Always infinite."""
        return math.inf

    def _required_epsilon(self, events):
        return math.nan

    def calibrate_gaussian(self, *args, **kwargs):
        """Not defined for an unbounded ledger: calibrate for the estimator's epsilon."""
        raise ValueError("an unbounded ledger has no epsilon to calibrate for")

    def resume(self):
        """A live unbounded ledger with this one's events."""
        ledger = UnboundedLedger(self._delta)
        ledger._events = self._events
        return ledger

    def __repr__(self):
        return f"UnboundedLedger(delta={self._delta:g}; {len(self._events)} events)"


class _FitBudget(PrivacyBudget):
    """The budget of one fit made without a budget: its own (epsilon, delta), and a
    record of its releases in the default ledger (``default_ledger``)."""

    def __init__(self, epsilon, delta, default_ledger):
        super().__init__(epsilon, delta)
        self.default_ledger = default_ledger

    def check(self, *events):
        """Check against this fit's (epsilon, delta), then against the default ledger."""
        required = super().check(*events)
        self.default_ledger.check(*events)
        return required

    def _hold(self, events):
        """Hold ``events`` in this fit's ledger and in the default ledger, or in neither."""
        releases = super()._hold(events)
        try:
            return releases + self.default_ledger._hold(events)
        except BaseException:
            releases[0]()
            raise

    def _locks(self):
        return [self._lock, self.default_ledger._lock]

    def spend(self, *events):
        """Charge the default ledger and this fit's ledger, or neither."""
        with self._lock:
            super().check(*events)
            self.default_ledger.spend(*events)
            return super().spend(*events)


def get_default_budget():
    """The process-wide default ledger (an ``UnboundedLedger`` unless set).

    Returns
    -------
    budget : PrivacyBudget
        Records every release made with no explicit budget and none active. Read it with
        ``events``, ``spent_epsilon`` or ``get_epsilon(delta)``.
    """
    with _STATE_LOCK:
        if _STATE["ledger"] is None:
            _STATE["ledger"] = UnboundedLedger()
        return _STATE["ledger"]


def set_default_budget(budget=None):
    """Set the process-wide default ledger; return the previous one.

    Parameters
    ----------
    budget : PrivacyBudget or None
        A bounded budget that every later release without a budget is checked against and
        charged to; None starts a fresh unbounded ledger.

    Returns
    -------
    previous : PrivacyBudget
        The default ledger replaced (its events are kept there).
    """
    if budget is not None and not isinstance(budget, PrivacyBudget):
        raise TypeError(f"budget must be a PrivacyBudget or None, got {type(budget).__name__}")
    if budget is not None and budget.detached:
        raise DetachedBudgetError(
            "budget was unpickled (an independent copy of a ledger): call budget.resume() "
            "to make it a live budget first"
        )
    previous = get_default_budget()
    with _STATE_LOCK:
        _STATE["ledger"] = UnboundedLedger() if budget is None else budget
        _STATE["set_here"] = True
    return previous


def fit_budget(epsilon, delta):
    """A fresh budget for one fit without a budget, recording into the default ledger."""
    if multiprocessing.parent_process() is not None and not _STATE["set_here"]:
        raise DetachedBudgetError(
            "a release without a budget in a worker process (multiprocessing, or joblib's "
            "loky backend with n_jobs > 1) would be recorded in that process's default "
            "ledger and lost to the parent's; fit in the parent process (n_jobs=1, or "
            "joblib's threading backend), or call set_default_budget() in the worker"
        )
    return _FitBudget(epsilon, delta, get_default_budget())


def resolve_budget(budget, epsilon, delta):
    """The budget an estimator should charge.

    Parameters
    ----------
    budget : PrivacyBudget or None
        An explicit budget (shared with other estimators) wins.
    epsilon, delta : float
        Used to create a fresh budget when ``budget`` is None and no budget is active.

    Returns
    -------
    budget : PrivacyBudget
        ``budget``, else ``current_budget()`` (a block open in this thread; blocks open
        in other threads are not looked at), else a fresh ``PrivacyBudget(epsilon,
        delta)`` for this fit alone that also records its releases in the process-wide
        default ledger (``get_default_budget()``): checking it checks both the fit's own
        (epsilon, delta) and the default ledger; spending it charges both.
    """
    if budget is not None:
        if not isinstance(budget, PrivacyBudget):
            raise TypeError(f"budget must be a PrivacyBudget, got {type(budget).__name__}")
        return budget
    active = active_budgets.context_budget()
    if active is not None:
        return active
    return fit_budget(epsilon, delta)
