"""Checks of the data handed to an estimator's ``fit``: shape, finiteness, membership."""

import numpy as np

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp._validation import check_finite_array

MAX_LISTED = 10


def check_shape(space, X, min_samples=2):
    """Return ``X`` as float64 numpy [n, *space.shape], checking only its shape.

    The shape (and so n, public under replace-one adjacency) is all that calibration
    needs: the values are checked by ``check_values`` once the budget has been checked.

    Raises
    ------
    ValueError
        Wrong shape or fewer than ``min_samples`` points.
    """
    points = to_numpy(X)
    shape = tuple(space.shape)
    if points.ndim != len(shape) + 1 or points.shape[1:] != shape:
        raise ValueError(f"X must have shape [n_samples, *{shape}], got {points.shape}")
    if points.shape[0] < min_samples:
        raise ValueError(f"X must hold at least {min_samples} points, got {points.shape[0]}")
    return points


def check_values(space, points, atol):
    """Raise ValueError if ``points`` hold NaN/inf or points off ``space`` (indices named).

    Parameters
    ----------
    space : Manifold
    points : numpy.ndarray, shape=[n_samples, *space.shape]
    atol : float
        Tolerance of ``space.belongs``.
    """
    check_finite_array(points, "X")
    on_space = np.atleast_1d(to_numpy(space.belongs(to_backend(points), atol=atol)))
    off = np.flatnonzero(~on_space.astype(bool))
    if off.size:
        listed = off[:MAX_LISTED].tolist()
        more = f" and {off.size - MAX_LISTED} more" if off.size > MAX_LISTED else ""
        raise ValueError(
            f"X holds {off.size} points not on {type(space).__name__} (atol={atol}): "
            f"indices {listed}{more}"
        )


def check_points(space, X, atol, min_samples=2):
    """``check_shape`` then ``check_values``; returns float64 numpy [n, *space.shape]."""
    points = check_shape(space, X, min_samples)
    check_values(space, points, atol)
    return points
