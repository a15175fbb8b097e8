"""Euclidean spaces and matrix spaces with the Frobenius metric: the transport is identity."""

import math

import numpy as np

from geomstats.geometry.euclidean import EuclideanMetric
from geomstats.geometry.matrices import MatricesMetric

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

    def transport(self, base_points, tangent_vecs):
        """Identity."""
        return tangent_vecs

    def transport_back(self, base_points, tangent_vecs):
        """Identity."""
        return tangent_vecs
