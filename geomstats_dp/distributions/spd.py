"""SPD matrices: closed-form transports from the identity for geomstats' SPD metrics.

At the reference point I every metric below is a multiple of tr(UV), so an orthonormal
basis of T_I Sym(m) is (a multiple of) C * A: the upper triangle of A holds the
coordinates and C has 1 on the diagonal and 1/sqrt(2) off it. With W = P diag(lam) P^T,
each transport I -> W acts in the eigenbasis of W as a Hadamard product,

    U -> P [K * (P^T U P)] P^T,

with a kernel K(lam) of the metric; the inverse divides by K. One ``eigh`` per base point.
"""

import functools
import math
from abc import abstractmethod

import geomstats.backend as gs
import numpy as np
from geomstats.geometry.spd_matrices import (
    SPDAffineMetric,
    SPDBuresWassersteinMetric,
    SPDEuclideanMetric,
    SPDLogEuclideanMetric,
)
from scipy import special

from geomstats_dp._backend import as_numpy, to_backend
from geomstats_dp.distributions.base import IsometricTransport
from geomstats_dp.distributions.euclidean import EuclideanTransport
from geomstats_dp.distributions.registry import register_transport


def _symmetrize(mats):
    """(X + X^T) / 2 over the last two axes: removes the rounding asymmetry of products."""
    return (mats + np.swapaxes(mats, -1, -2)) / 2


def is_symmetric(mats, atol):
    """Entrywise isclose(X, X^T) (geomstats' ``Matrices.is_symmetric``), shape=[k].

    |X - X^T| <= atol everywhere implies it (one subtraction); numpy's ``isclose`` (which
    adds a relative tolerance) runs only on the matrices that fail that.
    """
    transposed = mats.swapaxes(-1, -2)
    with np.errstate(invalid="ignore"):  # inf - inf at non-finite entries: NaN, fails
        deviation = mats - transposed
    found = np.abs(deviation, out=deviation).max(axis=(-2, -1)) <= atol
    if np.count_nonzero(found) < found.size:  # ndarray.all() costs 2 us
        rest = ~found
        found[rest] = np.all(np.isclose(mats[rest], transposed[rest], atol=atol), axis=(-2, -1))
    return found


def is_positive_definite(mats):
    """Whether a Cholesky factorisation succeeds (geomstats' ``Matrices.is_pd``), [k].

    One batched factorisation (m^3/3 per matrix, a quarter of an eigendecomposition); only
    when it fails are the matrices factorised one by one to find the failing ones.
    """
    try:
        np.linalg.cholesky(mats)
        return np.ones(mats.shape[0], dtype=bool)
    except np.linalg.LinAlgError:
        pass
    found = np.ones(mats.shape[0], dtype=bool)
    for index, mat in enumerate(mats):
        try:
            np.linalg.cholesky(mat)
        except np.linalg.LinAlgError:
            found[index] = False
    return found


class _SymmetricCoordinates(IsometricTransport):
    """Orthonormal coordinates of Sym(m) for the metric ``tr(UV) / reference_scale**2``.

    Coordinate i of ``np.triu_indices(m)`` is entry (r, s) of A; the tangent vector is
    ``reference_scale * C * A``.
    """

    reference_scale = 1.0
    draw_one = None  # not the Euclidean family's (its coordinates fill every entry)
    # not belongs_implies_finite: +inf on the diagonal passes the symmetry test (isclose
    # takes equal infinities as close) and the Cholesky factorisation

    def belongs(self, points, atol):
        """Symmetric within atol and Cholesky-factorisable, as geomstats' test. [k]."""
        symmetric = is_symmetric(points, atol)
        return symmetric & is_positive_definite(points)

    def is_tangent(self, vectors, points, atol):
        """Symmetric within atol (T_W SPD = Sym(m)). [k]."""
        return is_symmetric(vectors, atol)

    @functools.cached_property
    def _triu(self):
        """Row and column indices of the upper triangle (diagonal included)."""
        return np.triu_indices(self.space.n)

    @functools.cached_property
    def _entry_scales(self):
        """C * reference_scale on the upper triangle, shape=[d]."""
        rows, cols = self._triu
        return self.reference_scale * np.where(rows == cols, 1.0, np.sqrt(0.5))

    @functools.cached_property
    def _gather(self):
        """For each entry (r, s) of an m x m matrix, row-major: the index of its coordinate
        (that of (min, max)) and its scale, shapes [m^2]."""
        size = self.space.n
        rows, cols = self._triu
        index = np.empty((size, size), dtype=np.intp)
        index[rows, cols] = np.arange(rows.size)
        index[cols, rows] = np.arange(rows.size)
        index = index.ravel()
        return index, self._entry_scales[index]

    def from_coordinates(self, coefficients):
        """Coordinates [..., m(m+1)/2] -> symmetric matrices [..., m, m] at I.

        One gather of the m^2 entries (entry (r, s) = coordinate of (min, max) times its
        scale): the same values as scattering the scaled coordinates to both triangles.
        """
        size = self.space.n
        index, scales = self._gather
        mats = coefficients[..., index]  # a fancy index: a new array
        mats *= scales
        return mats.reshape(coefficients.shape[:-1] + (size, size))

    def to_coordinates(self, tangent_vecs):
        """Symmetric matrices [..., m, m] at I -> coordinates [..., m(m+1)/2]."""
        rows, cols = self._triu
        return tangent_vecs[..., rows, cols] / self._entry_scales


