"""Bad input: refused clearly before anything is charged, or treated per record."""

import numpy as np
from sklearn.base import clone

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.optim import canonical_point
from geomstats_dp.testing._neighbours import _inner, _points_space, adjacency
from geomstats_dp.testing._observables import fit_data, fresh_budget

DATA_NAMES = ("X", "y", "Y", "data", "datasets", "targets")


def _bad_rows(estimator, records):
    """(name, records, row) for records made bad at one row: non-finite, off the space."""
    row = len(records) // 2 + 1
    bad = []
    for name, value in (("nan", np.nan), ("inf", np.inf)):
        changed = records.copy()
        changed[row].flat[0] = value
        bad.append((f"{name} record", changed, row))
    space = _points_space(estimator, records)
    if space is not None:
        changed = records.copy()
        changed[row] = -2 * records[row]
        if not bool(space.belongs(to_backend(changed[row]))):
            bad.append(("off-space record", changed, row))
    return bad


def _bad_inputs(estimator, X, y):
    """(name, X2, y2, argument, row, must_refuse) for each bad input of (X, y)."""
    label_level = adjacency(estimator) == "label_level"
    federated = isinstance(X, (list, tuple))
    records = np.array(to_numpy(X[0] if federated else (y if label_level else X)),
                       dtype=float)
    argument = "y" if label_level else "X"

    def placed(changed):
        if federated:
            return [to_backend(changed), *X[1:]], y
        if label_level:
            return X, to_backend(changed)
        return to_backend(changed), y

    strings = records.astype(str)
    if federated:
        typed = [strings, *X[1:]], y
    else:
        typed = (X, strings) if label_level else (strings, y)
    inputs = [("string dtype", *typed, argument, None, True)]
    if _points_space(estimator, records) is not None or label_level:
        wider = np.concatenate([records, records[..., :1]], axis=-1)
        inputs.append(("wrong width", *placed(wider), argument, None, True))
    for name, changed, row in _bad_rows(estimator, records):
        inputs.append((name, *placed(changed), argument, None if federated else row,
                       False))
    return inputs


def _bad_start_points(estimator):
    """(name, params) of start points off the space and non-finite, where the estimator
    takes a ``init_point`` on a space."""
    space = getattr(estimator, "space", None)
    if space is None or "init_point" not in estimator.get_params(deep=False):
        return []
    start = to_numpy(canonical_point(space))
    off, nan = -2 * start, start.copy()
    nan.flat[0] = np.nan
    points = [("init_point non-finite", nan)]
    if not bool(space.belongs(to_backend(off))):
        points.insert(0, ("init_point off the space", off))
    return [(name, {"init_point": point}) for name, point in points]


def _fitted_names(estimator):
    return [name for name in vars(estimator) if name.endswith("_")
            and not name.startswith("_")]


def _release(estimator):
    """(release, whether it is a point of the estimator's space), or (None, False)."""
    for name in ("estimate_", "labels_", "cluster_centers_", "components_", "score_"):
        if hasattr(estimator, name):
            release = np.asarray(to_numpy(getattr(estimator, name)), dtype=float)
            return release, name in ("estimate_", "labels_", "cluster_centers_")
    return None, False


def _try(estimator, X, y, params=None):
    fitted = clone(estimator)
    budget = fresh_budget(fitted)
    fitted.set_params(budget=budget, random_state=0, **(params or {}))
    try:
        fit_data(fitted, X, y)
    except Exception as error:  # noqa: BLE001 - judged by the caller
        return fitted, budget, error
    return fitted, budget, None


def _judge(name, fitted, budget, error, argument, row, must_refuse, space=None):
    """Raise AssertionError unless the outcome is a clear refusal or a sound treatment."""
    if error is None:
        if must_refuse:
            raise AssertionError(f"check_input_domain: {name} accepted; expected a "
                                 f"ValueError or TypeError naming {argument}")
        release, is_point = _release(fitted)
        if release is not None and not np.isfinite(release).all():
            raise AssertionError(f"check_input_domain: {name} accepted with a non-finite "
                                 "release")
        if is_point and space is not None and not np.all(to_numpy(
                space.belongs(to_backend(release), atol=1e-6))):
            raise AssertionError(f"check_input_domain: {name} accepted with a release off "
                                 "the space")
        return
    if not isinstance(error, (ValueError, TypeError)):
        raise AssertionError(  # noqa: TRY004 - a failed check
            f"check_input_domain: {name} raised {type(error).__name__}: {error}; "
            "expected a ValueError or TypeError")
    message = str(error)
    names = DATA_NAMES if argument in ("X", "y") else (argument,)
    if not any(candidate in message for candidate in names):
        raise AssertionError(f"check_input_domain: {name}: the message {message!r} names "
                             f"none of {names}")
    if row is not None and str(row) not in message:
        raise AssertionError(f"check_input_domain: {name} at row {row}: the message "
                             f"{message!r} does not name the row")
    if budget.spent_epsilon != 0 or budget.events:
        raise AssertionError(f"check_input_domain: {name} refused after charging "
                             f"{budget.spent_epsilon}")
    if _fitted_names(fitted):
        raise AssertionError(f"check_input_domain: {name} refused but the estimator keeps "
                             f"fitted attributes {_fitted_names(fitted)}")


def check_input_domain(estimator, X, y=None):
    """Bad input gets a clear error before anything is charged, or a per-record treatment.

    Property: string-typed data, data of the wrong width (where the space fixes it) and
    start points (``init_point``) off the space or non-finite raise a ValueError or
    TypeError whose message names the argument, with nothing charged and the estimator
    left unfitted. A non-finite record, or one off the space, at a row r either gets the
    same kind of error, naming the argument and r, or the estimator's per-record
    treatment: the fit then succeeds with a finite release (on the space, for an
    estimator on a space).

    Parameters
    ----------
    estimator : estimator
        Unfitted template (cloned for each fit).
    X, y : array-like
        A valid dataset, from which the bad inputs are made.

    Raises
    ------
    AssertionError
        Naming the bad input and what happened.
    """
    space = getattr(_inner(estimator) or estimator, "space", None)
    if space is not None and not hasattr(space, "belongs"):
        space = None
    on_space = space if adjacency(estimator) != "user_level" else None
    trials = [(name, (X2, y2), argument, row, must_refuse)
              for name, X2, y2, argument, row, must_refuse in _bad_inputs(estimator, X, y)]
    trials += [(name, (X, y, params), "init_point", None, True)
               for name, params in _bad_start_points(estimator)]
    failures = []
    for name, fit_args, argument, row, must_refuse in trials:
        try:
            _judge(name, *_try(estimator, *fit_args), argument, row, must_refuse, on_space)
        except AssertionError as failure:
            failures.append(str(failure).removeprefix("check_input_domain: "))
    if failures:
        raise AssertionError("check_input_domain: " + "; ".join(failures))
