"""Euclidean gradients (in the ambient coordinates) -> Riemannian gradients, per metric.

For f on M and G its Euclidean gradient in the coordinates geomstats stores points in,
the Riemannian gradient is the tangent vector grad f(x) with <grad f(x), v>_x = <G, v>_F
for every tangent v. With S = sym(G) = (G + G^T) / 2:

- induced (embedded) metrics - Euclidean and matrix spaces, sphere, Grassmannian as
  projectors: the orthogonal projection ``space.to_tangent(G, x)``;
- Stiefel, canonical metric <U, V>_W = tr(U^T (I - W W^T / 2) V): G - W G^T W;
- SPD affine-invariant, <A, B>_X = tr(X^-1 A X^-1 B): X S X;
- SPD Bures-Wasserstein, <A, B>_X = tr(L_X(A) B) / 2 with X L + L X = A: 2 (X S + S X);
- SPD Log-Euclidean, <A, B>_X = <D log_X(A), D log_X(B)>_F: with X = P diag(l) P^T and
  a = log l, grad = P ((P^T S P) * E * E) P^T where E_rs = (l_r - l_s) / (a_r - a_s)
  (E_rr = l_r) is the divided difference of exp, i.e. (D log_X)^-1;
- Poincare ball, <u, v>_x = 4 <u, v> / (1 - |x|^2)^2: (1 - |x|^2)^2 / 4 G;
- hyperboloid, Minkowski <u, v>_L = -u_0 v_0 + sum u_i v_i: h = J G with
  J = diag(-1, 1, ..., 1), then the Minkowski projection h + <x, h>_L x;
- ``ScalarProductMetric`` (scale * g): the gradient of g divided by scale.
"""

import math

import geomstats.backend as gs
from geomstats.geometry.euclidean import EuclideanMetric
from geomstats.geometry.grassmannian import GrassmannianCanonicalMetric
from geomstats.geometry.hyperboloid import HyperboloidMetric
from geomstats.geometry.hypersphere import HypersphereMetric
from geomstats.geometry.matrices import Matrices
from geomstats.geometry.poincare_ball import PoincareBallMetric
from geomstats.geometry.spd_matrices import (
    SPDAffineMetric,
    SPDBuresWassersteinMetric,
    SPDLogEuclideanMetric,
)
from geomstats.geometry.stiefel import StiefelCanonicalMetric

from geomstats_dp.distributions.registry import unwrap_metric


def _projection(space, euclidean_grads, base_point):
    return space.to_tangent(euclidean_grads, base_point)


def _stiefel_canonical(space, euclidean_grads, base_point):
    return euclidean_grads - Matrices.mul(
        base_point, Matrices.transpose(euclidean_grads), base_point
    )


def _spd_affine(space, euclidean_grads, base_point):
    return Matrices.mul(base_point, Matrices.to_symmetric(euclidean_grads), base_point)


def _spd_bures_wasserstein(space, euclidean_grads, base_point):
    sym = Matrices.to_symmetric(euclidean_grads)
    return 2 * (Matrices.mul(base_point, sym) + Matrices.mul(sym, base_point))


def _exp_divided_differences(log_eigvals):
    """E_rs = (e^a_r - e^a_s) / (a_r - a_s), E_rr = e^a_r, computed stably.

    E_rs = exp((a_r + a_s) / 2) * sinh(h) / h with h = (a_r - a_s) / 2.
    """
    half_sum = (log_eigvals[..., :, None] + log_eigvals[..., None, :]) / 2
    half_diff = (log_eigvals[..., :, None] - log_eigvals[..., None, :]) / 2
    small = gs.abs(half_diff) < 1e-6
    safe = gs.where(small, gs.ones_like(half_diff), half_diff)
    sinhc = gs.where(small, 1 + half_diff**2 / 6, gs.sinh(safe) / safe)
    return gs.exp(half_sum) * sinhc


