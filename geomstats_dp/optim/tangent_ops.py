"""Tangent projections and norms in plain array code where the metric is the ambient one.

On the sphere S^d in R^(d+1) and on Euclidean space the Riemannian norm of a tangent
vector is its Euclidean norm, and the projection onto the tangent space at x is
v - (<v, x> / <x, x>) x (the sphere; geomstats' ``Hypersphere.to_tangent``) or the
identity (Euclidean). ``tangent_ops_for(space)`` gives both as one-line array code
(array operators and ``geomstats.backend``: a torch tensor stays a torch tensor), the same values to
rounding as geomstats' ``to_tangent`` and ``metric.norm``, without their vectorisation
wrappers; other spaces get geomstats' own.
"""

import geomstats.backend as gs
import numpy as np
from geomstats.geometry.euclidean import CanonicalEuclideanMetric, Euclidean
from geomstats.geometry.hypersphere import Hypersphere, HypersphereMetric


class TangentOps:
    """geomstats' ``space.to_tangent`` and ``space.metric.norm``.

    Parameters
    ----------
    space : Manifold
    """

    def __init__(self, space):
        self.space = space

    def to_tangent(self, vectors, base_point):
        """Project ``vectors`` [..., *space.shape] onto the tangent space at
        ``base_point`` [*space.shape]."""
        return self.space.to_tangent(vectors, base_point)

    def norms(self, tangent_vecs, base_point):
        """Riemannian norms at ``base_point`` of ``tangent_vecs`` [..., *space.shape],
        shape=[...]."""
        return self.space.metric.norm(tangent_vecs, base_point)


class AmbientTangentOps(TangentOps):
    """Vector spaces with the ambient metric (sphere, Euclidean space): the norm is the
    Euclidean one of the last axis; the sphere's projection removes the component
    along the base point."""

    def __init__(self, space):
        super().__init__(space)
        self.sphere = isinstance(space, Hypersphere)

    def to_tangent(self, vectors, base_point):
        """v - (<v, x> / <x, x>) x on the sphere, v on Euclidean space."""
        if not self.sphere or base_point.ndim != 1:
            return super().to_tangent(vectors, base_point)
        with np.errstate(invalid="ignore", over="ignore"):  # a record's inf: no warning
            coef = (vectors @ base_point) / (base_point @ base_point)
            return vectors - coef[..., None] * base_point

    def norms(self, tangent_vecs, base_point):
        """|v| along the last axis."""
        with np.errstate(invalid="ignore", over="ignore"):
            return gs.sqrt(gs.sum(tangent_vecs * tangent_vecs, axis=-1))


def tangent_ops_for(space):
    """``AmbientTangentOps`` for a sphere or a 1-d-shaped Euclidean space with geomstats'
    own metric class, ``TangentOps`` (geomstats' maps) otherwise."""
    metric_type = type(space.metric)
    if (isinstance(space, Hypersphere) and metric_type is HypersphereMetric) or (
            type(space) is Euclidean and metric_type is CanonicalEuclideanMetric
            and len(space.shape) == 1):
        return AmbientTangentOps(space)
    return TangentOps(space)
