"""The Huber distance loss against its closed form on a Euclidean space:
h_D(d) = d^2 / 2 up to D, D d - D^2 / 2 beyond, gradient -clip_D(z - x)."""

import numpy as np
import pytest
from geomstats.geometry.euclidean import Euclidean
from geomstats.geometry.hypersphere import Hypersphere

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.optim import HuberDistanceLoss
from tests.conftest import shifted

RADIUS = 0.8


def test_values_and_gradients_are_the_huber_closed_form():
    loss = HuberDistanceLoss(Euclidean(3), RADIUS)
    rng = np.random.default_rng(shifted(0))
    x = rng.standard_normal(3)
    data = x + 0.6 * rng.standard_normal((40, 3))  # distances on both sides of the radius
    distances = np.linalg.norm(data - x, axis=1)
    assert (distances < RADIUS).any() and (distances > RADIUS).any()
    values = np.where(distances <= RADIUS, distances**2 / 2,
                      RADIUS * distances - RADIUS**2 / 2)
    factors = np.minimum(1.0, RADIUS / distances)
    np.testing.assert_allclose(to_numpy(loss.values(to_backend(x), to_backend(data))),
                               values, rtol=1e-12)
    np.testing.assert_allclose(to_numpy(loss.gradients(to_backend(x), to_backend(data))),
                               -(data - x) * factors[:, None], rtol=1e-12, atol=1e-15)


def test_gradient_norms_are_capped_at_the_radius_on_a_manifold():
    space = Hypersphere(2)
    loss = HuberDistanceLoss(space, RADIUS)
    draws = np.random.default_rng(shifted(1)).standard_normal((30, 3))
    data = to_backend(draws / np.linalg.norm(draws, axis=1, keepdims=True))
    x = to_backend(np.array([0.0, 0.0, 1.0]))
    gradients = loss.gradients(x, data)
    norms = to_numpy(space.metric.norm(gradients, x))
    distances = to_numpy(space.metric.dist(data, x))
    np.testing.assert_allclose(norms, np.minimum(distances, RADIUS), rtol=1e-9)


@pytest.mark.parametrize("radius", [0.0, -1.0, np.inf])
def test_rejects_a_bad_radius(radius):
    with pytest.raises(ValueError, match="radius"):
        HuberDistanceLoss(Euclidean(2), radius)
