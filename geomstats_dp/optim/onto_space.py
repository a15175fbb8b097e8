"""Keeping the points a step forms on the space, where rounding would leave it.

A large noisy step (a small epsilon, a large clip norm) can form a point that lies on the
space in exact arithmetic but not in floating point. On SPD, Exp_P(V) = G G^T with the
eigenvalues exp(m_i) of the whitened V spread over e^100 is indefinite once rounded (its
smallest eigenvalues are lost in the rounding of the largest), and the next noise draw,
which factorises the point, fails. ``optim.geodesics`` passes every point it forms through
here: a point numerically on the space is returned unchanged (the very same values), one
that is not is projected back:

- SPD: eigenvalues below lambda_max / ``SPD_CONDITION_LIMIT`` are raised to it (the
  symmetric part, eigenvalues floored: the nearest such matrix in the Frobenius norm);
- the sphere: x / |x| when | |x| - 1 | exceeds ``SPHERE_TOLERANCE``;
- the hyperboloid: a point farther than ``HYPERBOLOID_RADIUS`` from the canonical point
  o = (1, 0, ..., 0) (x_0 > cosh R) is moved along the geodesic from o onto the sphere of
  radius R, (cosh R, sinh R x_tail / |x_tail|): beyond it float64 no longer holds the
  constraint -x_0^2 + |x_tail|^2 = -1, nor the tangent norms there, and geomstats' exp
  divides by a Minkowski norm rounded to 0 (the geodesic ball is convex: the projection
  brings the point no further from any point of the ball). A nearer point off the
  constraint by more than ``HYPERBOLOID_TOLERANCE`` x_0^2 is lifted,
  x_0 = sqrt(1 + |x_tail|^2).

A function of the point and of public constants only: post-processing of the noisy steps
that formed it (the guarantee covers every iterate).
"""

import math

import geomstats.backend as gs
from geomstats.geometry.hyperboloid import Hyperboloid
from geomstats.geometry.hypersphere import Hypersphere
from geomstats.geometry.spd_matrices import SPDMatrices

from geomstats_dp.optim.symmetric_2x2 import function_coefficients, spectrum_2x2

SPD_CONDITION_LIMIT = 1e12  # largest eigenvalue ratio kept (a Cholesky factor exists)
SPHERE_TOLERANCE = 1e-10  # | |x| - 1 | beyond which a sphere point is renormalised
HYPERBOLOID_RADIUS = 15.0  # distance to the canonical point the hyperboloid's points keep
HYPERBOLOID_TOLERANCE = 1e-14  # |<x, x> + 1| / x_0^2 (rounding: a few 1e-16) beyond which it is lifted


def floor_spectrum(point):
    """The SPD point with its eigenvalues floored at lambda_max / SPD_CONDITION_LIMIT,
    with a factor, or None when ``point`` needs no change; and its condition number.

    Parameters
    ----------
    point : array-like, shape=[n, n]
        Symmetric up to rounding (G G^T).

    Returns
    -------
    floored : tuple of array-like, each shape=[n, n], or None
        (P, F, F^-1) with F F^T = P, the eigenvalues of P at least its largest one over
        ``SPD_CONDITION_LIMIT``.
    condition : float
        lambda_max / lambda_min of the point returned (inf for a non-finite point).
    """
    symmetric = (point + gs.transpose(point)) / 2
    eigvals = gs.linalg.eigvalsh(symmetric)
    smallest, largest = float(eigvals[0]), float(eigvals[-1])
    if not math.isfinite(largest):
        return None, math.inf
    if smallest >= largest / SPD_CONDITION_LIMIT:  # 0 for a point that underflowed to 0
        return None, largest / smallest if smallest > 0 else math.inf
    eigvals, eigvecs = gs.linalg.eigh(symmetric)
    roots = gs.sqrt(gs.maximum(eigvals, largest / SPD_CONDITION_LIMIT))
    factor = eigvecs * roots
    floored = factor @ gs.transpose(factor)
    inverse = gs.transpose(eigvecs) / roots[:, None]
    return ((floored + gs.transpose(floored)) / 2, factor, inverse), SPD_CONDITION_LIMIT


