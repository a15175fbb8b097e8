"""Worst-case neighbouring datasets under an estimator's stated adjacency.

Replace-one (the default): one record replaced by an adversarial one: at the clip bound
in the direction opposite to the others (seen from the public start), far outside the
bound, off the space (where the data are points of a space), non-finite, and 1e300. A
record is (x, y): where labels are given and private (``private_labels``), each of these
comes twice, with the label kept and with it changed to another label of ``y``, and the
label alone is changed too; where ``y`` holds points of the estimator's space (a
regression), the response is replaced by the adversarial points too, alone and with a
far covariate.
Add/remove (Poisson sampling): one record removed, one far record added. User-level
(matrix completion): a user's whole row replaced (negated, far, emptied, non-finite).
Label-level (structured prediction): one target replaced, the features kept.

Some records lie outside an estimator's domain (a NaN record, a point off the space): an
estimator may refuse them with a clear error (``check_input_domain``); the checks that
compare neighbours skip a neighbour the estimator refuses that way.
"""

import numpy as np

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.learning import PrivateMatrixCompletion, PrivateStructuredPrediction
from geomstats_dp.optim import SquaredDistanceLoss, canonical_point

ROW = 0  # the record replaced
FAR = 1e3  # "far outside the bound": this many clip radii away
HUGE = 1e300
FAR_CAP = 15.0  # the far point's distance at most (cosh(20)^2 overflows the hyperboloid's
# float64 membership: its exponential map then refuses the point)


def adjacency(estimator):
    """The adjacency an estimator states: "replace_one", "add_remove", "user_level" or
    "label_level" (a search or a score: that of the estimator it wraps)."""
    if isinstance(estimator, PrivateMatrixCompletion):
        return "user_level"
    if isinstance(estimator, PrivateStructuredPrediction):
        return "label_level"
    if getattr(estimator, "sampling", None) == "poisson":
        return "add_remove"
    inner = _inner(estimator)
    return "replace_one" if inner is None else adjacency(inner)


def private_labels(estimator, y):
    """Whether a replace-one neighbour may change the label of the replaced record: ``y``
    is given and the estimator does not declare its labels public (``labels="public"``;
    a search or a score: the estimator it wraps)."""
    if y is None:
        return False
    inner = _inner(estimator)
    if inner is not None:
        return private_labels(inner, y)
    return getattr(estimator, "labels", "private") != "public"


def _changed_label(y):
    """``y`` with the label of record ROW changed to the first other value of ``y`` (None
    when every label is the same)."""
    labels = np.asarray(to_numpy(y))
    others = [value for value in np.unique(labels) if value != labels[ROW]]
    if not others:
        return None
    changed = labels.copy()
    changed[ROW] = others[0]
    return changed


def _inner(estimator):
    """The estimator a search or a score wraps, or None."""
    for name in ("estimator", "model"):
        inner = getattr(estimator, name, None)
        if inner is not None and hasattr(inner, "fit"):
            return inner
    return None


def _points_space(estimator, records):
    """The space whose points the records are, or None (feature rows)."""
    inner = _inner(estimator)
    if inner is not None:
        return _points_space(inner, records)
    space = getattr(estimator, "space", None)
    if space is None or tuple(records.shape[1:]) != tuple(space.shape):
        return None
    loss = getattr(estimator, "loss", None)
    if loss is not None and not isinstance(loss, SquaredDistanceLoss):
        return None  # rows a user's loss reads, not points the estimator checks
    return space


def _clip_bound(estimator):
    """The public bound of the records' influence (clip norm or data norm), else 1."""
    for name in ("clip_norm", "data_norm", "radius"):
        value = getattr(estimator, name, None)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    inner = _inner(estimator)
    return 1.0 if inner is None else _clip_bound(inner)


def _point_records(space, records, bound):
    """Adversarial replacements of ``records[ROW]``, a point of ``space``."""
    start = canonical_point(space)
    record = to_backend(records[ROW])
    direction = space.metric.log(record, start)
    norm = float(space.metric.norm(direction, start))
    if norm == 0:
        direction = space.to_tangent(to_backend(np.ones(space.shape)), start)
        norm = float(space.metric.norm(direction, start))
    unit = direction / norm
    off = -2 * to_numpy(record)
    replaced = {
        "opposite_at_bound": to_numpy(space.metric.exp(-bound * unit, start)),
        "far": to_numpy(space.metric.exp(min(FAR * bound, FAR_CAP) * unit, start)),
    }
    if not bool(space.belongs(to_backend(off))):
        replaced["off_space"] = off
    return replaced


def _row_records(record, bound):
    """Adversarial replacements of a feature row ``record``."""
    norm = np.linalg.norm(record)
    unit = record / norm if norm > 0 else np.ones_like(record) / np.sqrt(record.size)
    return {"opposite_at_bound": -bound * unit, "far": FAR * bound * unit}


def _non_finite(record):
    nan, inf = record.copy(), record.copy()
    nan.flat[0], inf.flat[0] = np.nan, np.inf
    return {"nan": nan, "inf": inf, "huge": np.full_like(record, HUGE)}


def _replaced(records, replacements):
    for name, record in replacements.items():
        changed = records.copy()
        changed[ROW] = record
        yield name, changed


