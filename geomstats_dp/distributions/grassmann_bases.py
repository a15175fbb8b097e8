"""The Grassmannian Gr(n, r) on orthonormal bases: a point is W [n, r], standing for span(W).

geomstats' ``Grassmannian(n, r)`` stores a subspace as its n x n projector, which is
infeasible for n in the thousands (MovieLens: n = 1,682 items, 2.8M numbers a point).
Here a point is any orthonormal basis W of the subspace (a point of ``Stiefel(n, r)``) and a
tangent vector at W is a horizontal lift U [n, r], W^T U = 0, with the metric tr(U^T V)
(Edelman, Arias & Smith 1998; Absil, Mahony & Sepulchre 2008). A loss invariant under
W -> W Q (Q orthogonal) has a horizontal Riemannian gradient: its Euclidean gradient
projected by (I - W W^T). Dimension r (n - r).

Closed forms, with U S V^T the thin SVD of the tangent vector:

- exp_W(U S V^T) = W V cos(S) V^T + U sin(S) V^T (re-orthonormalised by QR);
- log_W(Y) = U arctan(S) V^T for (I - W W^T) Y (W^T Y)^(-1) = U S V^T (principal angles
  arctan(S) < pi / 2);
- transport for the tangent Gaussian: reference E = [I_r; 0], horizontal vectors [0; K]
  with K [n - r, r] orthonormal coordinates, carried to W by an orthogonal M with
  M E = W (Householder QR of W, ``OrthogonalCompletion``): M [0; K] is horizontal at W
  and the map is an isometry, so N(0, sigma^2 I) in the coordinates is the tangent
  Gaussian at W; its law equals that of (I - W W^T) A with A iid N(0, sigma^2), in
  O(n r^2).
"""

import geomstats.backend as gs
import numpy as np
from geomstats.geometry.riemannian_metric import RiemannianMetric
from geomstats.geometry.stiefel import Stiefel

from geomstats_dp.distributions.base import IsometricTransport
from geomstats_dp.distributions.registry import register_transport
from geomstats_dp.distributions.stiefel import OrthogonalCompletion


def _transpose_times(left, right):
    """left^T right over the last two axes, [..., n, r] x [..., n, s] -> [..., r, s]."""
    return gs.matmul(gs.moveaxis(left, -1, -2), right)


def _times(left, right):
    """left right over the last two axes (BLAS matmul, broadcast over leading axes)."""
    return gs.matmul(left, right)


def horizontal_projection(vectors, base_point):
    """(I - W W^T) V: the horizontal part of ``vectors`` at the basis W.

    Parameters
    ----------
    vectors : array-like, shape=[..., n, r]
    base_point : array-like, shape=[..., n, r]

    Returns
    -------
    horizontal : array-like, shape=[..., n, r]
    """
    return vectors - _times(base_point, _transpose_times(base_point, vectors))


class GrassmannBases(Stiefel):
    """Gr(n, r) represented by orthonormal bases W [n, r] (points of ``Stiefel(n, r)``).

    Two bases of the same subspace are the same point of the quotient; tangent vectors
    are horizontal (W^T U = 0) and the metric is tr(U^T V). See the module docstring.

    Parameters
    ----------
    n : int
        Ambient dimension.
    p : int
        Subspace dimension r, 1 <= r < n.
    """

    def __init__(self, n, p, equip=True):
        super().__init__(n, p, equip=equip)
        self.dim = p * (n - p)

    @staticmethod
    def default_metric():
        """The quotient metric tr(U^T V) on horizontal vectors."""
        return GrassmannBasesMetric

    def to_tangent(self, vector, base_point):
        """Horizontal projection (I - W W^T) V."""
        return horizontal_projection(vector, base_point)

    def is_tangent(self, vector, base_point, atol=1e-6):
        """Whether W^T V = 0 (up to ``atol``), shape=[...]."""
        product = _transpose_times(base_point, vector)
        return gs.all(gs.abs(product) < atol, axis=(-2, -1))


class GrassmannBasesMetric(RiemannianMetric):
    """tr(U^T V) on horizontal vectors, with the closed-form exp and log of Gr(n, r)."""

    def inner_product(self, tangent_vec_a, tangent_vec_b, base_point=None):
        """tr(U^T V), shape=[...]."""
        return gs.sum(tangent_vec_a * tangent_vec_b, axis=(-2, -1))

    def exp(self, tangent_vec, base_point):
        """Geodesic endpoint W V cos(S) V^T + U sin(S) V^T, as an orthonormal basis.

        Parameters
        ----------
        tangent_vec : array-like, shape=[..., n, r]
            Horizontal at ``base_point``.
        base_point : array-like, shape=[..., n, r]

        Returns
        -------
        point : array-like, shape=[..., n, r]
        """
        left, angles, right = gs.linalg.svd(tangent_vec, full_matrices=False)
        rotated = gs.matmul(base_point, gs.moveaxis(right, -1, -2))
        moved = rotated * gs.cos(angles)[..., None, :] + left * gs.sin(angles)[..., None, :]
        point = _times(moved, right)
        factor, triangle = gs.linalg.qr(point)
        signs = gs.where(gs.diagonal(triangle, axis1=-2, axis2=-1) < 0, -1.0, 1.0)
        return factor * signs[..., None, :]

    def log(self, point, base_point):
        """Horizontal U at W with exp_W(U) spanning span(point).

        Parameters
        ----------
        point, base_point : array-like, shape=[..., n, r]
            Subspaces at principal angles < pi / 2 (W^T Y invertible).

        Returns
        -------
        tangent_vec : array-like, shape=[..., n, r]
        """
        overlap = _transpose_times(base_point, point)
        slope = _times(horizontal_projection(point, base_point), gs.linalg.inv(overlap))
        left, tangents, right = gs.linalg.svd(slope, full_matrices=False)
        return _times(left * gs.arctan2(tangents, gs.ones_like(tangents))[..., None, :], right)


@register_transport(GrassmannBasesMetric)
class GrassmannBasesTransport(IsometricTransport):
    """E = [I_r; 0] -> W: [0; K] -> M [0; K], M orthogonal with M E = W. O(n r^2)."""

    def from_coordinates(self, coefficients):
        """Coordinates [..., (n - r) r] -> [0; K] [..., n, r] at E."""
        size, rank = self.space.n, self.space.p
        lead = coefficients.shape[:-1]
        vecs = np.zeros(lead + (size, rank))
        vecs[..., rank:, :] = coefficients.reshape(lead + (size - rank, rank))
        return vecs

    def to_coordinates(self, tangent_vecs):
        """[0; K] [..., n, r] at E -> K flattened, [..., (n - r) r]."""
        block = tangent_vecs[..., self.space.p:, :]
        return block.reshape(block.shape[:-2] + (-1,))

    def transport(self, base_points, tangent_vecs):
        """[0; K] at E -> M [0; K], horizontal at W."""
        return OrthogonalCompletion(base_points).apply(tangent_vecs)

    def transport_back(self, base_points, tangent_vecs):
        """U at W -> M^T U at E (its top block is W^T U = 0 for horizontal U)."""
        moved = OrthogonalCompletion(base_points).apply_transpose(tangent_vecs)
        moved[..., : self.space.p, :] = 0.0
        return moved
