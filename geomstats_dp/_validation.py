"""Argument checks shared by the whole package; each error names the argument."""

import math
import numbers

import numpy as np

from geomstats_dp._backend import to_backend, to_numpy

MAX_LISTED = 10


def check_positive_finite(value, name):
    """Return ``value`` as a float after checking that it is finite and > 0."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    value = float(value)
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be finite and > 0, got {value}")
    return value


def check_probability(value, name, allow_zero=False):
    """Return ``value`` as a float after checking it lies in (0, 1) ([0, 1) if allowed)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    value = float(value)
    low_ok = value >= 0 if allow_zero else value > 0
    if not (low_ok and value < 1):
        interval = "[0, 1)" if allow_zero else "(0, 1)"
        raise ValueError(f"{name} must lie in {interval}, got {value}")
    return value


def check_positive_int(value, name, minimum=1):
    """Return ``value`` as an int after checking it is an integer >= ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return int(value)


def check_finite_array(array, name):
    """Raise ValueError naming the first index of ``array`` holding NaN or inf.

    A finite sum proves every entry finite (NaN and inf propagate), in one pass with no
    temporary array; only a non-finite sum (or an overflow) needs the entrywise test.
    """
    if math.isfinite(np.sum(array)):
        return
    bad = ~np.isfinite(array)
    if bad.any():
        index = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(f"{name} holds a non-finite value at index {index}")


def check_on_space(space, points, atol, name):
    """Raise ValueError listing the indices of the points of ``points`` not on ``space``.

    Parameters
    ----------
    space : Manifold
    points : numpy.ndarray, shape=[n, *space.shape]
    atol : float
        Tolerance of ``space.belongs``.
    name : str
        Name of the argument, for the message.
    """
    on_space = np.atleast_1d(to_numpy(space.belongs(to_backend(points), atol=atol)))
    off = np.flatnonzero(~on_space.astype(bool))
    if off.size:
        listed = off[:MAX_LISTED].tolist()
        more = f" and {off.size - MAX_LISTED} more" if off.size > MAX_LISTED else ""
        raise ValueError(
            f"{name} holds {off.size} points not on {type(space).__name__} (atol={atol}): "
            f"indices {listed}{more}"
        )
