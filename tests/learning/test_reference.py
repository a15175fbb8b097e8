"""The non-private reference solutions (``learning.reference``)."""

import numpy as np
from geomstats.geometry.euclidean import Euclidean
from geomstats.geometry.hypersphere import Hypersphere

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.learning.reference import exact_frechet_mean
from geomstats_dp.testing._case import _cloud


def test_the_euclidean_frechet_mean_is_the_weighted_average():
    rng = np.random.default_rng(0)
    points, weights = rng.standard_normal((30, 3)), rng.uniform(0.1, 1.0, 30)
    weights /= weights.sum()
    mean = exact_frechet_mean(Euclidean(3), to_backend(points), to_backend(weights))
    np.testing.assert_allclose(to_numpy(mean), weights @ points, atol=1e-8)


def test_the_sphere_mean_zeroes_the_riemannian_gradient():
    sphere = Hypersphere(2)
    points = _cloud(sphere, 30, 0.5, 0)
    mean = exact_frechet_mean(sphere, points)
    gradient = -to_numpy(sphere.metric.log(points, mean)).mean(axis=0)
    assert np.linalg.norm(gradient) < 1e-8
    assert bool(sphere.belongs(mean, atol=1e-8))
