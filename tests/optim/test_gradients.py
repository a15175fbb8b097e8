"""Euclidean -> Riemannian gradient conversions against finite differences on geodesics."""

import geomstats.backend as gs
import numpy as np
import pytest

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.optim import AutodiffLoss, FullBatch, SquaredDistanceLoss, minimize
from geomstats_dp.optim.losses import backend_name

from .spaces import SPACE_FACTORIES

AUTODIFF = backend_name() in ("autograd", "pytorch")
needs_autodiff = pytest.mark.skipif(
    not AUTODIFF, reason="automatic differentiation needs the autograd or pytorch backend"
)


def smooth_loss(points, samples):
    """A smooth, non-trivial function of the ambient coordinates, per row."""
    values = gs.sin(points * samples) + points**2 * samples + points**3
    return gs.sum(gs.reshape(values, (points.shape[0], -1)), axis=-1)


def random_point_and_tangents(space, seed, n_tangents=3):
    """A random point and random tangent vectors there (fixed numpy seed)."""
    gs.random.seed(seed)
    point = space.random_point()
    rng = np.random.default_rng(seed)
    ambient = to_backend(rng.standard_normal((n_tangents,) + tuple(space.shape)))
    return point, space.to_tangent(ambient, point)


def directional_derivative(loss, sample, point, tangent_vec, step=1e-5):
    """d/dt f(Exp_x(t v)) at t = 0, central differences: error O(step^2) ~ 1e-10."""
    metric = loss.space.metric
    forward = loss.values(metric.exp(step * tangent_vec, point), sample)
    backward = loss.values(metric.exp(-step * tangent_vec, point), sample)
    return to_numpy((forward - backward) / (2 * step))[0]


def check_gradient(loss, sample, point, tangent_vecs):
    """<grad f(x), v>_x equals the directional derivative for every tangent v."""
    grad = loss.gradients(point, sample)[0]
    assert bool(loss.space.is_tangent(grad, point, atol=1e-8))
    for tangent_vec in tangent_vecs:
        inner = float(to_numpy(loss.space.metric.inner_product(grad, tangent_vec, point)))
        expected = directional_derivative(loss, sample, point, tangent_vec)
        # the geodesic difference quotient has error O(h^2 f''') ~ 1e-9 here
        np.testing.assert_allclose(inner, expected, rtol=1e-6, atol=1e-7)


@needs_autodiff
@pytest.mark.parametrize("name", sorted(SPACE_FACTORIES))
def test_autodiff_gradient_matches_geodesic_derivative(name):
    space = SPACE_FACTORIES[name]()
    point, tangent_vecs = random_point_and_tangents(space, seed=3)
    sample = to_backend(np.random.default_rng(4).uniform(-1, 1, (1,) + tuple(space.shape)))
    check_gradient(AutodiffLoss(space, smooth_loss), sample, point, tangent_vecs)


@pytest.mark.parametrize("name", ["sphere", "spd_log_euclidean", "hyperboloid"])
def test_finite_difference_gradient_matches_geodesic_derivative(name):
    space = SPACE_FACTORIES[name]()
    point, tangent_vecs = random_point_and_tangents(space, seed=5)
    sample = to_backend(np.random.default_rng(6).uniform(-1, 1, (1,) + tuple(space.shape)))
    loss = AutodiffLoss(space, smooth_loss, differentiation="finite_differences")
    grad = loss.gradients(point, sample)[0]
    for tangent_vec in tangent_vecs:
        inner = float(to_numpy(space.metric.inner_product(grad, tangent_vec, point)))
        # ambient forward differences with step 1e-7: ~1e-7 truncation error
        np.testing.assert_allclose(
            inner, directional_derivative(loss, sample, point, tangent_vec), rtol=1e-5, atol=1e-6
        )


@pytest.mark.parametrize(
    "name", ["sphere", "hyperboloid", "poincare_ball", "spd_affine", "spd_bures_wasserstein"]
)
def test_squared_distance_gradient_matches_geodesic_derivative(name):
    space = SPACE_FACTORIES[name]()
    point, tangent_vecs = random_point_and_tangents(space, seed=7)
    gs.random.seed(8)
    sample = gs.expand_dims(space.random_point(), 0)
    check_gradient(SquaredDistanceLoss(space), sample, point, tangent_vecs)


@pytest.mark.skipif(AUTODIFF, reason="the numpy backend is the one without autodiff")
def test_autodiff_on_numpy_names_the_backends_that_work():
    with pytest.raises(ValueError, match="autograd or pytorch"):
        AutodiffLoss(SPACE_FACTORIES["sphere"](), smooth_loss)


@needs_autodiff
@pytest.mark.parametrize("name", ["spd_affine", "hyperboloid", "poincare_ball"])
def test_autodiff_of_half_squared_distance_runs_like_the_closed_form(name):
    """The same run (same draws) with d^2/2 differentiated automatically or by -Log.

    The start is generic: at the identity (SPD's canonical point) the eigh-based distance
    has repeated eigenvalues and no autodiff gradient."""
    space = SPACE_FACTORIES[name]()
    gs.random.seed(9)
    data, start = space.random_point(6), space.random_point()
    half_squared_distance = lambda points, samples: space.metric.squared_dist(
        points, samples
    ) / 2
    runs = [
        minimize(loss, data, FullBatch(1.0, 0.05), 5, 0.5, start, random_state=10)
        for loss in (AutodiffLoss(space, half_squared_distance), SquaredDistanceLoss(space))
    ]
    np.testing.assert_allclose(to_numpy(runs[0].point), to_numpy(runs[1].point), atol=1e-8)
