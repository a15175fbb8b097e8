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
  validation loss, noise included (the score is minus it);
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

from geomstats_dp._backend import to_numpy
from geomstats_dp.model_selection.clipping import clipped_mean
from geomstats_dp.model_selection.planning import planned_events
from geomstats_dp.model_selection.validation_losses import record_losses
from geomstats_dp.privacy.events import GaussianEvent
from geomstats_dp.privacy.stages import noisy_stage


def score_stage(statistic, noise, event):
    """``statistic + noise`` released as the stage of the score's ``event`` (a
    ``GaussianEvent`` or a Laplace ``PureEvent``; ``privacy.stages``), under its label."""
    gaussian = isinstance(event, GaussianEvent)
    return noisy_stage(statistic, noise, label=event.label,
                       law="gaussian" if gaussian else "laplace",
                       scale=event.noise_std if gaussian else event.noise_scale,
                       sensitivity=event.sensitivity)


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
        self._keep(to_numpy(X), None if y is None else to_numpy(y), name)
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
    def held_out(cls, X, y=None, name="X"):
        """Every record of (X, y) in the validation part, none to train on: the data of a
        score on its own (``private_score``). Reads the shapes only.

        Parameters
        ----------
        X : array-like, shape=[n_samples, ...]
        y : array-like, shape=[n_samples, ...], optional
        name : str
            How the error messages name X.

        Returns
        -------
        split : RecordSplit
        """
        split = cls.__new__(cls)
        split._keep(X, y, name)
        if len(X) < 1:
            raise ValueError(f"{name} must hold at least one record")
        split.n_validation = len(X)
        split.validation, split.train = slice(None), slice(0)
        return split

    def _keep(self, X, y, name):
        """Keep (X, y), checking that y has one row per record."""
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
        """The clipped mean of ``losses`` plus one draw of the score's noise (a stage)."""
        return score_stage(clipped_mean(losses, loss_bound), mechanism.noise(event, rng),
                           event)

    def fit_all(self, estimator):
        """Fit on every record."""
        estimator.fit(self.X) if self.y is None else estimator.fit(self.X, self.y)
