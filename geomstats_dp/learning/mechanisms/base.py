"""The shape of a release mechanism and the one private pipeline that runs it.

A mechanism is built by an estimator from PUBLIC quantities only (its parameters, the
number of records n, the shapes, the public weights) and has two methods:

- ``events()``: the calibrated privacy events it will charge (before any data is read);
- ``release(data, weights, rng)``: reads the data and returns the fitted attributes of
  the estimator (the released quantities only). It may return refined events under the
  key ``"events_"`` (the same privacy cost, with data-independent details filled in).

``run_release`` is the pipeline every estimator goes through:
events -> budget.reserve (checked, nothing read yet; a concurrent fit cannot take the
same room) -> release -> the reservation spent (or cancelled when the release raises,
unless the mechanism is ``charged_if_raises``).
Every mechanism states its adjacency, sensitivity and accountant in its docstring.
"""

from dataclasses import dataclass
from typing import ClassVar

from geomstats_dp._backend import get_rng, quiet_numerics

ADJACENCIES = ("replace_one", "add_remove", "user_level", "label_level")


@dataclass(frozen=True)
class Mechanism:
    """Base of the mechanisms: a frozen spec of public quantities, its events, its release.

    A subclass is a frozen dataclass whose fields are public quantities only (the space or
    its public description, n, the bounds, epsilon shares, noise multipliers, the
    schedule), built by an estimator after validating its parameters. It never holds or
    reads an estimator, so it can be built, run (``run_release``) and checked
    (``geomstats_dp.testing``) alone. Its docstring states adjacency, sensitivity and
    accountant.

    Attributes
    ----------
    adjacency : str
        The neighbouring relation its guarantee is stated for, one of ``ADJACENCIES``.
    reads_dask : bool
        Whether ``release`` reads a Dask array chunk by chunk (``geomstats_dp._dask``);
        the estimators refuse a Dask array for the others, before the budget.
    charged_if_raises : bool
        Whether a ``release`` that raises is charged all the same (its noisy outputs may
        have left it before the error: PriRFed's agents' replies); otherwise the
        reservation is cancelled.
    released_outputs : frozenset of str
        Fitted attributes besides the release that are functions of it (post-processing:
        a step count that depends on the released points); the conformance checks
        compare them as releases, not as public outputs.
    """

    adjacency: ClassVar[str] = "replace_one"
    reads_dask: ClassVar[bool] = False
    charged_if_raises: ClassVar[bool] = False
    released_outputs: ClassVar[frozenset] = frozenset()

    def skippable_events(self):
        """Labels of the events a run may leave without a stage (a query skipped by a
        decision on earlier releases: a data-independent null query, charged all the
        same); public quantities only."""
        return frozenset()

    def events(self):
        """The calibrated privacy events this release charges (public quantities only)."""
        raise NotImplementedError

    def release(self, data, weights, rng):
        """Read the data and release; returns the fitted attributes (a dict), with
        refined events under ``"events_"`` where the release fills in data-independent
        details of the same cost."""
        raise NotImplementedError


def run_release(mechanism, budget, data, weights, random_state=None, secure=False):
    """Check the budget, release, charge: the one private pipeline.

    Parameters
    ----------
    mechanism : Mechanism
        Anything with ``events()`` and ``release(data, weights, rng)``.
    budget : PrivacyBudget
    data : array-like
        Shape-checked records (values are checked by the mechanism).
    weights : numpy.ndarray or None
    random_state : None, int or numpy.random.Generator
    secure : bool
        Draw from the operating system's entropy.

    Returns
    -------
    fitted : dict
        The mechanism's fitted attributes, with ``events_`` (the events charged).

    Raises
    ------
    BudgetExceededError
        Before any data value is read, when the budget cannot afford the release.
    """
    events = tuple(mechanism.events())
    reservation = budget.reserve(*events)
    rng = get_rng(random_state, secure=secure)
    try:
        with quiet_numerics():
            fitted = mechanism.release(data, weights, rng)
    except BaseException:
        if getattr(mechanism, "charged_if_raises", False):
            reservation.spend(*events)
        else:
            reservation.cancel()
        raise
    spent = tuple(fitted.pop("events_", events))
    reservation.spend(*spent)
    fitted["events_"] = spent
    return fitted
