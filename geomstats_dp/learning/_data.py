"""Checks of the data handed to an estimator's ``fit``: shape, finiteness, membership."""

from geomstats_dp._backend import to_numpy
from geomstats_dp._validation import check_finite_array, check_on_space


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
    check_on_space(space, points, atol, "X")


def check_points(space, X, atol, min_samples=2):
    """``check_shape`` then ``check_values``; returns float64 numpy [n, *space.shape]."""
    points = check_shape(space, X, min_samples)
    check_values(space, points, atol)
    return points
