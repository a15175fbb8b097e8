"""Grassmannian Gr(m, r) as geomstats represents it: rank-r orthogonal projectors (m x m).

A tangent vector at P = W W^T (W an orthonormal basis of the range) is X = U W^T + W U^T
with W^T U = 0, and geomstats' canonical metric is the Frobenius product, so
|X|_F^2 = 2 |U|_F^2: with U = W_perp A2, the coordinates A2 are orthonormal only after a
1/sqrt(2) scaling. The reference point is P_E = E E^T, E = [e_1, ..., e_r], where
X = [[0, B^T], [B, 0]] with B = A2 / sqrt(2).

The transport is X -> M X M^T for an orthogonal M with M E = W (Householder QR of W, as on
Stiefel): it carries P_E to P and preserves the Frobenius product. W itself comes from a
pivoted Cholesky factorisation of P (r steps, O(m r^2), exact for a projector), not from
an O(m^3) eigendecomposition; the m x m output costs O(m^2 r).
"""

import functools

import numpy as np
from geomstats.geometry.grassmannian import GrassmannianCanonicalMetric

from geomstats_dp.distributions.base import IsometricTransport
from geomstats_dp.distributions.registry import register_transport
from geomstats_dp.distributions.stiefel import OrthogonalCompletion

N_PROBES = 3
PROBE_SEED = 20240601


def range_basis(projectors, rank):
    """Columns spanning the range of each rank-``rank`` projector: pivoted Cholesky.

    Parameters
    ----------
    projectors : array-like, shape=[k, m, m]
    rank : int

    Returns
    -------
    factors : array-like, shape=[k, m, rank]
        L with L L^T = P; for an exact projector L is orthonormal (up to rounding).
    """
    n_points, size, _ = projectors.shape
    rows = np.arange(n_points)
    residual = np.diagonal(projectors, axis1=1, axis2=2).copy()
    factors = np.zeros((n_points, size, rank))
    for step in range(rank):
        pivots = np.argmax(residual, axis=1)
        done = factors[:, :, :step]
        column = projectors[rows, :, pivots] - np.einsum(
            "kmj,kj->km", done, done[rows, pivots]
        )
        factors[:, :, step] = column / np.sqrt(column[rows, pivots])[:, None]
        residual -= factors[:, :, step] ** 2
    return factors


@register_transport(GrassmannianCanonicalMetric)
class GrassmannTransport(IsometricTransport):
    """Projector-representation transport P_E -> P: X -> M X M^T."""

    @property
    def _rank(self):
        return self.space.p

    @functools.cached_property
    def _probes(self):
        """Fixed N(0, 1) probe vectors, shape=[m, N_PROBES] (one draw per sampler)."""
        return np.random.default_rng(PROBE_SEED).standard_normal((self.space.n, N_PROBES))

    def _probe(self, mats, atol):
        """M z and whether M^T z = M z within atol on the probes, [k, m, s] and [k]."""
        probed = mats @ self._probes
        transposed = np.swapaxes(self._probes.T @ mats, -1, -2)
        return probed, np.all(np.abs(probed - transposed) <= atol, axis=(-2, -1))

    def belongs(self, points, atol):
        """P = P^T and P^2 = P on random probes (within atol), and trace r. O(m^2).

        The exact test of P^2 = P is a cubic matrix product (geomstats diagonalises P),
        and P = P^T reads P across its rows: with z ~ N(0, I), each entry of (P^2 - P) z
        (or (P - P^T) z) is N(0, |row|^2), so a row of the error with a norm well above
        atol fails with high probability, and an exact projector (rounding ~ m 1e-16)
        never does. For a symmetric idempotent P the trace is the rank, an integer:
        |tr P - r| <= 1/2 tells the rank apart. Three passes over P, row by row.
        """
        probed, symmetric = self._probe(points, atol)
        idempotent = np.all(np.abs(points @ probed - probed) <= atol, axis=(-2, -1))
        trace = np.trace(points, axis1=-2, axis2=-1)
        return symmetric & idempotent & (np.abs(trace - self._rank) <= 0.5)

    def is_tangent(self, vectors, points, atol):
        """X = X^T and (P X + X P - X) z = 0 on the probes (geomstats' test). [k]."""
        moved, symmetric = self._probe(vectors, atol)
        residual = points @ moved + vectors @ (points @ self._probes) - moved
        return symmetric & np.all(np.abs(residual) <= atol, axis=(-2, -1))

    def _at_reference(self, blocks):
        """[[0, B^T], [B, 0]] [..., m, m] from blocks B [..., m-r, r]."""
        size, rank = self.space.n, self._rank
        vecs = np.zeros(blocks.shape[:-2] + (size, size))
        vecs[..., rank:, :rank] = blocks
        vecs[..., :rank, rank:] = np.swapaxes(blocks, -1, -2)
        return vecs

    def from_coordinates(self, coefficients):
        """Coordinates [..., (m-r) r] -> [[0, B^T], [B, 0]] [..., m, m], B = A2 / sqrt 2."""
        shape = coefficients.shape[:-1] + (self.space.n - self._rank, self._rank)
        return self._at_reference(coefficients.reshape(shape) / np.sqrt(2))

    def to_coordinates(self, tangent_vecs):
        """[[0, B^T], [B, 0]] at P_E -> sqrt(2) B flattened, [..., (m-r) r]."""
        rank = self._rank
        block = tangent_vecs[..., rank:, :rank]
        return np.sqrt(2) * block.reshape(block.shape[:-2] + (-1,))

    def _completion_and_frames(self, base_points):
        """M (as an OrthogonalCompletion) and the orthonormal frames W = M E, [k, m, r]."""
        completion = OrthogonalCompletion(range_basis(base_points, self._rank))
        size, rank = self.space.n, self._rank
        unit = np.broadcast_to(np.eye(size, rank), (1, base_points.shape[0], size, rank))
        return completion, completion.apply(unit)[0]

    def transport(self, base_points, tangent_vecs):
        """X at P_E -> U W^T + W U^T at P, with U = M [0; B]."""
        completion, frames = self._completion_and_frames(base_points)
        rank = self._rank
        lifted = tangent_vecs[..., :, :rank].copy()
        lifted[..., :rank, :] = 0.0
        moved = completion.apply(lifted)
        frames = np.broadcast_to(frames, moved.shape)
        left = np.concatenate([moved, frames], axis=-1)
        right = np.concatenate([frames, moved], axis=-1)
        return left @ np.swapaxes(right, -1, -2)

    def transport_back(self, base_points, tangent_vecs):
        """X at P -> [[0, B^T], [B, 0]] at P_E, with [*; B] = M^T (X W)."""
        completion, frames = self._completion_and_frames(base_points)
        rank = self._rank
        lifted = completion.apply_transpose(tangent_vecs @ frames)
        return self._at_reference(lifted[..., rank:, :])
