"""The projection of a noisy tangent vector onto a ball of public radius.

If v = m + e with |m| <= B (the noiseless value, its norm bounded by a public B) and e
the noise, the projection v min(1, B / |v|) onto the (convex) ball of radius B of the
tangent space is no further from m than v is. Applied to a released v with a public B it
is post-processing; it bounds the step the exponential map takes, which keeps a very
noisy step from leaving the manifold numerically (on SPD matrices an unbounded step
overflows the eigenvalues of the next point).
"""

from geomstats_dp.optim.clipping import clip_factors


def cap_norm(metric, tangent_vec, base_point, max_norm):
    """``tangent_vec`` min(1, max_norm / |tangent_vec|) in ``metric`` at ``base_point``.

    Parameters
    ----------
    metric : RiemannianMetric
    tangent_vec : array-like, shape=[*space.shape]
    base_point : array-like, shape=[*space.shape]
    max_norm : float
        B > 0, public.

    Returns
    -------
    tangent_vec : array-like, shape=[*space.shape]
    """
    return clip_factors(metric.norm(tangent_vec, base_point), max_norm) * tangent_vec