def _spd_log_euclidean(space, euclidean_grads, base_point):
    eigvals, eigvecs = gs.linalg.eigh(base_point)
    divided = _exp_divided_differences(gs.log(eigvals))
    rotated = Matrices.mul(
        Matrices.transpose(eigvecs), Matrices.to_symmetric(euclidean_grads), eigvecs
    )
    return Matrices.mul(eigvecs, rotated * divided**2, Matrices.transpose(eigvecs))


def _poincare_ball(space, euclidean_grads, base_point):
    conformal = (1 - gs.sum(base_point**2, axis=-1)) ** 2 / 4
    return gs.einsum("...,...i->...i", conformal, euclidean_grads)


def _hyperboloid(space, euclidean_grads, base_point):
    signs = gs.concatenate([-gs.ones((1,)), gs.ones((space.shape[-1] - 1,))])
    return space.to_tangent(euclidean_grads * signs, base_point)


_CONVERSIONS = {
    EuclideanMetric: _projection,  # includes MatricesMetric and SPDEuclideanMetric
    HypersphereMetric: _projection,
    GrassmannianCanonicalMetric: _projection,
    StiefelCanonicalMetric: _stiefel_canonical,
    SPDAffineMetric: _spd_affine,
    SPDBuresWassersteinMetric: _spd_bures_wasserstein,
    SPDLogEuclideanMetric: _spd_log_euclidean,
    PoincareBallMetric: _poincare_ball,
    HyperboloidMetric: _hyperboloid,
}


def conversion_for(space):
    """Return ``(conversion, scale)`` for the space's metric, or raise TypeError.

    ``conversion(space, euclidean_grads, base_point)`` gives the Riemannian gradient of
    the unscaled metric; divide it by ``scale`` for ``ScalarProductMetric``.
    """
    metric, scale = unwrap_metric(space.metric)
    for metric_class in type(metric).__mro__:
        if metric_class in _CONVERSIONS:
            return _CONVERSIONS[metric_class], scale
    supported = ", ".join(sorted(cls.__name__ for cls in _CONVERSIONS))
    raise TypeError(
        f"no Euclidean-to-Riemannian gradient conversion for {type(metric).__name__}; "
        f"supported metrics: {supported}"
    )


def riemannian_gradient(space, euclidean_grads, base_point):
    """Convert Euclidean gradients at ``base_point`` to Riemannian gradients.

    Parameters
    ----------
    space : Manifold
        Equipped with one of the supported metrics (see the module docstring), possibly
        scaled by ``ScalarProductMetric``.
    euclidean_grads : array-like, shape=[..., *space.shape]
        Gradients in the ambient coordinates.
    base_point : array-like, shape=[*space.shape]

    Returns
    -------
    riemannian_grads : array-like, shape=[..., *space.shape]
        Tangent at ``base_point``.
    """
    conversion, scale = conversion_for(space)
    grads = conversion(space, euclidean_grads, base_point)
    return grads if scale == 1.0 else grads / scale


def conversion_matrix(space, base_point):
    """The tangent vectors r_j with ``to_tangent(riemannian_gradient(G))`` = sum_j G_j r_j.

    Both maps are linear in the Euclidean gradient G at a fixed base point: r_j is the
    image of the j-th ambient unit vector (the Riemannian gradient of the j-th ambient
    coordinate, projected onto the tangent space).

    Parameters
    ----------
    space : Manifold
        As ``riemannian_gradient``.
    base_point : array-like, shape=[*space.shape]

    Returns
    -------
    basis : array-like, shape=[d, *space.shape]
        d = prod(space.shape) tangent vectors at ``base_point``, in the order of the
        flattened ambient coordinates.
    """
    shape = tuple(space.shape)
    units = gs.reshape(gs.eye(math.prod(shape)), (-1,) + shape)
    return space.to_tangent(riemannian_gradient(space, units, base_point), base_point)
