"""Checks of the data handed to an estimator's ``fit``: type, shape, finiteness, membership."""

import numpy as np

from geomstats_dp._dask import check_dask_array, is_dask_array
from geomstats_dp._validation import check_finite_array
from geomstats_dp.distributions.membership import check_on_space


def check_array(X, name, min_ndim=2, lazy=False):
    """Return ``X`` as a float64 numpy array, checking its type and number of axes only.

    With ``lazy=True`` a Dask array stays one (float64, chunked along the rows;
    ``_dask.check_dask_array``): its values are not read; otherwise it is gathered.

    Raises
    ------
    TypeError
        Complex values (their imaginary part would be lost), strings or bytes (even
        numeric ones: ``"1.5"`` is not a number).
    ValueError
        Values that are not numbers, or fewer than ``min_ndim`` axes.
    """
    if lazy and is_dask_array(X):
        return check_dask_array(X, name, min_ndim)
    if hasattr(X, "detach"):
        X = X.detach().cpu().numpy()
    raw = np.asarray(X)
    if np.iscomplexobj(raw):
        raise TypeError(f"{name} must hold real numbers, got complex values ({raw.dtype})")
    if raw.dtype.kind in "USO" and (raw.dtype.kind != "O" or any(
            isinstance(value, (str, bytes)) for value in raw.flat)):
        raise TypeError(f"{name} must hold real numbers, got strings ({raw.dtype})")
    try:
        array = np.asarray(raw, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{name} must hold real numbers: {error}") from None
    if array.ndim < min_ndim:
        raise ValueError(
            f"{name} must have at least {min_ndim} axes [n_samples, ...], got shape "
            f"{array.shape}"
        )
    return array


def check_sample_count(n_samples, name, min_samples=2):
    """Raise ValueError if fewer than ``min_samples`` records are given."""
    if n_samples < min_samples:
        raise ValueError(f"{name} must hold at least {min_samples} points, got {n_samples}")


def check_shape(space, X, min_samples=2, name="X", lazy=False):
    """Return ``X`` as float64 numpy [n, *space.shape], checking only its shape.

    ``lazy``: as in ``check_array`` (a Dask array is kept, not gathered).

    The shape (and so n, public under replace-one adjacency) is all that calibration
    needs: the values are checked by ``check_values`` once the budget has been checked.

    Raises
    ------
    ValueError
        Wrong shape or fewer than ``min_samples`` points.
    """
    points = check_array(X, name, min_ndim=1, lazy=lazy)
    check_record_shape(points, tuple(space.shape), name)
    check_sample_count(points.shape[0], name, min_samples)
    return points


def check_record_shape(points, shape, name="X"):
    """Raise ValueError unless ``points`` has shape [n_samples, *shape] (both named)."""
    shape = tuple(shape)
    if points.ndim != len(shape) + 1 or tuple(points.shape[1:]) != shape:
        raise ValueError(
            f"{name} must have shape [n_samples, *{shape}], got {tuple(points.shape)}"
        )


def check_values(space, points, atol, name="X"):
    """Raise ValueError if ``points`` hold NaN/inf or points off ``space`` (indices named).

    Parameters
    ----------
    space : Manifold
    points : numpy.ndarray, shape=[n_samples, *space.shape]
    atol : float
        Tolerance of ``space.belongs``.
    name : str
        The argument's name, for the messages.
    """
    check_finite_array(points, name)
    check_on_space(space, points, atol, name)


def check_points(space, X, atol, min_samples=2, name="X"):
    """``check_shape`` then ``check_values``; returns float64 numpy [n, *space.shape]."""
    points = check_shape(space, X, min_samples, name)
    check_values(space, points, atol, name)
    return points
