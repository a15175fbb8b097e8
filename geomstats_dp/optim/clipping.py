"""Clipping tangent vectors in the Riemannian norm: clip_C(v) = min(1, C / ||v||_x) v, and
the sensitivity of a sum of clipped vectors (the one home of 2C/n, used by every
mechanism)."""

import math

import geomstats.backend as gs


def clip_factors(norms, clip_norm):
    """Factors min(1, C / norm), exactly 1 for norms <= C; 0 for non-finite norms.

    Parameters
    ----------
    norms : array-like, shape=[k]
    clip_norm : float

    Returns
    -------
    factors : array-like, shape=[k]
    """
    ceilings = gs.maximum(norms, clip_norm)  # C / inf = 0; NaN stays NaN
    return gs.where(norms < math.inf, clip_norm / ceilings, 0.0)  # False for inf, NaN


def zero_nonfinite(tangent_vecs, norms):
    """Replace the vectors whose norm is not finite by zero (so they add nothing).

    Parameters
    ----------
    tangent_vecs : array-like, shape=[k, *shape]
    norms : array-like, shape=[k]

    Returns
    -------
    tangent_vecs : array-like, shape=[k, *shape]
    """
    finite = norms < math.inf  # False for inf and NaN
    if bool(gs.all(finite)):
        return tangent_vecs
    mask = gs.reshape(finite, gs.shape(finite) + (1,) * (tangent_vecs.ndim - 1))
    return gs.where(mask, tangent_vecs, gs.zeros_like(tangent_vecs))


def clip_tangent_vectors(metric, tangent_vecs, base_point, clip_norm):
    """Scale each tangent vector to Riemannian norm at most ``clip_norm``.

    Vectors with norm <= clip_norm are returned unchanged; a vector whose norm is not
    finite becomes zero (its contribution to any sum is then bounded too).

    Parameters
    ----------
    metric : RiemannianMetric
    tangent_vecs : array-like, shape=[k, *shape]
        Tangent at ``base_point``.
    base_point : array-like, shape=[*shape]
    clip_norm : float

    Returns
    -------
    clipped : array-like, shape=[k, *shape]
    """
    norms = metric.norm(tangent_vecs, base_point)
    factors = clip_factors(norms, clip_norm)
    return gs.einsum("k,k...->k...", factors, zero_nonfinite(tangent_vecs, norms))


def clipped_sum_sensitivity(clip_norm, denominator, factor=1.0, adjacency="replace_one",
                            multiplier=1.0):
    """L2 sensitivity of sum_i clip_C(v_i) / denominator, times the weight factor (times
    ``multiplier``: the noise standard deviation of noise multiplier z).

    A record's clipped vector has norm <= C, so replacing it moves the sum by at most 2C
    and adding or removing it by at most C: 2C/n for a full-batch mean, 2C/b for a batch
    drawn without replacement, C/b for a Poisson batch (add/remove adjacency).

    Parameters
    ----------
    clip_norm : float
        C.
    denominator : int or float
        n (a full-batch mean) or b (a batch).
    factor : float
        The public weight factor n max_i w_i (exactly 1 for uniform weights).
    adjacency : {"replace_one", "add_remove"}
    multiplier : float
        z; the product is taken in the order z C factor / denominator.

    Returns
    -------
    sensitivity : float
    """
    per_record = clip_norm if adjacency == "add_remove" else 2 * clip_norm
    return multiplier * per_record * factor / denominator
