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
from geomstats_dp.optim.affine_log import known_factors
from geomstats_dp.optim.geodesics import geodesics_for
from geomstats_dp.optim.losses import SquaredDistanceLoss


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


def weighted_log_sum(space, points, weights, base_point):
    """sum_i w_i Log_x(x_i): minus the weighted sum of the squared distance's gradients
    (``SquaredDistanceLoss.gradient_sums``: on SPD with the affine-invariant metric one
    ``eigh`` per point, ``AffineLogSums``; else geomstats' ``log``).

    Parameters
    ----------
    space : Manifold
    points : array-like, shape=[k, *space.shape]
    weights : array-like, shape=[k]
    base_point : array-like, shape=[*space.shape]

    Returns
    -------
    tangent_vec : array-like, shape=[*space.shape]
    """
    weights = gs.cast(gs.array(weights), points.dtype)
    _, negated_sum = SquaredDistanceLoss(space).gradient_sums(base_point)(points)
    return -negated_sum(weights)


def tangent_mean(space, points, weights, base_point, geodesics=None, step_size=1.0):
    """Exp_x(eta sum_i w_i Log_x(x_i)), the tangent mean at x for eta = 1 (Huang et al.
    2024, eq. (3.2)); a gradient step of size eta on the weighted Frechet function.

    Parameters
    ----------
    space : Manifold
    points : array-like, shape=[k, *space.shape]
        The points x_i.
    weights : array-like, shape=[k]
        Non-negative, summing to 1.
    base_point : array-like, shape=[*space.shape]
    geodesics : Geodesics, optional
        ``optim.geodesics.geodesics_for(space)`` (closed forms on SPD), made if None.
    step_size : float
        eta.

    Returns
    -------
    point : array-like, shape=[*space.shape]
    """
    geodesics = geodesics_for(space) if geodesics is None else geodesics
    return geodesics.exp(step_size * weighted_log_sum(space, points, weights, base_point),
                         base_point)


def karcher_mean(space, points, weights, base_point, n_iter=20, step_size=1.0, tol=0.0):
    """Weighted Karcher mean by at most ``n_iter`` tangent-mean steps (of size
    ``step_size``) started at ``base_point``.

    No stopping rule reads a record: the points are private releases already, so a stop
    at convergence is post-processing and only a matter of cost. On SPD with the
    affine-invariant metric each step is one ``eigh`` per point and one for the exp map,
    the square-root factor of each iterate kept from the map that produced it
    (``optim.geodesics``).

    Parameters
    ----------
    space : Manifold
    points : array-like, shape=[k, *space.shape]
    weights : array-like, shape=[k]
        Non-negative, summing to 1.
    base_point : array-like, shape=[*space.shape]
    n_iter : int
    step_size : float
    tol : float
        Stop after the first step whose tangent vector has an ambient norm at most
        ``tol`` times the point's (at rounding level for ``tol`` near 1e-13, where the
        iteration has converged); 0 runs the ``n_iter`` steps.

    Returns
    -------
    point : array-like, shape=[*space.shape]
    """
    n_iter = check_positive_int(n_iter, "n_iter")
    geodesics = geodesics_for(space)
    point = base_point
    with known_factors(geodesics.known_factor):
        for _ in range(n_iter):
            step = step_size * weighted_log_sum(space, points, weights, point)
            size, scale = gs.sqrt(gs.sum(step**2)), gs.sqrt(gs.sum(point**2))
            point = geodesics.exp(step, point)
            if float(size) <= tol * float(scale):
                break
    return point
