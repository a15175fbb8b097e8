"""Spaces (one per supported metric) shared by the optim tests."""

from geomstats.geometry.euclidean import Euclidean
from geomstats.geometry.grassmannian import Grassmannian
from geomstats.geometry.hyperboloid import Hyperboloid
from geomstats.geometry.hypersphere import Hypersphere
from geomstats.geometry.matrices import Matrices
from geomstats.geometry.poincare_ball import PoincareBall
from geomstats.geometry.scalar_product_metric import ScalarProductMetric
from geomstats.geometry.spd_matrices import (
    SPDBuresWassersteinMetric,
    SPDEuclideanMetric,
    SPDLogEuclideanMetric,
    SPDMatrices,
)
from geomstats.geometry.stiefel import Stiefel


def spd(metric=None):
    """SPD(3), with the affine-invariant metric unless another class is given."""
    space = SPDMatrices(3)
    if metric is not None:
        space.equip_with_metric(metric)
    return space


def scaled_sphere():
    """S^2 with the metric tensor multiplied by 2.5."""
    space = Hypersphere(2)
    space.equip_with_metric(ScalarProductMetric(space, 2.5))
    return space


SPACE_FACTORIES = {
    "euclidean": lambda: Euclidean(3),
    "matrices": lambda: Matrices(2, 3),
    "sphere": lambda: Hypersphere(3),
    "scaled_sphere": scaled_sphere,
    "hyperboloid": lambda: Hyperboloid(3),
    "poincare_ball": lambda: PoincareBall(3),
    "stiefel": lambda: Stiefel(4, 2),
    "grassmannian": lambda: Grassmannian(4, 2),
    "spd_affine": spd,
    "spd_bures_wasserstein": lambda: spd(SPDBuresWassersteinMetric),
    "spd_log_euclidean": lambda: spd(SPDLogEuclideanMetric),
    "spd_euclidean": lambda: spd(SPDEuclideanMetric),
}
