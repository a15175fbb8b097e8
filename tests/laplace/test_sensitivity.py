"""Curvature constants, the Frechet-mean sensitivity bound and the Laplace scale rule."""

import math

import numpy as np
import pytest
from geomstats.geometry.euclidean import Euclidean
from geomstats.geometry.grassmannian import Grassmannian
from geomstats.geometry.hyperboloid import Hyperboloid
from geomstats.geometry.hypersphere import Hypersphere
from geomstats.geometry.poincare_ball import PoincareBall
from geomstats.geometry.spd_matrices import (
    SPDBuresWassersteinMetric,
    SPDLogEuclideanMetric,
    SPDMatrices,
)
from geomstats.geometry.stiefel import Stiefel
from geomstats.learning.frechet_mean import FrechetMean

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.distributions.laplace import (
    curvature_bounds,
    frechet_gradient_sensitivity,
    frechet_mean_sensitivity,
    injectivity_radius,
    laplace_scale,
    max_data_radius,
)


def equipped(space, metric_class=None, scale=None):
    if metric_class is not None:
        space.equip_with_metric(metric_class)
    if scale is not None:
        space.equip_with_metric(scale * space.metric)
    return space


def embedded_matrix(block):
    """Tangent vector at diag(1, 1, 0, 0) of Gr(4, 2) from its off-diagonal block."""
    matrix = np.zeros((4, 4))
    matrix[2:, :2] = block
    matrix[:2, 2:] = block.T
    return matrix


def sectional_curvature(space, point, vector_a, vector_b, step=1e-2):
    """K from d(Exp(tX), Exp(tY))^2 = 2 t^2 - K t^4 / 3 + O(t^5), X, Y orthonormal.

    The O(t^5) remainder makes the estimate accurate to about 1e-4 at t = 1e-2.
    """
    metric, point = space.metric, to_backend(point)
    vector_a, vector_b = to_backend(vector_a), to_backend(vector_b)
    vector_a = vector_a / metric.norm(vector_a, point)
    vector_b = vector_b - metric.inner_product(vector_a, vector_b, point) * vector_a
    vector_b = vector_b / metric.norm(vector_b, point)
    squared = metric.squared_dist(metric.exp(step * vector_a, point),
                                  metric.exp(step * vector_b, point))
    return 3 * (2 * step**2 - float(to_numpy(squared))) / step**4


def random_tangent(space, point, rng):
    return to_numpy(space.to_tangent(to_backend(rng.standard_normal(space.shape)),
                                     to_backend(point)))


OFF_DIAGONAL = np.array([[0.0, 1.0], [1.0, 0.0]])
# name -> (space factory, base point, pair attaining the lowest curvature, pair attaining the
# highest); None when every pair has the same curvature.
CURVATURE_CASES = {
    "sphere": (lambda: Hypersphere(2), np.array([0.0, 0.6, 0.8]), None, None),
    "sphere_radius_2": (lambda: equipped(Hypersphere(3), scale=4.0),
                        np.array([1.0, 0, 0, 0]), None, None),
    "hyperboloid": (lambda: Hyperboloid(3), np.array([math.sqrt(2), 1.0, 0, 0]), None, None),
    "poincare": (lambda: PoincareBall(2), np.array([0.3, 0.4]), None, None),
    "spd_affine": (lambda: SPDMatrices(2), np.array([[2.0, 0.3], [0.3, 1.0]]),
                   None,  # the pair below is moved to the base point by congruence
                   None),
    "log_euclidean": (lambda: equipped(SPDMatrices(2), SPDLogEuclideanMetric),
                      np.array([[2.0, 0.3], [0.3, 1.0]]), None, None),
    "euclidean": (lambda: Euclidean(3), np.zeros(3), None, None),
    "grassmann": (lambda: Grassmannian(4, 2), np.diag([1.0, 1.0, 0.0, 0.0]),
                  (embedded_matrix(np.diag([1.0, 0.0])), embedded_matrix(np.diag([0.0, 1.0]))),
                  (embedded_matrix(np.eye(2)), embedded_matrix(np.array([[0, 1.0], [-1, 0]])))),
    "grassmann_lines": (lambda: Grassmannian(3, 1), np.diag([1.0, 0.0, 0.0]), None, None),
}


