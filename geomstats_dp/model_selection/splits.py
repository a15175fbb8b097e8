"""How the search splits an estimator's data and scores a run: the split protocol.

The search never looks inside the data itself: it asks a *split* object, built from
``(X, y, validation_fraction, rng)`` before any data value is read, for

- ``n_validation``: the public number of validation records (the score's sensitivity is
  ``loss_bound / n_validation``);
- ``run_cost(estimator)``: ``(charged, ledgers)``, the events one run's fit charges to its
  budget (learnt by stopping the fit at its budget check, ``planning``) and the RDP
  ledgers of GaussianEvent or PureEvent that bound one record's privacy loss in that fit
  (one ledger per group of records with its own noise; the SelectionEvent takes the
  largest at each order);
- ``run(estimator)``: fit on the training part; the validation losses
  (``validation_losses(estimator)``);
- ``noisy_loss(losses, loss_bound, mechanism, event, rng)``: the released clipped mean
  validation loss, noise included (the score is minus it), by the score mechanism's
  ``release`` (``scores``: a noisy stage on a public grid by default);
- ``fit_all(estimator)``: fit on every record (the refit).

The class method ``held_out(X, y)`` builds the split whose validation part is every record
(reading the shapes only): ``private_score`` scores a fitted estimator on it, through the
same ``validation_losses`` and ``noisy_loss``.

``RecordSplit`` is the split of one dataset's records (every estimator of
``geomstats_dp.learning``). An estimator whose data are not one set of records names its
split class in its class attribute ``_search_split``: ``PriRFed``'s is
``geomstats_dp.federated.search_split.AgentSplit``, which splits each agent's records.
"""

import numpy as np

from geomstats_dp.learning import check_array, check_record_shape
from geomstats_dp.model_selection.clipping import clipped_losses
from geomstats_dp.model_selection.planning import planned_events
from geomstats_dp.model_selection.validation_losses import record_losses


def split_class(estimator):
    """The split protocol's class for ``estimator``'s data (``RecordSplit`` by default)."""
    return getattr(type(estimator), "_search_split", RecordSplit)


class RecordSplit:
    """A seeded split of (X, y) into training and validation records, and the runs on it.

    Parameters
    ----------
    X : array-like, shape=[n_samples, ...]
    y : array-like, shape=[n_samples, ...] or None
    validation_fraction : float
        In (0, 1): n_validation = max(1, round(fraction n_samples)).
    rng : numpy.random.Generator or SecureGenerator
        The search's; one ``random()`` per record (public: the indices only).
    name : str
        How the error messages name X.
    """

    def __init__(self, X, y, validation_fraction, rng, name="X"):
        self._keep(X, y, name)
        n_samples = len(self.X)
        self.n_validation = max(1, round(validation_fraction * n_samples))
        if n_samples - self.n_validation < 2:
            raise ValueError(
                f"{name} must hold enough records for a training part of >= 2 and a "
                f"validation part of {self.n_validation} (validation_fraction), got "
                f"{n_samples}"
            )
        order = np.argsort(rng.random(n_samples), kind="stable")
        self.validation = np.sort(order[: self.n_validation])
        self.train = np.sort(order[self.n_validation:])

    @classmethod
    def held_out(cls, X, y=None, name="X", shapes=(None, None)):
        """Every record of (X, y) in the validation part, none to train on: the data of a
        score on its own (``private_score``). Reads the shapes only.

        Parameters
        ----------
        X : array-like, shape=[n_samples, ...]
        y : array-like, shape=[n_samples, ...], optional
        name : str
            How the error messages name X.
        shapes : (tuple or None, tuple or None)
            The shape of one record of X and of y the scored estimator takes
            (``validation_losses.record_shapes``); None: any.

        Returns
        -------
        split : RecordSplit
        """
        split = cls.__new__(cls)
        split._keep(X, y, name)
        for array, array_name, shape in ((split.X, name, shapes[0]), (split.y, "y", shapes[1])):
            if array is not None and shape is not None:
                check_record_shape(array, shape, array_name)
        if len(split.X) < 1:
            raise ValueError(f"{name} must hold at least one record")
        split.n_validation = len(X)
        split.validation, split.train = slice(None), slice(0)
        return split

    def _keep(self, X, y, name):
        """Keep (X, y) as float64 arrays (``check_array``: strings refused), checking that y
        has one row per record."""
        X = check_array(X, name, min_ndim=1)
        y = None if y is None else check_array(y, "y", min_ndim=1)
        if y is not None and len(y) != len(X):
            raise ValueError(f"y must hold one row per row of {name} ({len(X)}), got "
                             f"{len(y)}")
        self.X, self.y = X, y

    def part(self, indices):
        """(X, y) of the records at ``indices`` (y None without targets)."""
        return self.X[indices], None if self.y is None else self.y[indices]

    def run_cost(self, estimator):
        """(charged events, (charged events,)): a record is in one fit, whose events are
        its RDP ledger."""
        charged = planned_events(self.run, estimator)
        return charged, (charged,)

    def run(self, estimator):
        """Fit on the training part; return the per-record validation losses.

        For PrivateStructuredPrediction the losses need predictions, which are the release
        (and charge the estimator's budget).
        """
        X, y = self.part(self.train)
        estimator.fit(X) if y is None else estimator.fit(X, y)
        return self.validation_losses(estimator)

    def validation_losses(self, estimator):
        """The per-record losses of the fitted ``estimator`` on the validation part."""
        return record_losses(estimator, *self.part(self.validation))

    def noisy_loss(self, losses, loss_bound, mechanism, event, rng):
        """The clipped mean of ``losses`` released with the score's noise
        (``mechanism.release``)."""
        return mechanism.release(clipped_losses(losses, loss_bound), self.n_validation,
                                 loss_bound / self.n_validation, event, rng)

    def fit_all(self, estimator):
        """Fit on every record."""
        estimator.fit(self.X) if self.y is None else estimator.fit(self.X, self.y)
