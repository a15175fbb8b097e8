"""Releases held against a budget between the check and the charge of one fit.

A fit checks its events before reading any data and charges them once released. Two fits
sharing a budget in different threads would both pass their checks and the second would be
refused only after its optimisation ran; a reservation holds the checked events, so that
every other check and charge counts them until this fit charges or gives them up.
"""

import contextlib
import weakref


def _release_all(releases):
    for release in releases:
        release()


class Reservation:
    """Events held against one or more ledgers until ``spend`` or ``cancel``.

    Made by ``PrivacyBudget.reserve``. An unspent reservation (a fit that failed after
    its check) is given up when it is garbage collected, or when the same thread reserves
    again on the same ledger.

    Parameters
    ----------
    budget : PrivacyBudget
        The budget ``spend`` charges.
    releases : list of callable
        Each gives up one hold (one per ledger: a fit without a budget also holds its
        events in the default ledger).
    locks : list of threading.RLock
        The ledgers' locks, held while the holds are turned into a charge.
    """

    def __init__(self, budget, releases, locks):
        self._budget = budget
        self._locks = locks
        self._finalizer = weakref.finalize(self, _release_all, releases)

    def spend(self, *events):
        """Give up the hold and charge ``events`` (the final events of the fit) at once.

        Returns
        -------
        spent_epsilon : float
            As ``PrivacyBudget.spend``.
        """
        with contextlib.ExitStack() as stack:
            for lock in self._locks:
                stack.enter_context(lock)
            self._finalizer()
            return self._budget.spend(*events)

    def cancel(self):
        """Give up the hold without charging anything."""
        self._finalizer()
