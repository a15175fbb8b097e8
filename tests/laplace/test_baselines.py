"""Baselines: ambient-space Laplace + projection, and the K-norm gradient mechanism."""

import math

import geomstats.backend as gs
import numpy as np
import pytest
from geomstats.geometry.euclidean import Euclidean
from geomstats.geometry.hypersphere import Hypersphere
from geomstats.geometry.spd_matrices import SPDMatrices
from scipy import stats

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.distributions.laplace import frechet_gradient_sensitivity
from geomstats_dp.distributions.laplace.baselines import (
    ambient_laplace_release,
    ambient_mean_sensitivity,
    knorm_gradient_release,
)
from tests.conftest import shifted

from .laplace_reference import P_MIN, gamma_cdf


def boundary_point(space, center, tangent, radius):
    tangent = to_backend(tangent)
    center = to_backend(center)
    tangent = tangent / space.metric.norm(tangent, center)
    return to_numpy(space.metric.exp(radius * tangent, center))


def test_ambient_radius_is_attained_on_the_sphere_and_spd():
    # r_E bounds |x - m0| over B_r(m0) and is attained: the chord 2 sin(r/2) on the sphere;
    # lambda_max(m0) (e^r - 1) for SPD along the top eigenvector of a diagonal m0.
    radius, n = 0.6, 10
    sphere, north = Hypersphere(2), np.array([0.0, 0.0, 1.0])
    ambient = ambient_mean_sensitivity(sphere, radius, n) * n / 2
    rng = np.random.default_rng(shifted(30))
    for _ in range(20):
        tangent = np.r_[rng.standard_normal(2), 0.0]
        point = boundary_point(sphere, north, tangent, radius)
        assert np.linalg.norm(point - north) == pytest.approx(ambient)
    spd, center = SPDMatrices(2), np.diag([2.0, 0.5])
    ambient = ambient_mean_sensitivity(spd, radius, n, center=to_backend(center)) * n / 2
    for _ in range(20):
        symmetric = rng.standard_normal((2, 2))
        point = boundary_point(spd, center, symmetric + symmetric.T, radius)
        assert np.linalg.norm(point - center) <= ambient * (1 + 1e-9)
    extreme = boundary_point(spd, center, np.diag([1.0, 0.0]), radius)
    assert np.linalg.norm(extreme - center) == pytest.approx(ambient)


def test_ambient_release_noise_is_l2_laplace_in_vech_coordinates():
    # Tiny noise keeps the SPD point inside the cone, so projection is the identity and
    # vech(release - mean) must have norm ~ Gamma(3, Delta/eps): vech has 3 coordinates
    # (Gamma(4) would shift the CDF by about 0.2; the KS critical value at 800 draws is 0.07).
    spd, mean = SPDMatrices(2), np.array([[2.0, 0.3], [0.3, 1.0]])
    sensitivity, epsilon = 0.02, 1.0
    rng = np.random.default_rng(shifted(31))
    releases = np.stack([
        to_numpy(ambient_laplace_release(spd, to_backend(mean), sensitivity, epsilon, rng))
        for _ in range(800)
    ])
    assert bool(np.all(to_numpy(spd.belongs(to_backend(releases)))))
    upper = np.triu_indices(2)
    norms = np.linalg.norm((releases - mean)[:, upper[0], upper[1]], axis=-1)
    assert stats.kstest(norms, gamma_cdf(3, sensitivity / epsilon)).pvalue > P_MIN


def test_ambient_release_is_projected_on_the_sphere():
    sphere = Hypersphere(2)
    release = ambient_laplace_release(
        sphere, gs.array([0.0, 0.0, 1.0]), 0.5, 1.0, random_state=shifted(3)
    )
    assert release.shape == (3,)
    assert bool(to_numpy(sphere.belongs(release)))


@pytest.mark.slow
def test_knorm_gradient_mechanism_on_euclidean_space():
    # Data symmetric about m0: grad F(x) = x - m0, so the density is
    # exp(-|x - m0| / sigma) on B_r(m0), sigma = 2 Delta_g / eps, and |x - m0| follows
    # Gamma(2, sigma) truncated to [0, r]. 1,000 independent chains of 300 steps.
    space, radius, epsilon = Euclidean(2), 1.0, 2.0
    center = np.array([0.5, -0.5])
    offsets = np.array([[0.3, 0.0], [-0.3, 0.0], [0.0, 0.6], [0.0, -0.6]])
    data = center + offsets
    sigma = 2 * frechet_gradient_sensitivity(space, radius, len(data)) / epsilon
    releases = knorm_gradient_release(
        space, to_backend(data), epsilon, radius, to_backend(center), n_samples=1000,
        random_state=shifted(32), burn_in=300,
    )
    distances = np.linalg.norm(to_numpy(releases) - center, axis=-1)
    assert distances.max() < radius
    assert stats.kstest(distances, gamma_cdf(2, sigma, radius)).pvalue > P_MIN


def test_knorm_gradient_release_on_the_sphere_and_data_check():
    sphere, center = Hypersphere(2), np.array([0.0, 0.0, 1.0])
    data = np.stack([boundary_point(sphere, center, np.array([c, s, 0.0]), 0.3)
                     for c, s in [(1, 0), (0, 1), (-1, 1)]])
    release = knorm_gradient_release(
        sphere, to_backend(data), 1.0, math.pi / 8, to_backend(center), random_state=shifted(4),
        burn_in=50,
    )
    assert release.shape == (3,)
    assert float(to_numpy(sphere.metric.dist(release, to_backend(center)))) < math.pi / 8
    outside = np.concatenate([data, [[1.0, 0.0, 0.0]]])
    with pytest.raises(ValueError, match="indices \\[3\\]"):
        knorm_gradient_release(sphere, to_backend(outside), 1.0, math.pi / 8,
                               to_backend(center))
