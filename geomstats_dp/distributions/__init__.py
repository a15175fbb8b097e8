"""Tangent-space Gaussians (and the Riemannian Laplace law) on geomstats manifolds.

Importing this package registers the closed-form transport of every supported metric.
"""

from geomstats_dp.distributions import euclidean  # noqa: F401  (registers transports)
from geomstats_dp.distributions import grassmann  # noqa: F401  (registers transports)
from geomstats_dp.distributions import grassmann_bases  # noqa: F401  (registers transports)
from geomstats_dp.distributions import hyperbolic  # noqa: F401  (registers transports)
from geomstats_dp.distributions import spd  # noqa: F401  (registers transports)
from geomstats_dp.distributions import sphere  # noqa: F401  (registers transports)
from geomstats_dp.distributions import stiefel  # noqa: F401  (registers transports)
from geomstats_dp.distributions.base import IsometricTransport, TangentSampler
from geomstats_dp.distributions.laplace import RiemannianLaplace
from geomstats_dp.distributions.registry import register_transport
from geomstats_dp.distributions.tangent_gaussian import TangentGaussian

__all__ = [
    "IsometricTransport",
    "RiemannianLaplace",
    "TangentGaussian",
    "TangentSampler",
    "register_transport",
]