def floor_spectrum_2x2(point):
    """``floor_spectrum`` of a 2x2 point given as nested sequences of floats [2, 2]
    (lower triangle read), in plain arithmetic (``optim.compiled_blocks`` compiles it):
    (P, F, F^-1) as nested tuples, F the symmetric square root, or None."""
    (first, _), (off, second) = point
    low, high, mean, gap = spectrum_2x2(first, second, off)
    floor = high / SPD_CONDITION_LIMIT
    if not (high < math.inf and low < floor):  # also None for a non-finite point
        return None
    alpha, beta = function_coefficients(floor, high, mean, gap)
    root_alpha, root_beta = function_coefficients(math.sqrt(floor), math.sqrt(high),
                                                  mean, gap)
    inverse_alpha, inverse_beta = function_coefficients(
        1 / math.sqrt(floor), 1 / math.sqrt(high), mean, gap)
    return (
        ((alpha + beta * first, beta * off), (beta * off, alpha + beta * second)),
        ((root_alpha + root_beta * first, root_beta * off),
         (root_beta * off, root_alpha + root_beta * second)),
        ((inverse_alpha + inverse_beta * first, inverse_beta * off),
         (inverse_beta * off, inverse_alpha + inverse_beta * second)),
    )


def onto_space(space, point):
    """``point`` [*space.shape], or its projection when rounding left ``space`` (SPD,
    sphere, hyperboloid; other spaces unchanged)."""
    if isinstance(space, SPDMatrices) and point.ndim == 2:
        floored, _ = floor_spectrum(point)
        return point if floored is None else floored[0]
    if isinstance(space, Hypersphere) and point.ndim == 1:
        return onto_sphere(point)
    if isinstance(space, Hyperboloid) and point.ndim == 1:
        return onto_hyperboloid(point)
    return point


def onto_sphere(point, squared_norm=None):
    """``point`` [d + 1], or x / |x| when | |x| - 1 | exceeds ``SPHERE_TOLERANCE``
    (unchanged when not finite or zero). ``squared_norm``: |x|^2 as the caller knows it
    to rounding (an exponential map's dot products), which saves the vector's own dot
    product (two tensor calls on pytorch) where it is within the tolerance."""
    if squared_norm is not None and abs(math.sqrt(squared_norm) - 1) <= SPHERE_TOLERANCE / 2:
        return point
    norm = math.sqrt(float(point.dot(point)))  # numpy's norm of a vector, one call
    if math.isfinite(norm) and norm > 0 and abs(norm - 1) > SPHERE_TOLERANCE:
        return point / norm
    return point


def minkowski_squared_norm(point):
    """-x_0^2 + |x_tail|^2 of ``point`` [dim + 1], a float."""
    return float(gs.sum(point[1:] ** 2) - point[0] ** 2)


def onto_hyperboloid(point):
    """``point`` [dim + 1] in extrinsic coordinates, projected onto the geodesic ball of
    radius ``HYPERBOLOID_RADIUS`` at the canonical point or lifted onto the hyperboloid
    where it left them (see the module docstring); unchanged otherwise (and when not
    finite)."""
    first = float(point[0])
    tail = point[1:]
    if first > math.cosh(HYPERBOLOID_RADIUS):
        tail_norm = float(gs.linalg.norm(tail))
        if not (math.isfinite(first) and math.isfinite(tail_norm)) or tail_norm == 0:
            return point
        return gs.concatenate([
            gs.array([math.cosh(HYPERBOLOID_RADIUS)], dtype=point.dtype),
            tail * (math.sinh(HYPERBOLOID_RADIUS) / tail_norm),
        ])
    drift = abs(minkowski_squared_norm(point) + 1)
    if math.isfinite(drift) and drift > HYPERBOLOID_TOLERANCE * max(first**2, 1.0):
        return gs.concatenate([gs.sqrt(1 + gs.sum(tail**2))[None], tail])
    return point
