"""Per-sample losses: the squared distance against the sphere's closed forms, its gradient
against derivatives along geodesics, and a user's loss differentiated automatically or by
forward differences against its closed-form gradient."""

import geomstats.backend as gs
import numpy as np
import pytest
from geomstats.geometry.euclidean import Euclidean
from geomstats.geometry.hypersphere import Hypersphere

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.optim import AutodiffLoss, SquaredDistanceLoss
from geomstats_dp.optim.losses import backend_name, forward_differences
from tests.conftest import shifted


def _sphere_points(n, seed):
    draws = np.random.default_rng(seed).standard_normal((n, 3))
    return draws / np.linalg.norm(draws, axis=1, keepdims=True)


def test_squared_distance_matches_the_sphere_s_closed_forms():
    # d(x, z) = arccos <x, z>, Log_x(z) = theta / sin theta (z - cos theta x)
    space = Hypersphere(2)
    loss = SquaredDistanceLoss(space)
    x, data = _sphere_points(1, shifted(0))[0], _sphere_points(6, shifted(1))
    cosines = np.clip(data @ x, -1, 1)
    theta = np.arccos(cosines)
    logs = (theta / np.sin(theta))[:, None] * (data - cosines[:, None] * x)
    np.testing.assert_allclose(to_numpy(loss.values(to_backend(x), to_backend(data))),
                               theta**2 / 2, rtol=1e-9)
    np.testing.assert_allclose(to_numpy(loss.gradients(to_backend(x), to_backend(data))),
                               -logs, atol=1e-9)


def test_the_gradient_is_the_derivative_along_geodesics():
    # d/dt f(Exp_x(t v)) at t = 0 equals <grad f(x), v> for every tangent v
    space = Hypersphere(2)
    loss = SquaredDistanceLoss(space)
    x = to_backend(_sphere_points(1, shifted(2))[0])
    data = to_backend(_sphere_points(4, shifted(3)))
    v = space.to_tangent(to_backend(np.random.default_rng(shifted(4)).standard_normal(3)), x)
    step = 1e-6
    ahead = loss.values(space.metric.exp(step * v, x), data)
    behind = loss.values(space.metric.exp(-step * v, x), data)
    derivative = to_numpy((ahead - behind) / (2 * step))
    expected = to_numpy(space.metric.inner_product(loss.gradients(x, data), v, x))
    np.testing.assert_allclose(derivative, expected, atol=1e-6)


def test_data_off_the_space_or_of_the_wrong_shape_is_refused():
    loss = SquaredDistanceLoss(Hypersphere(2))
    with pytest.raises(ValueError, match="data"):
        loss.check_data(to_backend(np.array([[1.0, 1.0, 0.0]])))
    with pytest.raises(ValueError, match="shape"):
        loss.check_data(to_backend(np.ones((2, 2))))


def _quadratic(points, samples):
    return gs.sum((points - samples) ** 2, axis=-1) / 2


@pytest.mark.parametrize("differentiation", ["autodiff", "finite_differences"])
def test_a_user_loss_gets_its_closed_form_gradient(differentiation):
    if differentiation == "autodiff" and backend_name() == "numpy":
        pytest.skip("autodiff needs the autograd or pytorch backend")
    loss = AutodiffLoss(Euclidean(3), _quadratic, differentiation=differentiation)
    rng = np.random.default_rng(shifted(5))
    x, data = rng.standard_normal(3), rng.standard_normal((5, 3))
    gradients = to_numpy(loss.gradients(to_backend(x), to_backend(data)))
    # forward differences of a quadratic are off by step / 2 per coordinate
    np.testing.assert_allclose(gradients, x - data, atol=1e-6)


def test_forward_differences_of_a_quadratic():
    at = to_backend(np.array([0.5, -1.0]))
    step = 1e-4
    found = to_numpy(forward_differences(lambda p: gs.stack([gs.sum(p**2)]), at, (2,), step))
    np.testing.assert_allclose(found, [2 * to_numpy(at) + step], rtol=1e-8)


def test_a_user_loss_must_be_callable_with_a_known_differentiation():
    with pytest.raises(TypeError, match="function"):
        AutodiffLoss(Euclidean(2), "not a function")
    with pytest.raises(ValueError, match="differentiation"):
        AutodiffLoss(Euclidean(2), _quadratic, differentiation="symbolic")
