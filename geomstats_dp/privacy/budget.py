"""The privacy budget: a total (epsilon, delta), a ledger of releases, a default context."""

import contextvars
import math
import threading

from geomstats_dp._validation import check_positive_finite, check_probability
from geomstats_dp.privacy._exceptions import BudgetExceededError
from geomstats_dp.privacy.accountant import compose
from geomstats_dp.privacy.calibration import calibrate_gaussian, check_target
from geomstats_dp.privacy.events import GaussianEvent, check_events
from geomstats_dp.privacy.noise_search import smallest_noise

_ACTIVE = contextvars.ContextVar("geomstats_dp_active_budgets", default=())
_CHECK_RTOL = 1e-9  # float slack of the comparison with the total epsilon


def current_budget():
    """The innermost budget entered with ``with budget:`` in this context, or None.

    Estimators created inside ``with budget:`` take it as their default budget. The stack
    lives in a ``contextvars.ContextVar``: threads and asyncio tasks each see their own.
    """
    active = _ACTIVE.get()
    return active[-1] if active else None


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
        ``budget``, else ``current_budget()``, else ``PrivacyBudget(epsilon, delta)``.
    """
    if budget is not None:
        if not isinstance(budget, PrivacyBudget):
            raise TypeError(f"budget must be a PrivacyBudget, got {type(budget).__name__}")
        return budget
    return current_budget() or PrivacyBudget(epsilon, delta)


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
    events : tuple of GaussianEvent or PureEvent
        The ledger, in the order of spending.
    spent_epsilon : float
        Epsilon of the ledger at ``delta``.
    remaining_epsilon : float
        ``epsilon - spent_epsilon`` (never negative). Composition is not additive: use
        ``check`` or ``calibrate_gaussian`` to know whether a release fits.

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
        self._lock = threading.RLock()

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
        """Raise BudgetExceededError if the ledger plus ``events`` would exceed the budget.

        Parameters
        ----------
        *events : GaussianEvent or PureEvent
            Planned releases, under the ledger's adjacency.

        Returns
        -------
        epsilon : float
            Epsilon of the ledger with ``events`` added (nothing is charged).

        Raises
        ------
        BudgetExceededError
            If that epsilon exceeds the budget's (beyond a relative 1e-9 of float slack).
        """
        events = check_events(events)
        with self._lock:
            return self._required_epsilon(events)

    def spend(self, *events):
        """Check ``events`` against the budget, then append them to the ledger.

        Parameters
        ----------
        *events : GaussianEvent or PureEvent

        Returns
        -------
        spent_epsilon : float
            Epsilon of the ledger after spending.

        Raises
        ------
        BudgetExceededError
            If they do not fit; the ledger is then unchanged.
        """
        events = check_events(events)
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

    def _required_epsilon(self, events):
        required = compose(self._events + events, self._delta).epsilon
        if required > self._epsilon * (1 + _CHECK_RTOL):
            labels = ", ".join(event.label or type(event).__name__ for event in events)
            raise BudgetExceededError(
                f"releasing [{labels}] would bring the ledger to epsilon={required:.6g} at "
                f"delta={self._delta:g}, beyond the budget epsilon={self._epsilon:g} "
                f"(already spent: {compose(self._events, self._delta).epsilon:.6g}); "
                "nothing was charged",
                required,
                self._epsilon,
                self._delta,
            )
        return required

    def __enter__(self):
        _ACTIVE.set(_ACTIVE.get() + (self,))
        return self

    def __exit__(self, *exc_info):
        active = _ACTIVE.get()
        if active and active[-1] is self:
            _ACTIVE.set(active[:-1])
        return False

    def __repr__(self):
        return (
            f"PrivacyBudget(epsilon={self._epsilon:g}, delta={self._delta:g}; "
            f"spent {self.spent_epsilon:.4g} in {len(self._events)} events)"
        )
