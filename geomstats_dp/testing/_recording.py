"""A fit's stages, recorded on one dataset and replayed on a neighbouring one.

``record_fit`` fits a clone of an estimator while an observer (``privacy.stages``) keeps
every stage of its release: the clipped statistic, the noise drawn, the stated law, scale
and sensitivity. ``replay_fit`` fits another clone on a neighbouring dataset with the same
``random_state`` while the observer releases, at each stage, what the recorded fit
released: both runs then query their data at the same points (the iterates are functions
of the earlier releases), draw the same noise, and differ only in their statistics, whose
distance each stage bounds by its stated sensitivity (``check_stage_sensitivity``).

The observer lives in a context variable: stages released in another thread (a worker
pool) are not seen.
"""

import logging
import warnings
from dataclasses import dataclass, field

from sklearn.base import clone

from geomstats_dp.privacy.budget import current_budget
from geomstats_dp.privacy.stages import observe_stages

LOGGER = "geomstats_dp"


@dataclass
class RecordedFit:
    """What one fit released, stage by stage, and what it showed besides.

    Attributes
    ----------
    estimator : PrivateEstimator
        The fitted clone.
    stages : list of Stage
        Every stage of the fit, in order.
    events : tuple
        The ledger events this fit charged.
    warnings : list of (type, str)
        The category and message of every warning the fit raised.
    logs : list of (str, int, str)
        Logger name, level and message of every log record of ``geomstats_dp``.
    predict : array-like or None
        The features ``predict`` was called on after the fit (see ``record_fit``).
    fit_params : dict or None
        The public keyword arguments given to ``fit``.
    """

    estimator: object
    stages: list = field(default_factory=list)
    events: tuple = ()
    warnings: list = field(default_factory=list)
    logs: list = field(default_factory=list)
    predict: object = None
    fit_params: dict | None = None

    @property
    def skippable(self):
        """The event labels the fit's mechanism declares skippable
        (``Mechanism.skippable_events``; none for a fit through no such mechanism)."""
        return getattr(self.estimator, "__dict__", {}).get("_skippable_events", frozenset())

    @property
    def made_events(self):
        """The events but those declared skippable that no stage made (skipped queries:
        the ledger charges them all the same, which the checks allow)."""
        labels = {stage.label for stage in self.stages}
        return [event for event in self.events
                if event.label not in self.skippable or event.label in labels]


class _ListHandler(logging.Handler):
    """Keeps (logger name, level, message) of every record it handles."""

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.records = []

    def emit(self, record):
        self.records.append((record.name, record.levelno, record.getMessage()))


def seeded_clone(estimator, random_state):
    """An unfitted clone of ``estimator`` with ``random_state`` where it takes one."""
    fresh = clone(estimator)
    if "random_state" in fresh.get_params(deep=False):
        fresh.set_params(random_state=random_state)
    return fresh


def _target_budget(estimator):
    """The budget a fit of ``estimator`` charges when it is known beforehand (explicit,
    remembered at creation, or open in this context), else None (a fresh one)."""
    params = estimator.get_params(deep=False)
    return (params.get("budget") or estimator.__dict__.get("_creation_budget")
            or current_budget())


def _fit(estimator, X, y, predict, fit_params):
    fitted = (estimator.fit(X, **fit_params) if y is None
              else estimator.fit(X, y, **fit_params))
    if predict is not None:  # releases made at predict time (per-row structured prediction)
        fitted.predict(predict)


def _observed_fit(estimator, X, y, observer, predict=None, fit_params=None):
    """Fit (and predict) under ``observer``; returns (events charged, warnings, log
    records)."""
    budget = _target_budget(estimator)
    before = len(budget.events) if budget is not None else 0
    handler = _ListHandler()
    logger = logging.getLogger(LOGGER)
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        with warnings.catch_warnings(record=True) as caught, observe_stages(observer):
            warnings.simplefilter("always")
            _fit(estimator, X, y, predict, fit_params or {})
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    # releases made at predict time are recorded apart (structured prediction per row)
    fitted_budget = (getattr(estimator, "budget_", None)
                     or getattr(estimator, "predict_budget_", None))
    if fitted_budget is None:
        events = (tuple(getattr(estimator, "events_", ()))
                  + tuple(getattr(estimator, "predict_events_", ())))
    else:
        events = tuple(fitted_budget.events[before if fitted_budget is budget else 0:])
    return events, [(w.category, str(w.message)) for w in caught], handler.records


def record_fit(estimator, X, y=None, *, random_state, predict=None, fit_params=None):
    """Fit a clone of ``estimator`` on (X, y) and record every stage of its release.

    Parameters
    ----------
    estimator : PrivateEstimator
        Unfitted template (cloned; ``random_state`` set where it takes one).
    X : array-like
    y : array-like, optional
    random_state : int
    predict : array-like, optional
        Also call ``predict(predict)`` on the fitted clone, under the observer, for an
        estimator whose releases are made there (structured prediction per row).
    fit_params : dict, optional
        Public keyword arguments of ``fit`` (``sample_weight``).

    Returns
    -------
    recorded : RecordedFit
        Its ``predict`` and ``fit_params`` are those given (``replay_fit`` repeats them).
    """
    fitted = seeded_clone(estimator, random_state)
    stages = []

    def keep(stage):
        stages.append(stage)
        return stage.release()

    events, caught, logs = _observed_fit(fitted, X, y, keep, predict, fit_params)
    return RecordedFit(fitted, stages, events, caught, logs, predict, fit_params)


def replay_fit(estimator, X2, y2, recorded, *, random_state):
    """Fit a clone on a neighbour (X2, y2), each stage releasing the recorded release.

    The noise is still drawn (the random streams of the two fits stay aligned); an
    exponential stage releases the recorded choice.

    Parameters
    ----------
    estimator : PrivateEstimator
        The template ``recorded`` was made from.
    X2 : array-like
    y2 : array-like or None
    recorded : RecordedFit
    random_state : int
        The one ``recorded`` was made with.

    Returns
    -------
    stages : list of Stage
        The neighbour's stages, in order (statistics computed on X2).

    Raises
    ------
    AssertionError
        If the neighbour's stages differ from the recorded ones in number or in a public
        field (label, law, scale, sensitivity, dim, adjacency, sampling rate).
    """
    fitted = seeded_clone(estimator, random_state)
    stages, mismatches = [], []

    def force(stage):
        index = len(stages)
        stages.append(stage)
        if index >= len(recorded.stages):
            mismatches.append(f"stage {index} ({stage.label!r}) beyond the "
                              f"{len(recorded.stages)} recorded stages")
            raise AssertionError(mismatches[-1])
        expected = recorded.stages[index]
        if stage.public() != expected.public():
            mismatches.append(f"stage {index}: neighbour {stage.public()} != recorded "
                              f"{expected.public()}")
            raise AssertionError(mismatches[-1])
        return expected.release()

    try:
        _observed_fit(fitted, X2, y2, force, recorded.predict, recorded.fit_params)
    except AssertionError:
        if not mismatches:
            raise
    if mismatches:
        raise AssertionError(f"replay_fit: the public stages differ on the neighbour: "
                             f"{mismatches[0]}")
    if len(stages) != len(recorded.stages):
        raise AssertionError(f"replay_fit: the neighbour released {len(stages)} stages, "
                             f"the recorded fit {len(recorded.stages)}")
    return stages
