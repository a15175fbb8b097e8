"""Server-side aggregation of PriRFed: the tangent mean and the weighted Karcher mean.

Both are post-processing of the agents' (already private) replies.
"""

import geomstats.backend as gs

from geomstats_dp._validation import check_positive_int

AGGREGATIONS = ("tangent_mean", "karcher_mean")


def tangent_mean(space, points, weights, base_point):
    """Exp_x(sum_i w_i Log_x(x_i)): Huang et al. (2024), eq. (3.2), at the broadcast point x.

    Parameters
    ----------
    space : Manifold
    points : array-like, shape=[k, *space.shape]
        The agents' replies.
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

    A fixed number of iterations (no data-dependent stopping; the replies are private
    already, so this is only a matter of cost).
    """
    n_iter = check_positive_int(n_iter, "n_iter")
    point = base_point
    for _ in range(n_iter):
        point = tangent_mean(space, points, weights, point)
    return point


def aggregate(space, points, weights, base_point, method="tangent_mean"):
    """Aggregate the replies with ``method`` in ``AGGREGATIONS``."""
    if method == "tangent_mean":
        return tangent_mean(space, points, weights, base_point)
    if method == "karcher_mean":
        return karcher_mean(space, points, weights, base_point)
    raise ValueError(f"aggregation must be one of {AGGREGATIONS}, got {method!r}")