class _EigenbasisTransport(_SymmetricCoordinates):
    """Transport I -> W as a Hadamard product with ``kernel(lam)`` in W's eigenbasis."""

    @abstractmethod
    def kernel(self, eigvals):
        """Hadamard factor K, shape=[k, m, m], from the eigenvalues [k, m] of W."""

    def _apply(self, base_points, tangent_vecs, inverse):
        eigvals, eigvecs = np.linalg.eigh(base_points)
        factor = self.kernel(eigvals)
        if inverse:
            factor = 1.0 / factor
        rotated = np.swapaxes(eigvecs, -1, -2) @ tangent_vecs @ eigvecs
        return _symmetrize(eigvecs @ (factor * rotated) @ np.swapaxes(eigvecs, -1, -2))

    def transport(self, base_points, tangent_vecs):
        """U -> P [K * (P^T U P)] P^T, for U [n, k, m, m] at I and W [k, m, m]."""
        return self._apply(base_points, tangent_vecs, inverse=False)

    def transport_back(self, base_points, tangent_vecs):
        """X -> P [(P^T X P) / K] P^T: tangent vectors at W back to I."""
        return self._apply(base_points, tangent_vecs, inverse=True)


@register_transport(SPDAffineMetric)
class SPDAffineTransport(_EigenbasisTransport):
    """Affine-invariant metric tr(W^-1 U W^-1 V): U -> W^1/2 U W^1/2 (parallel transport).

    K_rs = sqrt(lam_r lam_s).
    """

    def kernel(self, eigvals):
        """sqrt(lam_r lam_s)."""
        roots = np.sqrt(eigvals)
        return roots[..., :, None] * roots[..., None, :]

    def sample(self, base_points, n_samples, rng):
        """Draw U = C * A at I and map it to L U L^T, W = L L^T (Cholesky).

        U -> L U L^T is also a linear isometry T_I -> T_W (tr(W^-1 X W^-1 X) = tr(U^2) for
        X = L U L^T), so the draw is exact; a Cholesky factorisation costs a quarter of the
        eigendecomposition that the parallel transport needs.
        """
        return self.sample_prepared(base_points, n_samples, rng, None)

    def check_points(self, points, atol):
        """Membership, and the Cholesky factors of the points when all of them have one.

        The membership test factorises the points anyway; ``sample_prepared`` reuses the
        factors instead of factorising again.
        """
        symmetric = is_symmetric(points, atol)
        try:
            factors = np.linalg.cholesky(points)
        except np.linalg.LinAlgError:
            return symmetric & is_positive_definite(points), None
        return symmetric, factors

    def sample_prepared(self, base_points, n_samples, rng, prepared):
        """``sample`` with the Cholesky factors from ``check_points`` (None: factorise).

        One draw at one SPD(2) point is computed in Python floats (``cholesky_2x2``,
        ``draw_2x2``): the same L and normals, without the microsecond of each numpy
        call."""
        if n_samples == 1 and base_points.shape[0] == 1 and base_points.shape[-1] == 2:
            factor = cholesky_2x2(base_points[0].tolist())
            if factor is not None:  # else the factorisation below raises
                return np.array(draw_2x2(factor, rng.standard_normal(3).tolist()))[None, None]
        factors = np.linalg.cholesky(base_points) if prepared is None else prepared
        if n_samples == 1 and base_points.shape[0] == 1:  # one draw: [m, m] products
            factor = factors[0]
            draw = factor @ self.from_coordinates(rng.standard_normal(self.dim)) @ factor.T
            return ((draw + draw.T) / 2)[None, None]
        coefficients = rng.standard_normal((n_samples, base_points.shape[0], self.dim))
        at_identity = self.from_coordinates(coefficients)
        return _symmetrize(factors @ at_identity @ np.swapaxes(factors, -1, -2))


    def draw_one(self, point, normals, scale=1.0):
        """``scale`` times the draw of ``sample_prepared`` at one point [m, m] from the
        normals [m (m + 1) / 2], in array operators (numpy or the active backend's
        arrays: a torch tensor stays one); a new array. A point without a Cholesky factor
        raises numpy's ``LinAlgError``, a non-finite one ``sample``'s ValueError, as
        ``sample_one`` does."""
        if not math.isfinite(float(point.sum())):  # ``sample_one``'s ValueError
            self.sample_one(as_numpy(point), _Normals(as_numpy(normals)))
        if point.shape[-1] == 2:
            factor = cholesky_2x2(point.tolist())
            if factor is not None:
                draw = gs.array(draw_2x2(factor, normals.tolist()))
                return draw * scale if scale != 1.0 else draw
        try:
            factor = gs.linalg.cholesky(point)
        except Exception:
            self.sample_one(as_numpy(point), _Normals(as_numpy(normals)))
            raise
        index, scales = self._backend_gather(normals)
        at_identity = normals[index]
        at_identity *= scales
        draw = factor @ at_identity.reshape(point.shape) @ factor.T
        # (D + D^T) / 2 times scale in one product: halving is exact, the same values
        return (draw + draw.T) * (scale / 2)

    def _backend_gather(self, like):
        """``_gather`` as arrays of ``like``'s kind (numpy, or the backend's)."""
        if isinstance(like, np.ndarray):
            return self._gather
        cached = self.__dict__.get("_gather_backend")
        if cached is None:
            index, scales = self._gather
            cached = self._gather_backend = (gs.array(index), to_backend(scales))
        return cached