@pytest.mark.parametrize("name", sorted(CURVATURE_CASES))
def test_curvature_bounds_hold_numerically(name):
    make_space, point, lowest_pair, highest_pair = CURVATURE_CASES[name]
    space = make_space()
    low, high = curvature_bounds(space)
    rng = np.random.default_rng(20)
    for _ in range(30):
        value = sectional_curvature(
            space, point, random_tangent(space, point, rng), random_tangent(space, point, rng)
        )
        assert low - 1e-3 <= value <= high + 1e-3
    if lowest_pair is not None:
        assert sectional_curvature(space, point, *lowest_pair) == pytest.approx(low, abs=1e-3)
    if highest_pair is not None:
        assert sectional_curvature(space, point, *highest_pair) == pytest.approx(high, abs=1e-3)
    if low == high:  # constant curvature: a random pair attains it
        assert value == pytest.approx(low, abs=1e-3)


def test_spd_affine_curvature_reaches_minus_one_half():
    # At I: X = diag(1, -1)/sqrt2, Y = offdiag(1, 1)/sqrt2 give -|[X, Y]|^2 / 4 = -1/2; moved
    # to another base point by the isometry x -> A x A^T, A = p^1/2.
    space = SPDMatrices(2)
    point = np.array([[2.0, 0.3], [0.3, 1.0]])
    values, vectors = np.linalg.eigh(point)
    sqrt_point = (vectors * np.sqrt(values)) @ vectors.T
    pair = [sqrt_point @ v @ sqrt_point for v in (np.diag([1.0, -1.0]), OFF_DIAGONAL)]
    assert sectional_curvature(space, point, *pair) == pytest.approx(-0.5, abs=1e-3)
    assert curvature_bounds(space) == (-0.5, 0.0)


def test_radius_limits():
    assert max_data_radius(Hypersphere(2)) == pytest.approx(math.pi / 4)
    assert max_data_radius(equipped(Hypersphere(2), scale=4.0)) == pytest.approx(math.pi / 2)
    assert max_data_radius(Hyperboloid(2)) == math.inf
    assert max_data_radius(SPDMatrices(3)) == math.inf
    assert max_data_radius(Grassmannian(4, 2)) == pytest.approx(math.pi / 4)
    assert injectivity_radius(Hypersphere(4)) == pytest.approx(math.pi)
    # geomstats' Grassmann distance between lines at angle theta is sqrt(2) theta, so the
    # injectivity radius (principal angle pi/2) is pi / sqrt(2).
    lines = Grassmannian(2, 1)
    angle = 1.2
    line = np.array([math.cos(angle), math.sin(angle)])
    distance = lines.metric.dist(to_backend(np.diag([1.0, 0.0])), to_backend(np.outer(line, line)))
    assert float(to_numpy(distance)) == pytest.approx(math.sqrt(2) * angle)
    assert injectivity_radius(lines) == pytest.approx(math.pi / math.sqrt(2))


def test_sensitivity_formula_and_radius_check():
    # Theorem 2 of Reimherr et al.: 2 r (2 - h) / (n h); h = 1 when kappa <= 0.
    assert frechet_mean_sensitivity(Hyperboloid(2), 1.5, 50) == pytest.approx(2 * 1.5 / 50)
    r, n = 0.5, 20
    h = 2 * r / math.tan(2 * r)
    assert frechet_mean_sensitivity(Hypersphere(2), r, n) == pytest.approx(
        2 * r * (2 - h) / (n * h)
    )
    assert frechet_gradient_sensitivity(Hypersphere(2), r, n) == pytest.approx(
        2 * r * (2 - h) / n
    )
    with pytest.raises(ValueError, match="r\\* = 0.785398"):
        frechet_mean_sensitivity(Hypersphere(2), 0.8, n)
    with pytest.raises(ValueError, match="radius"):
        frechet_mean_sensitivity(Hyperboloid(2), -1.0, n)
    with pytest.raises(ValueError, match="n_samples"):
        frechet_mean_sensitivity(Hyperboloid(2), 1.0, 0)
    with pytest.raises(NotImplementedError, match="StiefelCanonicalMetric"):
        frechet_mean_sensitivity(Stiefel(4, 2), 0.1, n)


