"""Membership of points in a space, checked in one pass per point where the space's
metric has a closed-form transport (``registry.membership_checker``), else by geomstats'
``belongs``."""

import math

import numpy as np

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp._validation import MAX_LISTED
from geomstats_dp.distributions.registry import membership_checker

CHECK_CHUNK_BYTES = 32 * 2**20


def _belongs(space, points, atol):
    """Membership of every point, [n] bool: the family's closed-form test (one pass over
    each point) in chunks of ``CHECK_CHUNK_BYTES``, or geomstats' ``belongs``."""
    checker = membership_checker(space)
    if checker is None or points.shape[0] == 0:
        found = space.belongs(to_backend(points), atol=atol)
        return np.atleast_1d(to_numpy(found)).astype(bool)
    row_bytes = max(8 * math.prod(points.shape[1:]), 1)
    chunk = max(1, CHECK_CHUNK_BYTES // row_bytes)
    return np.concatenate(
        [checker.belongs(points[start : start + chunk], atol)
         for start in range(0, points.shape[0], chunk)]
    )


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
    off = np.flatnonzero(~_belongs(space, points, atol))
    if off.size:
        listed = off[:MAX_LISTED].tolist()
        more = f" and {off.size - MAX_LISTED} more" if off.size > MAX_LISTED else ""
        raise ValueError(
            f"{name} holds {off.size} points not on {type(space).__name__} (atol={atol}): "
            f"indices {listed}{more}"
        )
