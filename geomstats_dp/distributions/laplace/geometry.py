"""What the Laplace samplers and the sensitivity bound need to know about a metric.

Keyed on the exact class of the metric (``ScalarProductMetric`` unwrapped): a subclass may
change the geometry (geomstats' ``MinkowskiMetric`` subclasses ``EuclideanMetric``), so it
gets the generic treatment (Metropolis-Hastings sampling, the 2 Delta / eps scale, no
sensitivity bound) unless it is listed here.

Curvatures are in geomstats' normalisation, checked numerically in
tests/laplace/test_sensitivity.py (second-order expansion of the distance between two
geodesics): sphere 1; hyperbolic -1; SPD affine-invariant [-1/2, 0]; Grassmann [0, 1]
(geomstats' metric is twice the principal-angle one, whose range is [0, 2]), constant 1/2 for
lines or hyperplanes. A metric scaled by c (``c * space.metric``) divides curvatures by c and
multiplies distances, hence injectivity radii, by sqrt(c).
"""

import math
from dataclasses import dataclass

from geomstats.geometry.euclidean import CanonicalEuclideanMetric, EuclideanMetric
from geomstats.geometry.grassmannian import GrassmannianCanonicalMetric
from geomstats.geometry.hyperboloid import HyperboloidMetric
from geomstats.geometry.hypersphere import HypersphereMetric
from geomstats.geometry.matrices import MatricesMetric
from geomstats.geometry.poincare_ball import PoincareBallMetric
from geomstats.geometry.spd_matrices import (
    SPDAffineMetric,
    SPDBuresWassersteinMetric,
    SPDLogEuclideanMetric,
)
from geomstats.geometry.stiefel import StiefelCanonicalMetric

from geomstats_dp.distributions.registry import unwrap_metric

FAMILIES = ("flat", "sphere", "hyperbolic", "spd_affine", "spd_bures_wasserstein", "generic")


@dataclass(frozen=True)
class Geometry:
    """Facts about a space's metric used by the Laplace mechanism.

    Attributes
    ----------
    family : str
        One of ``FAMILIES``: which exact sampler applies ("generic": Metropolis-Hastings).
    dim : int
        Intrinsic dimension.
    curvature : tuple of float or None
        (lowest, highest) sectional curvature in the unscaled metric; None if unknown.
    injectivity_radius : float or None
        Global injectivity radius in the unscaled metric; None if unknown.
    homogeneous : bool
        Whether isometries act transitively, so that the Laplace normalising constant
        does not depend on the footpoint (Theorem 1 of Reimherr et al. then allows
        sigma = Delta / eps).
    metric_scale : float
        c when the space carries c times a listed metric (1.0 otherwise).
    """

    family: str
    dim: int
    curvature: tuple = None
    injectivity_radius: float = None
    homogeneous: bool = False
    metric_scale: float = 1.0

    def scaled_injectivity_radius(self):
        """Injectivity radius in the space's own (possibly scaled) metric, or None."""
        if self.injectivity_radius is None:
            return None
        return self.injectivity_radius * math.sqrt(self.metric_scale)


def _constant(value, dim):
    """Constant sectional curvature; a one-dimensional space has none (report 0)."""
    return (value, value) if dim >= 2 else (0.0, 0.0)


def _grassmann_curvature(space):
    smaller = min(space.p, space.n - space.p)
    if smaller >= 2:
        return (0.0, 1.0)
    return _constant(0.5, space.dim)


_TABLE = {
    HypersphereMetric: lambda s: ("sphere", _constant(1.0, s.dim), math.pi, True),
    HyperboloidMetric: lambda s: ("hyperbolic", _constant(-1.0, s.dim), math.inf, True),
    PoincareBallMetric: lambda s: ("hyperbolic", _constant(-1.0, s.dim), math.inf, True),
    SPDAffineMetric: lambda s: (
        "spd_affine", (-0.5, 0.0) if s.n >= 2 else (0.0, 0.0), math.inf, True
    ),
    SPDLogEuclideanMetric: lambda s: ("flat", (0.0, 0.0), math.inf, True),
    # curvature unbounded near singular matrices: bounds come from a ball (ball_geometry)
    SPDBuresWassersteinMetric: lambda s: ("spd_bures_wasserstein", None, None, False),
    EuclideanMetric: lambda s: ("flat", (0.0, 0.0), math.inf, True),
    CanonicalEuclideanMetric: lambda s: ("flat", (0.0, 0.0), math.inf, True),
    MatricesMetric: lambda s: ("flat", (0.0, 0.0), math.inf, True),
    GrassmannianCanonicalMetric: lambda s: (
        "generic", _grassmann_curvature(s), math.pi / math.sqrt(2.0), True
    ),
    StiefelCanonicalMetric: lambda s: ("generic", None, None, True),
}


def describe(space):
    """Return the ``Geometry`` of ``space``'s metric.

    Parameters
    ----------
    space : Manifold
        A geomstats space equipped with a metric.

    Returns
    -------
    geometry : Geometry
    """
    if not hasattr(space, "metric"):
        raise TypeError(f"space {type(space).__name__} has no metric; equip it with one first")
    metric, scale = unwrap_metric(space.metric)
    dim = int(space.dim)
    entry = _TABLE.get(type(metric))
    if entry is None:
        return Geometry("generic", dim, metric_scale=scale)
    family, curvature, injectivity, homogeneous = entry(space)
    return Geometry(family, dim, curvature, injectivity, homogeneous, scale)
