"""Weighted means of points on a manifold: the tangent mean at a point, the Karcher mean,
and where a chain of noisy points has settled.

PriRFed's server aggregates the agents' replies with them and averages its settled round
points, and the two-stage release averages its settled step points; all inputs are
released already (post-processing).
"""

import geomstats.backend as gs
import numpy as np

from geomstats_dp._backend import to_numpy
from geomstats_dp._validation import check_positive_int


def first_settled(space, points, thresholds):
    """The first k >= 1 with d(x_{k-1}, x_k) <= thresholds[k - 1], else the last index.

    A chain of noisy steps has settled once a step moves its point by no more than the
    noise explains; the points before carry the start's bias.

    Parameters
    ----------
    space : Manifold
    points : list of array-like, each shape=[*space.shape]
        The chain x_0, ..., x_{K-1}, K >= 2.
    thresholds : array-like, shape=[K - 1]

    Returns
    -------
    index : int
    """
    moves = to_numpy(space.metric.dist(gs.stack(points[:-1]), gs.stack(points[1:])))
    settled = np.flatnonzero(np.reshape(moves, -1) <= np.asarray(thresholds, dtype=float))
    return int(settled[0]) + 1 if len(settled) else len(points) - 1


def tangent_mean(space, points, weights, base_point):
    """Exp_x(sum_i w_i Log_x(x_i)), the tangent mean at x (Huang et al. 2024, eq. (3.2)).

    Parameters
    ----------
    space : Manifold
    points : array-like, shape=[k, *space.shape]
        The points x_i.
    weights : array-like, shape=[k]
        Non-negative, summing to 1.
    base_point : array-like, shape=[*space.shape]

    Returns
    -------
    point : array-like, shape=[*space.shape]
    """
    logs = space.metric.log(points, base_point)
    weights = gs.cast(gs.array(weights), logs.dtype)
    shape = (-1,) + (1,) * (logs.ndim - 1)
    direction = gs.sum(gs.reshape(weights, shape) * logs, axis=0)
    return space.metric.exp(direction, base_point)


def karcher_mean(space, points, weights, base_point, n_iter=20):
    """Weighted Karcher mean by ``n_iter`` tangent-mean steps started at ``base_point``.

    A fixed number of iterations (no data-dependent stopping; the points are private
    releases already, so this is only a matter of cost).
    """
    n_iter = check_positive_int(n_iter, "n_iter")
    point = base_point
    for _ in range(n_iter):
        point = tangent_mean(space, points, weights, point)
    return point
