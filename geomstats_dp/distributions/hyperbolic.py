"""Hyperbolic space: the Lorentz hyperboloid and the Poincare ball. Both O(d).

Hyperboloid: reference e1, tangent space {u : u_0 = 0} where the Minkowski metric is
Euclidean; the parallel transport from e1 is u = a + (w_tail . a_tail) / (1 + w_0) (e1 + w).

Poincare ball: geomstats' metric is 4 <u, v> / (1 - |w|^2)^2, so the reference draw at the
origin is a / 2 and the conformal map u -> (1 - |w|^2) u carries T_0 isometrically to T_w.
"""

import numpy as np
from geomstats.geometry.hyperboloid import HyperboloidMetric
from geomstats.geometry.poincare_ball import PoincareBallMetric

from geomstats_dp.distributions.base import IsometricTransport, row_dots
from geomstats_dp.distributions.registry import register_transport
from geomstats_dp.distributions.sphere import PoleTransport


@register_transport(HyperboloidMetric)
class HyperboloidTransport(PoleTransport):
    """Parallel transport from e1 on the hyperboloid (w_0 >= 1, so the pole is always +e1)."""

    curvature_sign = -1.0
    belongs_implies_finite = True  # NaN or inf make the Minkowski norm NaN or inf

    @staticmethod
    def _minkowski(first, second):
        """Minkowski product -a_0 b_0 + a_tail . b_tail, shape=[k], without a metric matrix."""
        if first.shape[0] == 1:  # Python floats: inf - inf is NaN without a warning
            head = float(first[0, 0]) * float(second[0, 0])
            return np.array([float(first[0, 1:] @ second[0, 1:]) - head])
        tails = row_dots(first[:, 1:], second[:, 1:])
        with np.errstate(invalid="ignore"):  # inf - inf at non-finite points: NaN, fails
            return tails - first[:, 0] * second[:, 0]

    def belongs(self, points, atol):
        """|<w, w>_L + 1| <= atol (geomstats' test) and w_0 > 0 (the upper sheet). [k].

        geomstats' ``Hyperboloid.belongs`` also accepts the lower sheet (w_0 < 0), where
        the transport from e1 does not apply; it builds an m x m metric matrix, this reads w
        once.
        """
        return (np.abs(self._minkowski(points, points) + 1.0) <= atol) & (points[:, 0] > 0)

    def is_tangent(self, vectors, points, atol):
        """|<w, u>_L| <= atol, as geomstats' tangent submersion. [k]."""
        return np.abs(self._minkowski(vectors, points)) <= atol


@register_transport(PoincareBallMetric)
class PoincareBallTransport(IsometricTransport):
    """Poincare ball: reference origin, where the metric is 4 <u, v>."""

    belongs_implies_finite = True  # NaN or inf fail |w|^2 < 1 - atol

    def from_coordinates(self, coefficients):
        """Coordinates [..., d] -> a / 2 at the origin."""
        return coefficients / 2

    def to_coordinates(self, tangent_vecs):
        """u [..., d] at the origin -> 2 u."""
        return 2 * tangent_vecs

    def belongs(self, points, atol):
        """|w|^2 < 1 - atol, as geomstats' ``PoincareBall.belongs``. [k]."""
        return row_dots(points, points) < 1.0 - atol

    def is_tangent(self, vectors, points, atol):
        """Every vector of R^d is tangent to the open ball (shapes are checked before). [k]."""
        return np.ones(points.shape[0], dtype=bool)

    def sample(self, base_points, n_samples, rng):
        """a (1 - |w|^2) / 2 in one pass: ``from_coordinates`` then ``transport``."""
        draws = rng.standard_normal((n_samples,) + base_points.shape)
        if base_points.shape[0] == 1:  # a float factor: no [k, 1] temporaries
            point = base_points[0]
            draws *= (1.0 - float(point @ point)) / 2
        else:
            draws *= self._conformal_factor(base_points) / 2
        return draws

    @staticmethod
    def _conformal_factor(base_points):
        """1 - |w|^2 per base point, shape=[k, 1]."""
        return 1.0 - row_dots(base_points, base_points)[:, None]

    def transport(self, base_points, tangent_vecs):
        """u -> (1 - |w|^2) u."""
        return tangent_vecs * self._conformal_factor(base_points)

    def transport_back(self, base_points, tangent_vecs):
        """u -> u / (1 - |w|^2)."""
        return tangent_vecs / self._conformal_factor(base_points)
