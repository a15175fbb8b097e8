"""The privacy budget: a total (epsilon, delta), a ledger of releases, a default context.

A budget is a shared handle: ``copy.deepcopy`` and ``sklearn.base.clone`` return the same
object, so estimators cloned by scikit-learn charge the same ledger. Pickling gives an
independent copy of the ledger (totals and events), no longer shared with the original; such
a copy refuses to check or spend (DetachedBudgetError), because charges to it, for instance
in a joblib/loky worker process, would never reach the original ledger. ``resume()`` turns
a copy into a live budget deliberately (to go on spending from a saved ledger).
"""

import functools
import itertools
import math
import numbers
import threading

from geomstats_dp._validation import check_positive_finite, check_probability
from geomstats_dp.privacy import active_budgets
from geomstats_dp.privacy._exceptions import BudgetExceededError, DetachedBudgetError
from geomstats_dp.privacy.accountant import compose
from geomstats_dp.privacy.calibration import calibrate_gaussian, check_target
from geomstats_dp.privacy.events import (
    ApproxDPEvent,
    GaussianEvent,
    PureEvent,
    check_events,
)
from geomstats_dp.privacy.noise_search import smallest_noise
from geomstats_dp.privacy.reservation import Reservation

_CHECK_RTOL = 1e-9  # float slack of the comparison with the total epsilon


def current_budget():
    """The innermost budget entered with ``with budget:`` in this context, or None.

    Estimators created inside ``with budget:`` take it as their default budget. The stack
    lives in a ``contextvars.ContextVar``: threads and asyncio tasks each see their own,
    and a block is never visible in another thread, even one started inside it
    (``active_budgets``).
    """
    return active_budgets.context_budget()


