"""What the Laplace mechanism knows of a metric (``describe``): each listed family, a scaled
metric, the generic fallback; injectivity radii against geomstats' own distances."""

import math

import numpy as np
import pytest
from geomstats.geometry.euclidean import Euclidean
from geomstats.geometry.grassmannian import Grassmannian
from geomstats.geometry.hyperboloid import Hyperboloid
from geomstats.geometry.hypersphere import Hypersphere
from geomstats.geometry.minkowski import Minkowski
from geomstats.geometry.spd_matrices import SPDMatrices

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.distributions.laplace.geometry import describe


@pytest.mark.parametrize(
    ("make_space", "family", "curvature", "injectivity"),
    [
        (lambda: Hypersphere(3), "sphere", (1.0, 1.0), math.pi),
        (lambda: Hypersphere(1), "sphere", (0.0, 0.0), math.pi),  # a circle has none
        (lambda: Hyperboloid(2), "hyperbolic", (-1.0, -1.0), math.inf),
        (lambda: Euclidean(4), "flat", (0.0, 0.0), math.inf),
        (lambda: SPDMatrices(3), "spd_affine", (-0.5, 0.0), math.inf),
        (lambda: Grassmannian(4, 2), "generic", (0.0, 1.0), math.pi / math.sqrt(2)),
        (lambda: Grassmannian(3, 1), "generic", (0.5, 0.5), math.pi / math.sqrt(2)),
    ],
)
def test_listed_families(make_space, family, curvature, injectivity):
    space = make_space()
    geometry = describe(space)
    assert (geometry.family, geometry.dim) == (family, int(space.dim))
    assert geometry.curvature == curvature
    assert geometry.injectivity_radius == injectivity
    assert geometry.metric_scale == 1.0


def test_injectivity_radii_are_geomstats_largest_distances():
    sphere = Hypersphere(2)
    north = to_backend(np.array([0.0, 0.0, 1.0]))
    assert float(to_numpy(sphere.metric.dist(north, -north))) == pytest.approx(
        describe(sphere).injectivity_radius, rel=1e-7)
    # lines at a principal angle a are at distance sqrt(2) a (twice the principal-angle
    # metric), so the farthest, a = pi / 2, are at pi / sqrt(2)
    lines, angle = Grassmannian(3, 1), 1.2
    first = np.array([1.0, 0.0, 0.0])
    second = np.array([math.cos(angle), math.sin(angle), 0.0])
    distance = lines.metric.dist(to_backend(np.outer(first, first)),
                                 to_backend(np.outer(second, second)))
    assert float(to_numpy(distance)) * (math.pi / 2) / angle == pytest.approx(
        describe(lines).injectivity_radius, rel=1e-6)


def test_a_scaled_metric_keeps_its_family_and_scales_the_radius():
    space = Hypersphere(2)
    space.equip_with_metric(4.0 * space.metric)
    geometry = describe(space)
    assert (geometry.family, geometry.metric_scale) == ("sphere", 4.0)
    assert geometry.scaled_injectivity_radius() == pytest.approx(2 * math.pi)


def test_an_unlisted_subclass_is_generic():
    # geomstats' MinkowskiMetric subclasses EuclideanMetric but is not flat Euclidean
    geometry = describe(Minkowski(3))
    assert geometry.family == "generic"
    assert geometry.curvature is None and geometry.scaled_injectivity_radius() is None


def test_a_space_without_a_metric_is_refused():
    class Bare:
        dim = 2

    with pytest.raises(TypeError, match="no metric"):
        describe(Bare())
