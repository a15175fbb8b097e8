"""Hypersphere S^d in R^(d+1): closed-form transport from the pole +e1 or -e1.

Both poles have the same tangent space {u : u_0 = 0} with the Euclidean metric, so the
coordinates a = (0, a_1, ..., a_d) serve as the reference draw for either. The pole is
chosen per base point (s = +1 if w_0 >= 0, else -1) so that the denominator 1 + s w_0 is
at least 1: the formula from +e1 alone breaks down at w = -e1.
"""

import math

import geomstats.backend as gs
import numpy as np
from geomstats.geometry.hypersphere import HypersphereMetric

from geomstats_dp._backend import add_scaled, as_numpy, subtract_scaled
from geomstats_dp._validation import check_finite_array
from geomstats_dp.distributions.base import IsometricTransport, row_dots
from geomstats_dp.distributions.registry import register_transport

CHUNK_FLOATS = 2**15
"""Floats in one temporary of the one-point draw (256 KiB): many draws go in row blocks."""


class PoleTransport(IsometricTransport):
    """Transport from the pole s e1 of a quadric to w, shared by sphere and hyperboloid.

    Forward: u = a - curvature_sign * (w_tail . a_tail) / (1 + s w_0) * (w + s e1);
    inverse: a = u - s u_0 / (1 + s w_0) * (w + s e1). On the sphere (curvature_sign = +1)
    this is the parallel transport from s e1 along the great circle; on the hyperboloid
    (curvature_sign = -1, s = +1 since w_0 >= 1) the parallel transport from e1.
    """

    curvature_sign = 1.0

    def pole_signs(self, base_points):
        """Sign s of the reference pole s e1 used for each base point, shape=[k]."""
        return np.where(base_points[:, 0] >= 0, 1.0, -1.0)

    def _axis_and_denominator(self, base_points):
        """w + s e1 [k, d+1], 1 + s w_0 [k] and s [k]."""
        signs = self.pole_signs(base_points)
        axis = base_points.copy()
        axis[:, 0] += signs
        return axis, 1.0 + signs * base_points[:, 0], signs

    def from_coordinates(self, coefficients):
        """Coordinates [..., d] -> (0, a) [..., d+1], tangent at the poles."""
        tangent_vecs = np.zeros(coefficients.shape[:-1] + (coefficients.shape[-1] + 1,))
        tangent_vecs[..., 1:] = coefficients
        return tangent_vecs

    def to_coordinates(self, tangent_vecs):
        """(0, a) [..., d+1] -> a [..., d]."""
        return tangent_vecs[..., 1:]

    def sample(self, base_points, n_samples, rng):
        """Draw a at the pole and transport it, written in the coordinates a directly.

        u_tail = a - c w_tail and u_0 = -c (w_0 + s), c = curvature_sign (w_tail . a) /
        (1 + s w_0): the same map as ``transport``, without building (0, a) first.
        """
        n_points, size = base_points.shape
        if n_points == 1:  # the same normals as the batched draw below, in the same order
            if n_samples == 1:
                return self.sample_one(base_points[0], rng)[None, None]
            coefficients = rng.standard_normal((n_samples, size - 1))
            return self._sample_one_point(base_points[0], coefficients)[:, None]
        coefficients = rng.standard_normal((n_samples, n_points, size - 1))
        signs = self.pole_signs(base_points)
        denominator = 1.0 + signs * base_points[:, 0]
        overlap = (coefficients[..., None, :] @ base_points[:, 1:, None])[..., 0]  # [n, k, 1]
        coef = overlap * (self.curvature_sign / denominator)[:, None]
        draws = np.empty((n_samples, n_points, size))
        np.subtract(coefficients, coef * base_points[:, 1:], out=draws[..., 1:])
        draws[..., 0] = -coef[..., 0] * (base_points[:, 0] + signs)
        return draws

    def sample_one(self, point, rng):
        """``sample`` at one point [d+1]: ``draw_one`` of the next d normals of ``rng``."""
        return self.draw_one(point, rng.standard_normal(point.shape[0] - 1))

    def draw_one(self, point, normals, scale=1.0):
        """``scale`` times the transport of the normals ``normals`` [d] to one point
        [d+1], in scalars and array operators (numpy or the active backend's arrays: a
        torch tensor stays one), checked for finiteness on the way; a new array.

        With finite normals a, the first entry u_0 = -c (w_0 + s) is non-finite whenever
        w is: NaN or inf in w_tail make c non-finite (|w_0 + s| >= 1), w_0 = NaN makes the
        denominator NaN, w_0 = +-inf gives 0 * inf. Only then is w itself tested, before
        any array operation on it (which could warn).
        """
        head = float(point[0])
        sign = 1.0 if head >= 0 else -1.0
        tail = point[1:]
        # ndarray.dot: the same BLAS dot as ``@``, a third of its call overhead
        coef = float(normals.dot(tail)) * (self.curvature_sign / (1.0 + sign * head))
        first = coef * -(head + sign)
        if not math.isfinite(first):
            check_finite_array(as_numpy(point)[None], "base_point")
        draw = np.empty_like(point) if isinstance(point, np.ndarray) else gs.empty_like(point)
        subtract_scaled(normals, coef, tail, out=draw[1:])
        draw[0] = first
        if scale != 1.0:
            draw *= scale
        return draw

    def draw_padded(self, point, padded, scale=1.0):
        """``draw_one`` from the normals behind a zero, padded = (0, a) [d+1]:
        (0, a) - c (w + s e1) in full-length operations (no slice of w, no write into a
        slice: each costs a tensor call on pytorch); entry 0 as ``draw_one`` forms it."""
        head = float(point[0])
        sign = 1.0 if head >= 0 else -1.0
        coef = float(padded.dot(point)) * (self.curvature_sign / (1.0 + sign * head))
        first = coef * -(head + sign)
        if not math.isfinite(first):
            check_finite_array(as_numpy(point)[None], "base_point")
        draw = add_scaled(padded, -coef, point)
        draw[0] = first
        if scale != 1.0:
            draw *= scale
        return draw

    def _sample_one_point(self, point, coefficients):
        """``sample`` at one base point [d+1] from coefficients [n, d]: scalar pole sign and
        one matrix-vector product (the batched path's per-call cost is several us)."""
        sign = 1.0 if point[0] >= 0 else -1.0
        tail = point[1:]
        coef = (coefficients @ tail) * (self.curvature_sign / (1.0 + sign * point[0]))
        n_samples = coefficients.shape[0]
        draws = np.empty((n_samples, point.shape[0]))
        rows = max(1, CHUNK_FLOATS // point.shape[0])
        for start in range(0, n_samples, rows):  # the temporary coef * tail stays in cache
            chunk = slice(start, start + rows)
            np.subtract(coefficients[chunk], coef[chunk, None] * tail, out=draws[chunk, 1:])
        np.multiply(coef, -(point[0] + sign), out=draws[:, 0])
        return draws

    def transport(self, base_points, tangent_vecs):
        """Pole -> w, for tangent_vecs [n, k, d+1] with zero first entry."""
        axis, denominator, _ = self._axis_and_denominator(base_points)
        overlap = np.einsum("ki,nki->nk", base_points[:, 1:], tangent_vecs[..., 1:])
        coef = self.curvature_sign * overlap / denominator
        return tangent_vecs - coef[..., None] * axis

    def transport_back(self, base_points, tangent_vecs):
        """w -> pole: the exact inverse of ``transport``."""
        axis, denominator, signs = self._axis_and_denominator(base_points)
        coef = signs * tangent_vecs[..., 0] / denominator
        return tangent_vecs - coef[..., None] * axis


@register_transport(HypersphereMetric)
class HypersphereTransport(PoleTransport):
    """Hypersphere in extrinsic coordinates with the induced Euclidean metric. O(d)."""

    belongs_implies_finite = True  # NaN or inf make |w|^2 - 1 NaN or inf

    def belongs(self, points, atol):
        """| |w|^2 - 1 | <= atol, as geomstats' submersion test; one pass over w. [k]."""
        return np.abs(row_dots(points, points) - 1.0) <= atol

    def is_tangent(self, vectors, points, atol):
        """|2 <w, u>| <= atol, as geomstats' tangent submersion. [k]."""
        return np.abs(2.0 * row_dots(points, vectors)) <= atol

    def __init__(self, space, metric):
        if tuple(space.shape) != (int(space.dim) + 1,):
            raise ValueError(
                "the hypersphere transport needs extrinsic coordinates (shape "
                f"({int(space.dim) + 1},)), got shape {tuple(space.shape)}"
            )
        super().__init__(space, metric)
