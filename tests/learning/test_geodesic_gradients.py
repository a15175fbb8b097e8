"""The closed-form geodesic regression gradients against central finite differences of
the loss, on the three spaces of constant curvature; the refusal of other spaces."""

import numpy as np
import pytest
from geomstats.geometry.euclidean import Euclidean
from geomstats.geometry.hyperboloid import Hyperboloid
from geomstats.geometry.hypersphere import Hypersphere
from geomstats.geometry.poincare_ball import PoincareBall
from geomstats.geometry.spd_matrices import SPDMatrices

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.learning._geodesic_gradients import curvature_of, gradients, losses
from geomstats_dp.optim import canonical_point

SPACES = {"euclidean": Euclidean(3), "sphere": Hypersphere(2),
          "hyperboloid": Hyperboloid(2)}
STEP = 1e-5


def _setting(space, seed):
    """A point p, a tangent vector v (|v| about 1.5: curvature matters), covariates in
    [-1, 1] and responses far from the fitted points (large residuals)."""
    rng = np.random.default_rng(seed)
    start = canonical_point(space)
    point = space.metric.exp(space.to_tangent(to_backend(
        rng.normal(scale=0.5, size=space.shape)), start), start)
    vec = space.to_tangent(to_backend(rng.normal(size=space.shape)), point)
    x = to_backend(rng.uniform(-1, 1, 6))
    y = space.metric.exp(space.to_tangent(to_backend(
        rng.normal(size=(6, *space.shape))), point), point)
    return point, vec, x, y, rng


@pytest.mark.parametrize("name", list(SPACES))
@pytest.mark.parametrize("seed", [0, 1])
def test_gradients_match_finite_differences_of_the_loss(name, seed):
    space = SPACES[name]
    point, vec, x, y, rng = _setting(space, seed)
    grad_point, grad_vec = gradients(space, curvature_of(space), point, vec, x, y)
    for i in range(len(x)):
        one_x, one_y = x[i:i + 1], y[i:i + 1]
        direction = space.to_tangent(to_backend(rng.normal(size=space.shape)), point)

        def moved_point(t, one_x=one_x, one_y=one_y, direction=direction):
            # p along a geodesic, v parallel transported with it
            moved = space.metric.exp(t * direction, point)
            carried = space.metric.parallel_transport(vec, point, end_point=moved)
            return float(to_numpy(losses(space, moved, carried, one_x, one_y))[0])

        def moved_vec(t, one_x=one_x, one_y=one_y, direction=direction):
            return float(to_numpy(losses(space, point, vec + t * direction, one_x, one_y))[0])

        for function, gradient in ((moved_point, grad_point[i]), (moved_vec, grad_vec[i])):
            numerical = (function(STEP) - function(-STEP)) / (2 * STEP)
            exact = float(space.metric.inner_product(gradient, direction, point))
            assert abs(numerical - exact) <= 1e-5 * max(1.0, abs(numerical)), (name, i)


@pytest.mark.parametrize("name", list(SPACES))
def test_zero_covariate_gives_the_mean_gradient_and_no_vector_gradient(name):
    space = SPACES[name]
    point, vec, _, y, _ = _setting(space, 3)
    x = to_backend(np.zeros(len(y)))
    grad_point, grad_vec = gradients(space, curvature_of(space), point, vec, x, y)
    np.testing.assert_allclose(to_numpy(grad_point), -to_numpy(space.metric.log(y, point)),
                               atol=1e-10)
    np.testing.assert_allclose(to_numpy(grad_vec), 0.0, atol=1e-12)


def test_curvatures_and_refused_spaces():
    assert [curvature_of(space) for space in SPACES.values()] == [0, 1, -1]
    for space in (SPDMatrices(2), PoincareBall(2)):
        with pytest.raises(ValueError, match="Euclidean, Hypersphere or Hyperboloid"):
            curvature_of(space)


def test_a_far_fitted_point_does_not_raise_and_leaves_the_others_finite():
    space = SPACES["hyperboloid"]
    point = canonical_point(space)
    vec = space.to_tangent(to_backend(np.array([0.0, 40.0, 0.0])), point)
    x = to_backend(np.array([1.0, 0.01]))
    y = space.metric.exp(space.to_tangent(to_backend(np.array(
        [[0.0, 0.1, 0.2], [0.0, -0.3, 0.1]])), point), point)
    grad_point, grad_vec = gradients(space, -1, point, vec, x, y)  # geomstats' exp raises
    assert np.isfinite(to_numpy(grad_point)[1]).all()
    assert np.isfinite(to_numpy(grad_vec)[1]).all()