class _Normals:
    """A generator whose ``standard_normal`` serves given normals (``draw_one``'s
    numpy replay of a failed draw)."""

    def __init__(self, values):
        self.values = values

    def standard_normal(self, size=None):
        """The given normals."""
        return self.values


def cholesky_2x2(point):
    """(l_00, l_10, l_11) of W = L L^T from its lower triangle (nested lists [2, 2]),
    or None if W is not positive definite."""
    (first, _), (off, second) = point
    if not first > 0:
        return None
    root = math.sqrt(first)
    lower = off / root
    rest = second - lower * lower
    return (root, lower, math.sqrt(rest)) if rest > 0 else None


def draw_2x2(factor, normals):
    """L U L^T, U = C * A at I from 3 normals (coordinates of ``from_coordinates``), as
    nested lists of floats [2, 2]; L from ``cholesky_2x2``."""
    root, lower, last = factor
    diagonal_0, scaled_off, diagonal_1 = normals[0], normals[1] * math.sqrt(0.5), normals[2]
    entry_10 = root * (diagonal_0 * lower + scaled_off * last)
    row_1 = (lower * diagonal_0 + last * scaled_off, lower * scaled_off + last * diagonal_1)
    entry_11 = row_1[0] * lower + row_1[1] * last
    return [[root * root * diagonal_0, entry_10], [entry_10, entry_11]]


@register_transport(SPDBuresWassersteinMetric)
class SPDBuresWassersteinTransport(_EigenbasisTransport):
    """Bures-Wasserstein metric, tr(UV) / 4 at I: reference draw 2 C * A.

    K_rs = sqrt((lam_r + lam_s) / 2): geomstats' metric at W is
    sum_rs (P^T U P)_rs (P^T V P)_rs / (2 (lam_r + lam_s)), so this map is an isometry; it
    is the parallel transport from I, since I commutes with every W.
    """

    reference_scale = 2.0

    def kernel(self, eigvals):
        """sqrt((lam_r + lam_s) / 2)."""
        return np.sqrt((eigvals[..., :, None] + eigvals[..., None, :]) / 2)


@register_transport(SPDLogEuclideanMetric)
class SPDLogEuclideanTransport(_EigenbasisTransport):
    """Log-Euclidean metric <dlog_W U, dlog_W V>: U -> d exp_{log W}(U).

    K_rs = (lam_r - lam_s) / (log lam_r - log lam_s), K_rr = lam_r: the divided difference
    of exp at (log lam_r, log lam_s), written lam_s * exprel(log lam_r - log lam_s) so that
    it stays accurate for close eigenvalues.
    """

    def kernel(self, eigvals):
        """lam_s * (exp(x) - 1) / x with x = log lam_r - log lam_s."""
        logs = np.log(eigvals)
        return eigvals[..., None, :] * special.exprel(logs[..., :, None] - logs[..., None, :])


@register_transport(SPDEuclideanMetric)
class SPDEuclideanTransport(_SymmetricCoordinates, EuclideanTransport):
    """Frobenius metric tr(UV) on Sym(m), the same at every W: the transport is identity.

    Registered so that SPD with the Euclidean metric does not inherit the transport of
    ``MatricesMetric`` unchanged (its coordinates fill all m^2 entries, not Sym(m)): the
    coordinates are those of Sym(m), the identity transport that of the Euclidean case.
    """

    @classmethod
    def supports(cls, space):
        """Every SPD space: its coordinates are those of Sym(m)."""
        return True
