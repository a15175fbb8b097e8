"""Coordinates of tangent vectors in an orthonormal basis of a tangent space.

The basis at a point p is the metric's Gram-Schmidt orthonormalisation of the projections
onto T_p M of the ambient basis vectors, taken in their fixed order and skipping those
that depend on the earlier ones: a deterministic frame, continuous in p, built from the
metric's inner product alone (log-Euclidean, affine-invariant, or any other metric). The
Euclidean norm of coordinates is the Riemannian norm of the vector, so that an isotropic
Gaussian in coordinates is the isotropic tangent Gaussian, and clipping coordinates clips
in the metric. For the affine-invariant metric of SPD matrices the frame has a closed form
(the orthonormal basis of symmetric matrices carried by p^{1/2} . p^{1/2}), which avoids
the ambient Gram matrix (n^4 inner products); for Euclidean rows the frame is the
canonical basis.
"""

from dataclasses import dataclass

import geomstats.backend as gs
import numpy as np
from geomstats.geometry.euclidean import CanonicalEuclideanMetric
from geomstats.geometry.spd_matrices import SPDAffineMetric, SPDMatrices

from geomstats_dp._backend import to_backend, to_numpy

RANK_TOL = 1e-10  # a projected basis vector whose residual is below this share of its
# squared norm depends on the earlier ones and is skipped


@dataclass(frozen=True)
class TangentFrame:
    """An orthonormal basis of T_p M as two linear maps on flattened ambient vectors.

    Attributes
    ----------
    base_point : numpy.ndarray, shape=[*space.shape]
    to_coordinates : numpy.ndarray, shape=[dim, ambient]
        c = A vec(v) for a tangent vector v at ``base_point``.
    from_coordinates : numpy.ndarray, shape=[dim, ambient]
        vec(v) = c @ B.
    """

    base_point: np.ndarray
    to_coordinates: np.ndarray
    from_coordinates: np.ndarray

    @property
    def dim(self):
        """The dimension of the tangent space."""
        return self.to_coordinates.shape[0]


def _independent(gram, dim):
    """Indices of the first ``dim`` columns of ``gram`` spanning its range, in order."""
    chosen = []
    for index in range(gram.shape[0]):
        trial = chosen + [index]
        block = gram[np.ix_(trial, trial)]
        try:
            factor = np.linalg.cholesky(block)
        except np.linalg.LinAlgError:
            continue
        if factor[-1, -1] ** 2 > RANK_TOL * gram[index, index]:
            chosen = trial
        if len(chosen) == dim:
            break
    if len(chosen) != dim:
        raise ValueError(f"base_point: the tangent space has rank {len(chosen)} in the "
                         f"metric, expected {dim}")
    return chosen


def _symmetric_basis(size):
    """U, shape=[size^2, size (size + 1) / 2]: vec(S) = U c for the coordinates c of a
    symmetric S in the Frobenius-orthonormal basis (E_ii; (E_ij + E_ji) / sqrt(2))."""
    rows, cols = np.triu_indices(size)
    basis = np.zeros((size, size, len(rows)))
    weight = np.where(rows == cols, 1.0, 1 / np.sqrt(2))
    basis[rows, cols, np.arange(len(rows))] = weight
    basis[cols, rows, np.arange(len(rows))] = weight
    return basis.reshape(size * size, -1)


def _affine_invariant_frame(point):
    """The closed-form frame of the affine-invariant metric at an SPD ``point``:
    c = U^T vec(p^{-1/2} v p^{-1/2}), v = p^{1/2} unvec(U c) p^{1/2}."""
    values, vectors = np.linalg.eigh(point)
    root = (vectors * np.sqrt(values)) @ vectors.T
    inverse_root = (vectors / np.sqrt(values)) @ vectors.T
    basis = _symmetric_basis(len(point))
    to_coordinates = basis.T @ np.kron(inverse_root, inverse_root)
    from_coordinates = (np.kron(root, root) @ basis).T
    return TangentFrame(point, to_coordinates, from_coordinates)


def tangent_frame(space, base_point):
    """The orthonormal frame of T_p M at ``base_point`` (module docstring).

    Parameters
    ----------
    space : Manifold
        With a metric.
    base_point : array-like, shape=[*space.shape]

    Returns
    -------
    frame : TangentFrame
    """
    if isinstance(space, SPDMatrices) and type(space.metric) is SPDAffineMetric:
        return _affine_invariant_frame(np.asarray(to_numpy(base_point), dtype=float))
    if isinstance(space.metric, CanonicalEuclideanMetric) and len(space.shape) == 1:
        identity = np.eye(space.shape[0])
        return TangentFrame(np.asarray(to_numpy(base_point)), identity, identity)
    point = to_backend(base_point)
    ambient = int(np.prod(space.shape))
    basis = gs.reshape(gs.eye(ambient), (ambient, *space.shape))
    projected = space.to_tangent(basis, point)
    left = gs.repeat(projected, ambient, axis=0)
    right = gs.tile(projected, (ambient,) + (1,) * len(space.shape))
    gram = to_numpy(space.metric.inner_product(left, right, point)).reshape(ambient, ambient)
    gram = (gram + gram.T) / 2
    chosen = _independent(gram, int(space.dim))
    factor = np.linalg.cholesky(gram[np.ix_(chosen, chosen)])
    to_coordinates = np.linalg.solve(factor, gram[chosen, :])
    vectors = to_numpy(projected).reshape(ambient, ambient)[chosen]
    from_coordinates = np.linalg.solve(factor, vectors)  # rows: L^{-1} (P e_s)
    return TangentFrame(to_numpy(point), to_coordinates, from_coordinates)


def coordinates(space, frame, points):
    """Coordinates of Log_p(x) for each point x, non-finite rows set to zero.

    Parameters
    ----------
    space : Manifold
    frame : TangentFrame
    points : array-like, shape=[n_samples, *space.shape]

    Returns
    -------
    rows : numpy.ndarray, shape=[n_samples, dim]
    """
    logs = to_numpy(space.metric.log(to_backend(points), to_backend(frame.base_point)))
    rows = logs.reshape(len(logs), -1) @ frame.to_coordinates.T
    rows[~np.all(np.isfinite(rows), axis=1)] = 0.0
    return rows


def tangent_vector(space, frame, rows):
    """The tangent vectors at the frame's point with coordinates ``rows``.

    Parameters
    ----------
    space : Manifold
    frame : TangentFrame
    rows : numpy.ndarray, shape=[..., dim]

    Returns
    -------
    tangent_vec : array-like, shape=[..., *space.shape]
    """
    flat = np.asarray(rows) @ frame.from_coordinates
    return to_backend(flat.reshape(flat.shape[:-1] + tuple(space.shape)))


def clip_rows(rows, clip_norm):
    """Scale each row to l2 norm at most ``clip_norm`` (numpy, shape kept)."""
    norms = np.linalg.norm(rows, axis=-1, keepdims=True)
    return rows * np.minimum(1.0, clip_norm / np.maximum(norms, 1e-300))
