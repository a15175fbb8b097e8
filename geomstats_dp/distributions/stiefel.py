"""Stiefel manifold St(m, r) with geomstats' canonical metric tr(D^T (I - W W^T / 2) D).

Reference E = [e_1, ..., e_r]. For any orthogonal M with M E = W, D -> M D maps T_E to T_W
and preserves the canonical metric. M = Q diag(s, I) from a Householder QR of W (s the
signs of R's diagonal), applied with LAPACK ``ormqr`` in O(m r^2): Q is never formed.

A tangent vector at E is [Omega; K], Omega (r x r) skew and K ((m - r) x r); its canonical
squared norm is |Omega|_F^2 / 2 + |K|_F^2 = sum_{i<j} Omega_ij^2 + |K|_F^2, so the entries
Omega_ij (i < j) and K_ij are orthonormal coordinates, with no 1/sqrt(2) on Omega (that
factor belongs to the embedded metric tr(D^T D)).
"""

import numpy as np
from geomstats.geometry.stiefel import StiefelCanonicalMetric
from scipy.linalg import lapack

from geomstats_dp.distributions.base import IsometricTransport
from geomstats_dp.distributions.registry import register_transport

# dormqr's optimal workspace: (columns of C) x (block size <= min(64, r)) + 65 x 64.
ORMQR_BLOCK = 64
ORMQR_TSIZE = 65 * 64


class OrthogonalCompletion:
    """Orthogonal maps M_j (m x m) with M_j[:, :r] = frames[j], kept as Householder vectors.

    Parameters
    ----------
    frames : array-like, shape=[k, m, r]
        Orthonormal columns. M_j = Q_j diag(s_j, I) with frames[j] = Q_j R_j and s_j the
        signs of diag(R_j) (R_j is diagonal with entries +-1 when frames[j] is orthonormal).
    """

    def __init__(self, frames):
        self.rank = frames.shape[-1]
        self.reflectors = []
        signs = []
        for frame in frames:
            factor, tau, _, _ = lapack.dgeqrf(frame)
            self.reflectors.append((factor, tau))
            signs.append(np.where(np.diag(factor) >= 0, 1.0, -1.0))
        self.signs = np.array(signs)

    def _apply_q(self, stacks, trans):
        """Q_j (trans 'N') or Q_j^T ('T') applied to stacks [n, k, m, c], per base point j."""
        n_stack, _, size, n_cols = stacks.shape
        out = np.empty_like(stacks)
        for index, (factor, tau) in enumerate(self.reflectors):
            block = stacks[:, index].transpose(1, 0, 2).reshape(size, n_stack * n_cols)
            lwork = max(1, n_stack * n_cols) * min(ORMQR_BLOCK, self.rank) + ORMQR_TSIZE
            result, _, _ = lapack.dormqr("L", trans, factor, tau, block, lwork)
            out[:, index] = result.reshape(size, n_stack, n_cols).transpose(1, 0, 2)
        return out

    def apply(self, stacks):
        """M_j @ stacks[:, j], for stacks [n, k, m, c]."""
        signed = stacks.copy()
        signed[..., : self.rank, :] *= self.signs[:, :, None]
        return self._apply_q(signed, "N")

    def apply_transpose(self, stacks):
        """M_j^T @ stacks[:, j], for stacks [n, k, m, c]."""
        out = self._apply_q(stacks, "T")
        out[..., : self.rank, :] *= self.signs[:, :, None]
        return out


@register_transport(StiefelCanonicalMetric)
class StiefelTransport(IsometricTransport):
    """Canonical-metric transport E -> W: D -> M D with M = Q diag(s, I). O(m r^2)."""

    def belongs(self, points, atol):
        """|W^T W - I| <= atol entrywise (geomstats' submersion test), O(m r^2). [k]."""
        gram = np.swapaxes(points, -1, -2) @ points
        gram[:, np.arange(self.space.p), np.arange(self.space.p)] -= 1.0
        return np.all(np.abs(gram) <= atol, axis=(-2, -1))

    def is_tangent(self, vectors, points, atol):
        """|W^T D + D^T W| <= atol entrywise (geomstats' tangent submersion). [k]."""
        cross = np.swapaxes(points, -1, -2) @ vectors
        return np.all(np.abs(cross + np.swapaxes(cross, -1, -2)) <= atol, axis=(-2, -1))

    @property
    def _skew_triu(self):
        """Indices (i, j), i < j, of the coordinates of Omega."""
        return np.triu_indices(self.space.p, 1)

    def from_coordinates(self, coefficients):
        """Coordinates [..., r(r-1)/2 + (m-r) r] -> [Omega; K] [..., m, r] at E."""
        size, rank = self.space.n, self.space.p
        rows, cols = self._skew_triu
        n_skew = rows.size
        lead = coefficients.shape[:-1]
        vecs = np.zeros(lead + (size, rank))
        vecs[..., rows, cols] = coefficients[..., :n_skew]
        vecs[..., cols, rows] = -coefficients[..., :n_skew]
        vecs[..., rank:, :] = coefficients[..., n_skew:].reshape(lead + (size - rank, rank))
        return vecs

    def to_coordinates(self, tangent_vecs):
        """[Omega; K] [..., m, r] at E -> coordinates [..., d]."""
        rows, cols = self._skew_triu
        rank = self.space.p
        lead = tangent_vecs.shape[:-2]
        tail = tangent_vecs[..., rank:, :].reshape(lead + (-1,))
        return np.concatenate([tangent_vecs[..., rows, cols], tail], axis=-1)

    def transport(self, base_points, tangent_vecs):
        """[Omega; K] at E -> M [Omega; K] = W Omega + W_perp K at W."""
        return OrthogonalCompletion(base_points).apply(tangent_vecs)

    def transport_back(self, base_points, tangent_vecs):
        """D at W -> M^T D at E."""
        return OrthogonalCompletion(base_points).apply_transpose(tangent_vecs)
