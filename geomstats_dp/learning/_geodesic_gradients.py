"""Per-record gradients of the geodesic regression loss in closed form, on the spaces of
constant curvature.

The model is y = Exp_p(x v) (Fletcher 2013, "Geodesic regression and the theory of least
squares on Riemannian manifolds", IJCV), with the loss d(Exp_p(x v), y)^2 / 2 per record.
With u = x v, L = |u|_p, yhat = Exp_p(u) and the residual eps = Log_yhat(y) parallel
transported back to p along the geodesic (e = e_par + e_perp, e_par along u), the adjoint
Jacobi fields on curvature K give

    grad_p = -(e_par + c_K(L) e_perp),      grad_v = -x (e_par + s_K(L) e_perp),

with c_K(L) = cos(sqrt(K) L), s_K(L) = sin(sqrt(K) L) / (sqrt(K) L) for K > 0, cosh and
sinh for K < 0, and 1 for K = 0: the coefficients of the exponential map itself,
Exp_p(u) = c_K(L) p + s_K(L) u (unit curvature). The gradient in p is the one along a geodesic variation of
p with v parallel transported.
"""

import geomstats.backend as gs
from geomstats.geometry.euclidean import Euclidean, EuclideanMetric
from geomstats.geometry.hyperboloid import Hyperboloid, HyperboloidMetric
from geomstats.geometry.hypersphere import Hypersphere, HypersphereMetric

SUPPORTED = ((Euclidean, EuclideanMetric, 0), (Hypersphere, HypersphereMetric, 1),
             (Hyperboloid, HyperboloidMetric, -1))
SUPPORTED_NAMES = "Euclidean, Hypersphere or Hyperboloid (extrinsic coordinates)"
SMALL = 1e-8  # below this |u| the Taylor limits of the factors are used


def curvature_of(space):
    """The constant sectional curvature K of ``space`` (0, 1 or -1).

    Raises
    ------
    ValueError
        When ``space`` is not one of ``SUPPORTED`` with its own metric.
    """
    for space_class, metric_class, curvature in SUPPORTED:
        if isinstance(space, space_class) and isinstance(
                getattr(space, "metric", None), metric_class) and len(space.shape) == 1 \
                and getattr(space, "default_coords_type", "extrinsic") == "extrinsic":
            return curvature
    raise ValueError(f"space must be {SUPPORTED_NAMES}, with its default metric (the "
                     f"spaces of constant curvature where the gradients have a closed "
                     f"form), got {type(space).__name__}")


def _factors(curvature, lengths):
    """(c_K(L), s_K(L)) for lengths L, shape=[k] each."""
    if curvature == 0:
        ones = gs.ones_like(lengths)
        return ones, ones
    safe = gs.where(lengths > SMALL, lengths, gs.ones_like(lengths))
    if curvature > 0:
        cos, sin = gs.cos(safe), gs.sin(safe)
    else:
        cos, sin = gs.cosh(safe), gs.sinh(safe)
    small = lengths <= SMALL
    return gs.where(small, gs.ones_like(lengths), cos), \
        gs.where(small, gs.ones_like(lengths), sin / safe)


def _exp(space, curvature, point, shifts):
    """Exp_p(u_k) = c_K(L) p + s_K(L) u_k, L = |u_k|_p, in closed form (no projection back
    onto the space, which refuses a far point by raising: a far record is non-finite
    instead, and counts as zero); also returns the lengths and the factors.

    Returns
    -------
    points : array-like, shape=[k, *space.shape]
    lengths, cos, sinc : array-like, shape=[k]
    """
    lengths = space.metric.norm(shifts, point)
    cos, sinc = _factors(curvature, lengths)
    points = gs.einsum("k,...->k...", cos, point) + gs.einsum("k,k...->k...", sinc, shifts)
    return points, lengths, cos, sinc


def predict(space, point, tangent_vec, x):
    """Exp_p(x_i v) for each x_i, shape=[k, *space.shape].

    Parameters
    ----------
    space : Manifold
        One of ``SUPPORTED``.
    point : array-like, shape=[*space.shape]
    tangent_vec : array-like, shape=[*space.shape]
    x : array-like, shape=[k]
    """
    shifts = gs.einsum("k,...->k...", x, tangent_vec)
    return _exp(space, curvature_of(space), point, shifts)[0]


def losses(space, point, tangent_vec, x, y):
    """d(Exp_p(x_i v), y_i)^2 / 2, shape=[k]."""
    return space.metric.squared_dist(predict(space, point, tangent_vec, x), y) / 2


def gradients(space, curvature, point, tangent_vec, x, y):
    """The per-record Riemannian gradients of the loss in (p, v), tangent at p.

    Parameters
    ----------
    space : Manifold
    curvature : int
        K of ``space`` (``curvature_of``).
    point : array-like, shape=[*space.shape]
        p.
    tangent_vec : array-like, shape=[*space.shape]
        v, tangent at p.
    x : array-like, shape=[k]
    y : array-like, shape=[k, *space.shape]

    Returns
    -------
    grad_point, grad_vec : array-like, shape=[k, *space.shape] each
    """
    metric = space.metric
    shifts = gs.einsum("k,...->k...", x, tangent_vec)
    fitted, lengths, cos, sinc = _exp(space, curvature, point, shifts)
    residuals = metric.log(y, fitted)
    back = metric.parallel_transport(residuals, fitted, end_point=point)
    back = space.to_tangent(back, point)
    units = gs.einsum("k,k...->k...", 1.0 / gs.where(lengths > SMALL, lengths,
                                                     gs.ones_like(lengths)), shifts)
    along = gs.einsum("k,k...->k...", metric.inner_product(back, units, point), units)
    normal = back - along
    grad_point = -(along + gs.einsum("k,k...->k...", cos, normal))
    grad_vec = -gs.einsum("k,k...->k...", x, along + gs.einsum("k,k...->k...", sinc, normal))
    return grad_point, grad_vec
