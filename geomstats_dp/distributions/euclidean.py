"""Euclidean spaces and matrix spaces with the Frobenius metric: the transport is identity."""

import math

import numpy as np
from geomstats.geometry.euclidean import EuclideanMetric
from geomstats.geometry.matrices import MatricesMetric

from geomstats_dp._backend import as_numpy
from geomstats_dp._validation import check_finite_array
from geomstats_dp.distributions.base import IsometricTransport
from geomstats_dp.distributions.registry import register_transport


@register_transport(EuclideanMetric, MatricesMetric)
class EuclideanTransport(IsometricTransport):
    """N(0, I) in the ambient coordinates; every tangent space is the space itself."""

    @classmethod
    def supports(cls, space):
        """Only full spaces: subspaces (symmetric, skew matrices) share the metric class."""
        return int(space.dim) == math.prod(space.shape)

    def belongs(self, points, atol):
        """Every array of the right shape (checked before) is a point. [k]."""
        return np.ones(points.shape[0], dtype=bool)

    def is_tangent(self, vectors, points, atol):
        """Every array of the right shape is tangent. [k]."""
        return np.ones(points.shape[0], dtype=bool)

    def from_coordinates(self, coefficients):
        """Reshape coordinates to the space's shape."""
        return coefficients.reshape(coefficients.shape[:-1] + tuple(self.space.shape))

    def to_coordinates(self, tangent_vecs):
        """Flatten tangent vectors to coordinates."""
        n_axes = len(self.space.shape)
        return tangent_vecs.reshape(tangent_vecs.shape[: tangent_vecs.ndim - n_axes] + (-1,))

    def draw_one(self, point, normals, scale=1.0):
        """``scale`` times the normals [d] in the space's shape: the draw of ``sample`` at
        one point from these normals (array operators: any backend); a new array. Raises
        ``sample_one``'s ValueError at a point holding NaN or inf."""
        if not math.isfinite(float(point.sum())):
            check_finite_array(as_numpy(point)[None], "base_point")
        return normals.reshape(tuple(self.space.shape)) * scale

    def transport(self, base_points, tangent_vecs):
        """Identity."""
        return tangent_vecs

    def transport_back(self, base_points, tangent_vecs):
        """Identity."""
        return tangent_vecs
