"""Server-side aggregation of PriRFed: the tangent mean, the weighted Karcher mean
(``optim.karcher``), of replied points or of replied tangent vectors, and the shrinkage
of a noisy step.

All are post-processing of the agents' (already private) replies and of public noise.
"""

import geomstats.backend as gs

from geomstats_dp.optim.geodesics import geodesics_for
from geomstats_dp.optim.karcher import karcher_mean, tangent_mean

AGGREGATIONS = ("tangent_mean", "karcher_mean")


def aggregate(space, points, weights, base_point, method="tangent_mean"):
    """Aggregate the replies with ``method`` in ``AGGREGATIONS``."""
    if method == "tangent_mean":
        return tangent_mean(space, points, weights, base_point)
    if method == "karcher_mean":
        return karcher_mean(space, points, weights, base_point)
    raise ValueError(f"aggregation must be one of {AGGREGATIONS}, got {method!r}")


def aggregate_steps(space, steps, weights, base_point, method="tangent_mean",
                    noise_norm=None):
    """Aggregate replies given as tangent vectors v_i at x, the broadcast point.

    "tangent_mean": Exp_x(s sum_i w_i v_i), their weighted mean read as they were
    released, with no Log of an Exp in between (on the sphere a reply longer than pi
    would be read back as a different, shorter vector), s = 1, or with ``noise_norm``
    nu the positive-part factor of ``shrink_step`` applied to the mean step itself;
    "karcher_mean": the Karcher mean of the points Exp_x(v_i), as ``aggregate``.

    Parameters
    ----------
    space : Manifold
    steps : array-like, shape=[k, *space.shape]
        The replies v_i, tangent at ``base_point``.
    weights : array-like, shape=[k]
        Non-negative, summing to 1.
    base_point : array-like, shape=[*space.shape]
    method : {"tangent_mean", "karcher_mean"}
    noise_norm : float, optional
        nu, the expected norm of the mean step's noise ("tangent_mean" only).

    Returns
    -------
    point : array-like, shape=[*space.shape]
    """
    exp = geodesics_for(space).exp
    if method == "tangent_mean":
        step = gs.einsum("k,k...->...", weights, steps)
        if noise_norm is not None:
            step = shrink_factor(space, step, base_point, noise_norm) * step
        return exp(step, base_point)
    if method == "karcher_mean":
        points = gs.stack([exp(step, base_point) for step in steps])
        return karcher_mean(space, points, weights, base_point)
    raise ValueError(f"aggregation must be one of {AGGREGATIONS}, got {method!r}")


def shrink_step(space, point, base_point, noise_norm):
    """Exp_x(s v), v = Log_x(p), s = max(0, |v|^2 - nu^2) / |v|^2: a noisy step shrunk.

    If v = m + e with e the release's noise, E|e|^2 = nu^2 (public), the factor that
    minimises E|s v - m|^2 is |m|^2 / (|m|^2 + nu^2); s plugs in the unbiased estimate
    |v|^2 - nu^2 of |m|^2, floored at 0: positive-part shrinkage of the James-Stein type
    (James & Stein 1961) towards x, with the constant d (the flat-space risk of the
    noisy step is lowered for every m when d >= 5). A function of the released point
    and the public noise only (post-processing).

    Parameters
    ----------
    space : Manifold
    point : array-like, shape=[*space.shape]
        The noisy release p.
    base_point : array-like, shape=[*space.shape]
        x, the point the step started from.
    noise_norm : float
        nu, the expected norm of the release's noise in the tangent space at x.

    Returns
    -------
    point : array-like, shape=[*space.shape]
    """
    step = space.metric.log(point, base_point)
    return space.metric.exp(shrink_factor(space, step, base_point, noise_norm) * step,
                            base_point)


def shrink_factor(space, step, base_point, noise_norm):
    """max(0, |v|^2 - nu^2) / |v|^2 for the noisy step v at x (``shrink_step``)."""
    squared = space.metric.squared_norm(step, base_point)
    return gs.maximum(squared - noise_norm**2, 0.0) / gs.maximum(squared, 1e-300)
