"""Gram-Schmidt in the metric: the generic basis, for any space with ``to_tangent``."""

import math

import numpy as np

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.distributions.baselines.basis import BasisSampler, combine

DEPENDENCE_RTOL = 1e-8
ZERO_RTOL = 1e-10


def _inner_products(metric, vecs_a, vecs_b, base_point):
    """``metric.inner_product`` at one base point of numpy [r, *shape] or [*shape] -> [r].

    One of the two may be a single vector: geomstats broadcasts it against the batch.
    """
    products = metric.inner_product(
        to_backend(vecs_a), to_backend(vecs_b), to_backend(base_point)
    )
    return np.atleast_1d(to_numpy(products))


def _projected_canonical_basis(space, point):
    """``space.to_tangent`` of the ambient canonical basis at ``point``, [n_ambient, *shape]."""
    shape = tuple(space.shape)
    n_ambient = math.prod(shape)
    canonical = np.eye(n_ambient).reshape((n_ambient,) + shape)
    projected = space.to_tangent(to_backend(canonical), to_backend(point))
    return to_numpy(projected).reshape(canonical.shape)


def orthonormal_basis(space, metric, base_point, rtol=DEPENDENCE_RTOL):
    """Metric-orthonormal basis of T_w: Gram-Schmidt of the projected canonical basis.

    The ambient canonical basis is projected on T_w with ``space.to_tangent`` and the
    projections are taken by decreasing metric norm (those below ``ZERO_RTOL`` times the
    largest are rounding noise of vectors normal to T_w, and dropped). Modified
    Gram-Schmidt in ``metric.inner_product``, each pivot re-orthogonalised once against
    the basis so far, keeps the first d independent ones: a candidate counts as dependent
    when its residual norm is at most ``rtol`` times its projected norm. Cost: order
    (ambient size) x d inner products.

    Parameters
    ----------
    space : Manifold
        A geomstats space with ``to_tangent`` and ``dim``.
    metric : RiemannianMetric
        Metric whose ``inner_product`` the basis is orthonormal in.
    base_point : array-like, shape=[*space.shape]
    rtol : float
        Relative residual below which a candidate counts as dependent.

    Returns
    -------
    basis : numpy.ndarray, shape=[d, *space.shape]
        Tangent at ``base_point``, orthonormal in ``metric.inner_product``.
    """
    point = to_numpy(base_point)
    shape = tuple(space.shape)
    if point.shape != shape:
        raise ValueError(f"base_point must have shape {shape}, got {point.shape}")
    dim = int(space.dim)
    candidates = _projected_canonical_basis(space, point)
    norms = np.sqrt(np.maximum(_inner_products(metric, candidates, candidates, point), 0.0))
    order = np.argsort(-norms, kind="stable")
    order = order[norms[order] > ZERO_RTOL * norms.max(initial=0.0)]
    candidates, norms = candidates[order], norms[order]
    basis = np.empty((dim,) + shape)
    count = 0
    for index, start_norm in enumerate(norms):
        vec = candidates[index]
        if count:
            overlaps = _inner_products(metric, basis[:count], vec, point)
            vec = vec - combine(overlaps[None], basis[:count])[0]
        norm = math.sqrt(max(_inner_products(metric, vec, vec, point)[0], 0.0))
        if norm <= rtol * start_norm:
            continue
        basis[count] = vec / norm
        count += 1
        if count == dim:
            return basis
        rest = candidates[index + 1 :]
        overlaps = _inner_products(metric, basis[count - 1], rest, point)
        rest -= overlaps.reshape((-1,) + (1,) * len(shape)) * basis[count - 1]
    raise ValueError(
        f"to_tangent of the canonical basis spans only {count} of the {dim} dimensions of "
        f"T_w for {type(space).__name__} at this base_point (rtol={rtol})"
    )


class GramSchmidt(BasisSampler):
    """N_w(0, I) from ``orthonormal_basis``, built at every base point.

    The generic sampler: it needs only ``space.to_tangent`` and ``metric.inner_product``.
    """

    def basis(self, base_point):
        """``orthonormal_basis`` at ``base_point``, shape=[d, *space.shape]."""
        return orthonormal_basis(self.space, self.metric, base_point)
