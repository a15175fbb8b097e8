"""What a fit will charge, learnt before it reads any data value.

Every estimator of the library checks its whole release against its budget before it reads
a data value (the one private pipeline). A ``PlanningBudget`` records the events of that
check and stops the fit there, so the search learns each candidate's events from public
quantities only (the shapes of the splits and the candidate's settings).
"""

import warnings

from geomstats_dp.privacy import PrivacyBudget
from geomstats_dp.privacy.events import check_events


class _Planned(Exception):
    """Raised by ``PlanningBudget.check``: carries the events of the stopped fit."""

    def __init__(self, events):
        super().__init__("planning stop")
        self.events = events


class PlanningBudget(PrivacyBudget):
    """A budget whose ``check`` (or ``reserve``) records the planned events and stops the
    fit."""

    def __init__(self):
        super().__init__(1.0, 0.5)

    def check(self, *events):
        """Stop the fit: raise with ``events`` (nothing is read or charged)."""
        raise _Planned(check_events(events))

    def reserve(self, *events):
        """As ``check``: a pipeline that checks and holds its events in one call."""
        self.check(*events)

    def spend(self, *events):
        """A fit that spends without checking first breaks the pipeline's rule."""
        raise RuntimeError("a fit spent its budget without checking it first")


def planned_events(run, estimator):
    """The events ``run(estimator)`` charges first, learnt without reading data values.

    Parameters
    ----------
    run : callable
        ``run(estimator)``: fits (and, for the search, scores) the estimator.
    estimator : estimator of geomstats_dp
        Its ``budget`` parameter is replaced by a ``PlanningBudget``.

    Returns
    -------
    events : tuple
        The events of the first budget check; () if the run charges nothing.
    """
    estimator.set_params(budget=PlanningBudget())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            run(estimator)
        except _Planned as planned:
            return planned.events
    return ()