def worst_case_neighbours(estimator, X, y=None):
    """Neighbours of (X, y) under the estimator's stated adjacency (``adjacency``).

    Parameters
    ----------
    estimator : estimator
        Unfitted; its parameters (``clip_norm``, ``data_norm``, ``space``, ``sampling``)
        place the adversarial records.
    X : array-like, shape=[n_samples, ...]; for a federation a list of them
    y : array-like, optional
        Labels or targets; under replace-one with private labels (``private_labels``)
        the replaced record's label changes too.

    Yields
    ------
    name : str
        What changed ("far", "nan", "far, label changed", "label changed", "removed",
        "agent 0: far", ...).
    X2, y2 : array-like
        The neighbouring dataset, on the active backend.
    """
    kind = adjacency(estimator)
    bound = _clip_bound(estimator)
    if isinstance(X, (list, tuple)):  # a federation: one record of agent 0
        for name, first, _ in worst_case_neighbours(estimator, X[0]):
            yield f"agent 0: {name}", [first, *X[1:]], y
        return
    if kind == "label_level":
        targets = np.array(to_numpy(y), dtype=float)
        space = estimator.space
        replacements = {**_point_records(space, targets, bound),
                        **_non_finite(targets[ROW])}
        for name, changed in _replaced(targets, replacements):
            yield name, X, to_backend(changed)
        return
    records = np.array(to_numpy(X), dtype=float)
    if kind == "user_level":
        row = records[ROW]
        observed = np.flatnonzero(np.isfinite(row))[:1]  # NaN: a missing rating
        infinite = row.copy()
        infinite[observed] = np.inf
        replacements = {"negated": -row, "far": FAR * bound * np.nan_to_num(row),
                        "empty": np.full_like(row, np.nan), "inf": infinite,
                        "huge": np.where(np.isfinite(row), HUGE, np.nan)}
    elif kind == "add_remove":
        space = _points_space(estimator, records)
        far = (_point_records(space, records, bound)["far"] if space is not None
               else _row_records(records[ROW], bound)["far"])
        yield "removed", to_backend(np.delete(records, ROW, axis=0)), y
        yield "added far", to_backend(np.concatenate([records, far[None]])), y
        return
    else:
        space = _points_space(estimator, records)
        replacements = (_point_records(space, records, bound) if space is not None
                        else _row_records(records[ROW], bound))
        replacements.update(_non_finite(records[ROW]))
    responses = _response_records(estimator, y, bound)
    if responses is not None:  # regression on points: the response is replaced too
        yield from _regression_neighbours(records, replacements, responses, y)
        return
    relabelled = _changed_label(y) if private_labels(estimator, y) else None
    for name, changed in _replaced(records, replacements):
        yield name, to_backend(changed), y
        if relabelled is not None:
            yield f"{name}, label changed", to_backend(changed), relabelled
    if relabelled is not None:
        yield "label changed", X, relabelled


def _response_records(estimator, y, bound):
    """Adversarial replacements of the response ``y[ROW]`` when ``y`` holds points of
    the estimator's space (a regression on the manifold), else None."""
    space = getattr(estimator, "space", None)
    if y is None or space is None:
        return None
    targets = np.array(to_numpy(y), dtype=float)
    if tuple(targets.shape[1:]) != tuple(space.shape) or targets.ndim < 2:
        return None
    return {**_point_records(space, targets, bound), **_non_finite(targets[ROW])}


def _regression_neighbours(records, replacements, responses, y):
    """The covariate replaced (response kept), the response replaced (covariate kept),
    and both replaced ("far" with each response)."""
    targets = np.array(to_numpy(y), dtype=float)
    for name, changed in _replaced(records, replacements):
        yield name, to_backend(changed), y
    for name, changed in _replaced(targets, responses):
        yield f"response {name}", to_backend(records), to_backend(changed)
        far = records.copy()
        far[ROW] = replacements["far"]
        yield f"far, response {name}", to_backend(far), to_backend(changed)


def replaced_records(X, y=None, indices=None):
    """Neighbours of (X, y) with record i replaced by the record n // 2 rows further.

    Yields
    ------
    name : str
    X2, y2 : array-like
        For a list of arrays (a federation), the record is replaced within its agent.
    """
    if isinstance(X, (list, tuple)):
        for agent, records in enumerate(X):
            records = to_numpy(records)
            for index in (range(len(records)) if indices is None else indices):
                X2 = [to_numpy(part) for part in X]
                X2[agent] = records.copy()
                X2[agent][index] = records[(index + len(records) // 2) % len(records)]
                yield f"agent {agent} record {index} replaced", X2, y
        return
    X = to_numpy(X)
    for index in (range(len(X)) if indices is None else indices):
        other = (index + len(X) // 2) % len(X)
        X2 = X.copy()
        X2[index] = X[other]
        y2 = None
        if y is not None:
            y2 = to_numpy(y).copy()
            y2[index] = to_numpy(y)[other]
        yield f"record {index} replaced by record {other}", X2, y2


def default_neighbours(estimator, X, y=None):
    """Every record replaced in turn (``replaced_records``) under replace-one adjacency;
    under another (add/remove, user level, label level), the worst-case neighbours of
    ``_neighbours``, which follow it."""
    if adjacency(estimator) == "replace_one":
        return replaced_records(X, y)
    return worst_case_neighbours(estimator, X, y)