class PrivacyBudget:
    """What may be spent in total, and the ledger of what has been spent.

    The ledger's releases compose (``compose_epsilon``): several estimators sharing one
    budget, or one estimator fitted twice, spend from the same total. A release is checked
    before any data is read; one that would exceed the budget raises BudgetExceededError
    and charges nothing.

    Parameters
    ----------
    epsilon : float
        Total epsilon, > 0.
    delta : float
        Total delta, in [0, 1); delta = 0 admits only pure-DP (PureEvent) releases.

    Attributes
    ----------
    events : tuple of GaussianEvent, PureEvent or ApproxDPEvent
        The ledger, in the order of spending.
    spent_epsilon : float
        Epsilon of the ledger at ``delta``; ``get_epsilon(delta)`` states it at any delta.
    remaining_epsilon : float
        ``epsilon - spent_epsilon`` (never negative). Composition is not additive: use
        ``check`` or ``calibrate_gaussian`` to know whether a release fits.

    Notes
    -----
    ``copy.deepcopy(budget)`` and ``sklearn.base.clone(budget)`` return ``budget`` itself
    (a shared handle). ``pickle`` gives an independent copy of the ledger that refuses to
    spend (DetachedBudgetError) until ``resume()`` is called: see the module notes.

    Examples
    --------
    >>> budget = PrivacyBudget(1.0, 1e-5)
    >>> with budget:                                  # doctest: +SKIP
    ...     a = PrivateFrechetMean(space).fit(X)      # both charge `budget`
    ...     b = PrivateFrechetMean(space).fit(Y)
    """

    def __init__(self, epsilon, delta):
        self._epsilon = check_positive_finite(epsilon, "epsilon")
        self._delta = check_probability(delta, "delta", allow_zero=True)
        self._events = ()
        self._held = {}  # key -> (thread ident, events) reserved by fits in progress
        self._lock = threading.RLock()
        self._detached = False

    def get_epsilon(self, delta):
        """Epsilon of the ledger at any ``delta`` in [0, 1) (0.0 when nothing was spent)."""
        return compose(self._events, delta).epsilon

    @property
    def detached(self):
        """Whether this budget is an unpickled copy, which refuses to spend."""
        return self._detached

    def resume(self):
        """A live budget with this one's totals and ledger (an independent ledger).

        Returns
        -------
        budget : PrivacyBudget
            Charges to it are recorded in it only; use it to go on spending from a ledger
            restored by ``pickle`` in a process that owns the ledger from now on.
        """
        budget = PrivacyBudget(self._epsilon, self._delta)
        budget._events = self._events
        return budget

    @property
    def epsilon(self):
        """Total epsilon."""
        return self._epsilon

    @property
    def delta(self):
        """Total delta, at which every epsilon of the ledger is stated."""
        return self._delta

    @property
    def events(self):
        """The ledger (a tuple; spending appends to it)."""
        return self._events

    @property
    def spent_epsilon(self):
        """Epsilon of the ledger at ``delta`` (0.0 when nothing was spent)."""
        return compose(self._events, self._delta).epsilon

    @property
    def remaining_epsilon(self):
        """``epsilon - spent_epsilon``, floored at zero."""
        return max(self._epsilon - self.spent_epsilon, 0.0)

    @property
    def accountant(self):
        """Name of the rule that accounts the ledger (see ``accountant.compose``)."""
        return compose(self._events, self._delta).accountant

    def check(self, *events):
        """Raise BudgetExceededError if the ledger plus ``events`` would exceed the budget
        (counting the events held by fits in progress, ``reserve``).

        Parameters
        ----------
        *events : GaussianEvent, PureEvent or ApproxDPEvent; or epsilon[, delta]
            Planned releases, under the ledger's adjacency; or two numbers (epsilon,
            delta) for one release made with another tool (see ``spend``).

        Returns
        -------
        epsilon : float
            Epsilon of the ledger with ``events`` added (nothing is charged).

        Raises
        ------
        BudgetExceededError
            If that epsilon exceeds the budget's (beyond a relative 1e-9 of float slack).
        DetachedBudgetError
            If this budget is an unpickled copy (see ``resume``).
        """
        events = _as_events(events)
        self._check_attached()
        with self._lock:
            return self._required_epsilon(events)

    def reserve(self, *events):
        """Check ``events`` and hold them until the fit that plans them charges them.

        Checks and charges made meanwhile (in other threads) count the held events, so
        that of two concurrent fits that do not both fit, the second is refused at its
        check, before it reads any data.

        Parameters
        ----------
        *events : GaussianEvent, PureEvent or ApproxDPEvent
            The planned releases.

        Returns
        -------
        reservation : Reservation
            ``reservation.spend(*final_events)`` charges; ``reservation.cancel()`` gives
            the hold up, as do garbage collection of an unspent reservation and the next
            reservation made by the same thread (a thread runs one fit at a time, so an
            earlier unspent hold of its own is a fit that failed after its check).

        Raises
        ------
        BudgetExceededError
            If the ledger, the held events and ``events`` exceed the budget.
        DetachedBudgetError
            If this budget is an unpickled copy (see ``resume``).
        """
        events = _as_events(events)
        return Reservation(self, self._hold(events), self._locks())

    def _hold(self, events):
        """Check and hold ``events``; return the callables that give the holds up.

        A thread runs one fit at a time: its earlier holds still here belong to fits that
        failed after their check, and are given up first.
        """
        self._check_attached()
        owner = threading.get_ident()
        with self._lock:
            for key in [key for key, (thread, _) in self._held.items() if thread == owner]:
                del self._held[key]
            self._required_epsilon(events)
            key = object()
            self._held[key] = (owner, events)
        return [functools.partial(self._held.pop, key, None)]

    def _locks(self):
        """The locks of the ledgers a charge to this budget writes, in a fixed order."""
        return [self._lock]

    def spend(self, *events):
        """Check ``events`` against the budget, then append them to the ledger.

        Parameters
        ----------
        *events : GaussianEvent, PureEvent or ApproxDPEvent; or epsilon[, delta]
            The releases; or the (epsilon, delta) of one release made with another tool,
            recorded as an ``ApproxDPEvent`` (a ``PureEvent`` when delta is 0 or left
            out) and composed by basic or advanced composition, never as a Gaussian.

        Returns
        -------
        spent_epsilon : float
            Epsilon of the ledger after spending.

        Raises
        ------
        BudgetExceededError
            If they do not fit; the ledger is then unchanged.
        DetachedBudgetError
            If this budget is an unpickled copy (see ``resume``).

        Examples
        --------
        >>> budget = PrivacyBudget(2.0, 1e-5)
        >>> budget.spend(0.5, 1e-7)  # a release made with another library  # doctest: +SKIP
        """
        events = _as_events(events)
        self._check_attached()
        with self._lock:
            required = self._required_epsilon(events)
            self._events = self._events + events
            return required

    def calibrate_gaussian(
        self, n_steps, sampling_rate=1.0, sampling="full", adjacency="replace_one"
    ):
        """Smallest noise multiplier whose Gaussian event still fits in this budget.

        Unlike the module-level ``calibrate_gaussian(remaining_epsilon, ...)``, this
        accounts for the ledger by composition (which is not additive).

        Parameters
        ----------
        n_steps, sampling_rate, sampling, adjacency
            As in GaussianEvent.

        Returns
        -------
        noise_multiplier : float
            ``check(GaussianEvent(noise_multiplier, n_steps, ...))`` passes.
        """
        epsilon, delta = check_target(self._epsilon, self._delta)
        ledger = self._events
        if not ledger:
            return calibrate_gaussian(
                epsilon, delta, n_steps, sampling_rate, sampling, adjacency
            )

        spent = compose(ledger, delta).epsilon
        if spent >= epsilon:
            raise BudgetExceededError(
                f"the ledger already spends epsilon={spent:.6g} of epsilon={epsilon}: "
                "no Gaussian release fits",
                math.inf,
                epsilon,
                delta,
            )

        def events_of(noise_multiplier):
            return ledger + (
                GaussianEvent(noise_multiplier, n_steps, sampling_rate, sampling, adjacency),
            )

        initial = calibrate_gaussian(epsilon, delta, n_steps, sampling_rate, sampling, adjacency)
        return smallest_noise(events_of, epsilon, delta, initial)

    def _check_attached(self):
        if self._detached:
            raise DetachedBudgetError(
                f"this {type(self).__name__} was unpickled (for instance sent to a "
                "joblib/loky worker process by n_jobs > 1): it is an independent copy of "
                "the ledger, and a charge to it would never reach the original; fit in the "
                "process that owns the budget (n_jobs=1, or joblib's threading backend), "
                "or call budget.resume() to spend from the copy deliberately"
            )

    def __getstate__(self):
        state = self.__dict__.copy()
        del state["_lock"]
        state["_held"] = {}  # the holds of fits in progress here do not travel
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._lock = threading.RLock()
        self._detached = True

    def __deepcopy__(self, memo):
        return self

    def __copy__(self):
        return self

    def __sklearn_clone__(self):
        return self

    def _required_epsilon(self, events):
        held = tuple(itertools.chain.from_iterable(
            events for _, events in list(self._held.values())))
        required = compose(self._events + held + events, self._delta).epsilon
        if required > self._epsilon * (1 + _CHECK_RTOL):
            labels = ", ".join(event.label or type(event).__name__ for event in events)
            raise BudgetExceededError(
                f"releasing [{labels}] would bring the ledger to epsilon={required:.6g} at "
                f"delta={self._delta:g}, beyond the budget epsilon={self._epsilon:g} "
                f"(already spent: {compose(self._events, self._delta).epsilon:.6g}"
                f"{f', and {len(held)} events held by fits in progress' if held else ''}); "
                "nothing was charged",
                required,
                self._epsilon,
                self._delta,
            )
        return required

    def __enter__(self):
        active_budgets.enter(self)
        return self

    def __exit__(self, *exc_info):
        active_budgets.leave(self)
        return False

    def __repr__(self):
        return (
            f"PrivacyBudget(epsilon={self._epsilon:g}, delta={self._delta:g}; "
            f"spent {self.spent_epsilon:.4g} in {len(self._events)} events)"
        )


def _as_events(events):
    """Events as a checked tuple; ``(epsilon[, delta])`` numbers as one generic event."""
    if events and all(isinstance(event, numbers.Real) for event in events):
        if len(events) > 2:
            raise TypeError(
                f"pass events, or the (epsilon, delta) of one release; got {len(events)} "
                "numbers"
            )
        epsilon, delta = (tuple(events) + (0.0,))[:2]
        label = "external release"
        if delta == 0:
            return (PureEvent(epsilon, label=label),)
        return (ApproxDPEvent(epsilon, delta, label=label),)
    return check_events(events)
