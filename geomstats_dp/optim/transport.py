"""Vector transport T_x -> T_y for the variance-reduced strategy.

Resolution order: geomstats' closed-form parallel transport (SPD affine-invariant and
Log-Euclidean, sphere, hyperboloid, Grassmannian, Euclidean and matrix spaces); else the
closed-form isometric transport through a reference point that ``geomstats_dp.distributions``
registers for the metric; else the projection ``space.to_tangent`` (not an isometry: the
variance-reduced strategy then re-clips the transported gradient).
"""

from abc import ABC, abstractmethod

import numpy as np
from geomstats.geometry.euclidean import EuclideanMetric
from geomstats.geometry.grassmannian import GrassmannianCanonicalMetric
from geomstats.geometry.hyperboloid import HyperboloidMetric
from geomstats.geometry.hypersphere import HypersphereMetric
from geomstats.geometry.spd_matrices import SPDAffineMetric, SPDLogEuclideanMetric

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.distributions.registry import find_transport, unwrap_metric

# geomstats 2.8 metrics whose parallel_transport is a closed form (SPD Bures-Wasserstein
# integrates an ODE; Stiefel and the Poincare ball have none).
CLOSED_FORM_PARALLEL_TRANSPORT = (
    SPDAffineMetric,
    SPDLogEuclideanMetric,
    HypersphereMetric,
    HyperboloidMetric,
    GrassmannianCanonicalMetric,
    EuclideanMetric,
)


class VectorTransport(ABC):
    """Moves tangent vectors at one point to tangent vectors at another.

    Attributes
    ----------
    isometric : bool
        Whether norms (in the metric) are preserved.
    """

    isometric = True

    def __init__(self, space):
        self.space = space

    @abstractmethod
    def __call__(self, tangent_vecs, base_point, end_point):
        """Transport tangent vectors from ``base_point`` to ``end_point``.

        Parameters
        ----------
        tangent_vecs : array-like, shape=[k, *space.shape]
            Tangent at ``base_point``.
        base_point, end_point : array-like, shape=[*space.shape]

        Returns
        -------
        tangent_vecs : array-like, shape=[k, *space.shape]
            Tangent at ``end_point``.
        """

    def __repr__(self):
        return f"{type(self).__name__}({type(self.space).__name__})"


class ParallelTransport(VectorTransport):
    """geomstats' closed-form parallel transport along the geodesic."""

    def __call__(self, tangent_vecs, base_point, end_point):
        """Parallel transport along the geodesic from ``base_point`` to ``end_point``."""
        return self.space.metric.parallel_transport(
            tangent_vecs, base_point, end_point=end_point
        )


class ReferenceTransport(VectorTransport):
    """The isometric transport x -> reference -> y of ``geomstats_dp.distributions``."""

    def __init__(self, space, transport_class):
        super().__init__(space)
        self.transport = transport_class(space, unwrap_metric(space.metric)[0])

    def __call__(self, tangent_vecs, base_point, end_point):
        """Isometric transport through the reference point (float64 numpy inside)."""
        vecs = to_numpy(tangent_vecs)
        shape = vecs.shape
        base_points = np.broadcast_to(to_numpy(base_point), shape)
        end_points = np.broadcast_to(to_numpy(end_point), shape)
        return to_backend(self.transport.vector_transport(vecs, base_points, end_points))


class ProjectionTransport(VectorTransport):
    """Orthogonal projection onto the tangent space at the end point (not isometric)."""

    isometric = False

    def __call__(self, tangent_vecs, base_point, end_point):
        """Project onto T_end_point."""
        return self.space.to_tangent(tangent_vecs, end_point)


def resolve_transport(space):
    """Return the vector transport to use on ``space`` (see the module docstring).

    Parameters
    ----------
    space : Manifold

    Returns
    -------
    transport : VectorTransport
    """
    metric, _ = unwrap_metric(space.metric)
    if isinstance(metric, CLOSED_FORM_PARALLEL_TRANSPORT):
        return ParallelTransport(space)
    transport_class = find_transport(metric)
    if transport_class is not None:
        return ReferenceTransport(space, transport_class)
    return ProjectionTransport(space)