def test_laplace_scale_rule():
    spd = SPDMatrices(2)
    assert laplace_scale(0.1, 0.5, spd) == pytest.approx(0.2)
    assert laplace_scale(0.1, 0.5, spd, truncated=True) == pytest.approx(0.4)
    assert laplace_scale(0.1, 0.5, Stiefel(4, 2)) == pytest.approx(0.2)
    assert laplace_scale(0.1, 0.5, equipped(SPDMatrices(2), SPDBuresWassersteinMetric)) == (
        pytest.approx(0.4)
    )
    with pytest.raises(ValueError, match="epsilon"):
        laplace_scale(0.1, 0.0, spd)


def converged_frechet_mean(space, points):
    """Karcher mean with step 0.5 (docs/papers.md: a unit step fails in H^2 at r = 1.5)."""
    estimator = FrechetMean(space)
    estimator.set(init_step_size=0.5, max_iter=2000, epsilon=1e-16)
    mean = estimator.fit(to_backend(points)).estimate_
    gradient = to_numpy(space.metric.log(to_backend(points), mean)).mean(axis=0)
    assert float(to_numpy(space.metric.norm(to_backend(gradient), mean))) < 1e-7
    return to_numpy(mean)


def ball_points(space, center, radius, n_points, rng):
    """Points Exp_center(v) with |v| uniform in [0, radius), isotropic directions."""
    center = to_backend(center)
    vectors = np.stack([random_tangent(space, to_numpy(center), rng) for _ in range(n_points)])
    norms = np.atleast_1d(to_numpy(space.metric.norm(to_backend(vectors), center)))
    lengths = radius * rng.random(n_points)
    vectors = vectors * (lengths / norms).reshape((-1,) + (1,) * (vectors.ndim - 1))
    return to_numpy(space.metric.exp(to_backend(vectors), center)), vectors


SENSITIVITY_CASES = {
    "sphere": (lambda: Hypersphere(2), np.array([0.0, 0.0, 1.0]), math.pi / 8),
    "hyperboloid": (lambda: Hyperboloid(2), np.array([1.0, 0.0, 0.0]), 1.5),
    "spd": (lambda: SPDMatrices(2), np.array([[1.5, 0.2], [0.2, 0.7]]), 1.5),
}


@pytest.mark.parametrize("name", sorted(SENSITIVITY_CASES))
def test_frechet_means_of_neighbours_stay_within_the_bound(name):
    make_space, center, radius = SENSITIVITY_CASES[name]
    space, n_points, rng = make_space(), 10, np.random.default_rng(21)
    bound = frechet_mean_sensitivity(space, radius, n_points)
    inner = 0.999 * radius
    # (a) n-1 points at m0, the replaced point at opposite ends of a diameter: the two-point
    # means sit at distance r/n on either side, so the distance is 2r/n (tight when kappa <= 0)
    _, direction = ball_points(space, center, inner, 1, rng)
    direction = direction[0] / float(to_numpy(space.metric.norm(to_backend(direction[0]),
                                                                to_backend(center))))
    ends = to_numpy(space.metric.exp(to_backend(np.stack([inner * direction, -inner * direction])),
                                     to_backend(center)))
    rest = np.repeat(center[None], n_points - 1, axis=0)
    means = [converged_frechet_mean(space, np.concatenate([rest, end[None]])) for end in ends]
    distance = float(to_numpy(space.metric.dist(to_backend(means[0]), to_backend(means[1]))))
    assert distance <= bound
    assert distance == pytest.approx(2 * inner / n_points, rel=1e-4)
    if curvature_bounds(space)[1] <= 0:  # the bound is attained up to the factor 0.999
        assert distance >= 0.99 * bound
    # (b) random data in the ball, replaced point swapped between two boundary points
    for _ in range(3):
        data, _ = ball_points(space, center, inner, n_points - 1, rng)
        boundary, _ = ball_points(space, center, inner, 2, rng)
        replaced = [np.concatenate([data, boundary[k][None]]) for k in range(2)]
        means = [converged_frechet_mean(space, points) for points in replaced]
        distance = float(to_numpy(space.metric.dist(to_backend(means[0]), to_backend(means[1]))))
        assert distance <= bound
