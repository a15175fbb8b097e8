"""What a fit shows besides its release, compared between neighbouring datasets."""

import contextlib
import dataclasses
import logging
import warnings

import numpy as np
from sklearn.base import clone

from geomstats_dp._backend import to_numpy
from geomstats_dp.privacy import PrivacyBudget
from geomstats_dp.testing._neighbours import worst_case_neighbours
from geomstats_dp.testing._recording import _ListHandler

# Fitted attributes that hold released quantities (or post-processing of them); every
# other fitted attribute is public and must not depend on the data.
RELEASED = frozenset({
    "estimate_", "components_", "mean_", "explained_variance_",
    "explained_variance_ratio_", "item_factors_", "item_offsets_", "labels_",
    "base_point_", "history_", "best_index_", "best_params_", "best_score_",
    "best_estimator_", "cv_results_", "score_", "cluster_centers_", "cluster_sizes_",
    "centroids_", "coef_", "intercept_", "noise_variance_", "rating_scale_",
})


@contextlib.contextmanager
def _captured_logs():
    root = logging.getLogger()
    handler, level = _ListHandler(), root.level
    disabled = logging.root.manager.disable  # a process-wide switch an earlier call may
    logging.disable(logging.NOTSET)  # have left on: the fit is observed as in a fresh one
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    records = []
    try:
        yield records
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
        logging.disable(disabled)
        # geomstats logs through the root logger; other libraries' debug records (lazy
        # imports, compilation) come with the first fit of a process only
        records.extend(record for record in handler.records
                       if record[0] == "root" or record[0].startswith("geomstats"))


def fit_data(estimator, X, y=None, **fit_params):
    """``estimator.fit(X)`` or ``estimator.fit(X, y)`` (estimators without ``y``)."""
    if y is None:
        return estimator.fit(X, **fit_params)
    return estimator.fit(X, y, **fit_params)


def public_outputs(estimator, *fit_args, released=RELEASED, **fit_params):
    """Fit ``estimator`` and return every public output but the release.

    Parameters
    ----------
    estimator : estimator
        Fitted in place.
    *fit_args, **fit_params
        Passed to ``fit``.
    released : collection of str
        The fitted attributes that are releases (left out), with those the fit's
        mechanism declares functions of its release (``Mechanism.released_outputs``).

    Returns
    -------
    public : dict
        Every fitted attribute (name ending in ``_``) but the releases and ``budget_``;
        ``"warnings"``: (category, message) of each warning; ``"logs"``: (logger, level,
        message) of each log record of geomstats and geomstats_dp; ``"spent"``: the epsilon the budget spent.
    """
    with warnings.catch_warnings(record=True) as caught, _captured_logs() as logs:
        warnings.simplefilter("always")
        estimator.fit(*fit_args, **fit_params)
    released = frozenset(released) | estimator.__dict__.get("_released_outputs", frozenset())
    public = {name: value for name, value in vars(estimator).items()
              if name.endswith("_") and not name.startswith("_")
              and name not in released and name != "budget_"}
    public["warnings"] = [(w.category, str(w.message)) for w in caught]
    public["logs"] = list(logs)
    budget = getattr(estimator, "budget_", None)
    public["spent"] = None if budget is None else budget.spent_epsilon
    return public


def same(first, second):
    """Whether two public outputs are identical (arrays compared elementwise, NaN equal
    to NaN; any backend)."""
    if isinstance(first, dict) and isinstance(second, dict):
        return first.keys() == second.keys() and all(
            same(first[key], second[key]) for key in first)
    if isinstance(first, (list, tuple)) and isinstance(second, (list, tuple)):
        return (type(first) is type(second) and len(first) == len(second)
                and all(same(a, b) for a, b in zip(first, second)))
    if dataclasses.is_dataclass(first) and type(first) is type(second):
        return all(same(getattr(first, item.name), getattr(second, item.name))
                   for item in dataclasses.fields(first))
    if hasattr(first, "dtype") or hasattr(second, "dtype"):
        try:
            first, second = np.asarray(to_numpy(first)), np.asarray(to_numpy(second))
        except (TypeError, ValueError):
            return False
        return first.shape == second.shape and bool(np.array_equal(
            first, second, equal_nan=first.dtype.kind in "fc"))
    try:
        return bool(first == second)
    except (TypeError, ValueError):
        return first is second


def fresh_budget(estimator):
    """A PrivacyBudget with room for one fit of ``estimator`` (its epsilon twice over)."""
    epsilon = getattr(estimator, "epsilon", None) or 1.0
    delta = getattr(estimator, "delta", None) or 1e-5
    return PrivacyBudget(2.0 * epsilon, delta)


def observe_fit(estimator, X, y=None, *, released=RELEASED, random_state=0):
    """Fit a clone on a fresh budget; return its public outputs, or the exception raised
    (type and message) with the epsilon charged."""
    fitted = clone(estimator)
    budget = fresh_budget(fitted)
    fitted.set_params(budget=budget, random_state=random_state)
    args = (X,) if y is None else (X, y)
    try:
        return public_outputs(fitted, *args, released=released)
    except Exception as error:  # noqa: BLE001 - exceptions and messages are observables
        return {"exception": (type(error), str(error)), "spent": budget.spent_epsilon}


def _refused(outputs):
    """A neighbour outside the domain: a ValueError or TypeError, nothing charged."""
    error = outputs.get("exception")
    return (error is not None and issubclass(error[0], (ValueError, TypeError))
            and outputs["spent"] == 0)


def check_public_observables(estimator, X, y=None, *, neighbours=None, released=RELEASED,
                             random_state=0):
    """Every public output of a fit is identical on neighbouring datasets.

    Property: for every worst-case neighbour (``worst_case_neighbours``) fitted with the
    same ``random_state``, every fitted attribute but the release (``released``:
    ``method_``, iteration counts, noise multipliers, clip norms, events, ...), the
    epsilon charged, every warning and log record, and any exception and its message
    are identical to those of the fit on (X, y). A neighbour the estimator refuses with a
    ValueError or TypeError before charging anything lies outside its domain and is
    skipped (``check_input_domain`` checks those refusals).

    Parameters
    ----------
    estimator : estimator
        Unfitted template (cloned for each fit).
    X, y : array-like
        A dataset the estimator fits.
    neighbours : iterable of (name, X2, y2), optional
        Default ``worst_case_neighbours(estimator, X, y)``.
    released : collection of str
        Fitted attributes that are releases.
    random_state : int

    Raises
    ------
    AssertionError
        Naming the neighbour and each output that differs, with both values.
    """
    reference = observe_fit(estimator, X, y, released=released, random_state=random_state)
    if "exception" in reference:
        kind, message = reference["exception"]
        raise AssertionError(f"check_public_observables: the fit on X raised "
                             f"{kind.__name__}: {message}")
    if neighbours is None:
        neighbours = worst_case_neighbours(estimator, X, y)
    for name, X2, y2 in neighbours:
        outputs = observe_fit(estimator, X2, y2, released=released,
                              random_state=random_state)
        if _refused(outputs):
            continue
        differing = sorted(key for key in reference.keys() | outputs.keys()
                           if not same(reference.get(key), outputs.get(key)))
        if differing:
            shown = "; ".join(f"{key}: {reference.get(key)!r} != {outputs.get(key)!r}"
                              for key in differing)
            raise AssertionError(f"check_public_observables: neighbour {name!r} changes "
                                 f"public outputs ({shown})")
