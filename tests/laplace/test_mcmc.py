"""The manifold Metropolis-Hastings sampler: the property its kernel rests on,
theta_x(y) = theta_y(x), and its draws' moments on a target of known law.

theta_x(y) = |det dExp_x| at Log_x(y) in orthonormal bases of T_x and T_y. On SPD(2) with the
affine-invariant metric it is not a function of rho(x, y) alone (the space is not isotropic),
so the symmetry is a real check. Central differences with step 1e-6 leave errors near 1e-9.
"""

import math

import numpy as np
import pytest
from geomstats.geometry.euclidean import Euclidean
from geomstats.geometry.spd_matrices import SPDMatrices

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.distributions.baselines import orthonormal_basis
from geomstats_dp.distributions.laplace.mcmc import (
    ManifoldMetropolis,
    default_step_size,
)
from tests.conftest import shifted

STEP = 1e-6


def exp_jacobian_determinant(space, base, target):
    metric = space.metric
    base, target = to_backend(base), to_backend(target)
    direction = metric.log(target, base)
    image_basis = orthonormal_basis(space, metric, target)
    rows = []
    for vector in orthonormal_basis(space, metric, base):
        vector = to_backend(vector)
        derivative = (metric.exp(direction + STEP * vector, base)
                      - metric.exp(direction - STEP * vector, base)) / (2 * STEP)
        rows.append([float(to_numpy(metric.inner_product(derivative, to_backend(e), target)))
                     for e in image_basis])
    return abs(np.linalg.det(np.array(rows)))


def test_volume_density_is_symmetric_on_spd2():
    space = SPDMatrices(2)
    rng = np.random.default_rng(shifted(50))
    values = []
    for _ in range(4):
        pair = []
        for _ in range(2):
            symmetric = rng.normal(scale=0.8, size=(2, 2))
            values_, vectors = np.linalg.eigh(symmetric + symmetric.T)
            pair.append((vectors * np.exp(values_)) @ vectors.T)
        forward = exp_jacobian_determinant(space, pair[0], pair[1])
        backward = exp_jacobian_determinant(space, pair[1], pair[0])
        np.testing.assert_allclose(forward, backward, rtol=1e-6)
        values.append(forward)
    assert np.ptp(values) > 0.05  # the check is not vacuous: theta varies between pairs


@pytest.mark.slow
def test_independent_chains_draw_a_gaussian_target():
    # pi = N(mu, diag(0.25, 4)) on the plane; one draw per chain: iid draws, so the mean
    # and the variances are within 4.5 standard errors (variance of a sample variance:
    # 2 sigma^4 / n for a Gaussian).
    mu, variances, n_draws = np.array([1.0, -2.0]), np.array([0.25, 4.0]), 2000

    def log_target(points):
        centred = to_numpy(points) - mu
        return -0.5 * np.sum(centred**2 / variances, axis=-1)

    sampler = ManifoldMetropolis(Euclidean(2), log_target, step_size=1.5, burn_in=300,
                                 thinning=1)
    draws = sampler.sample(to_backend(mu), n_draws, np.random.default_rng(shifted(0)))
    assert draws.shape == (n_draws, 2)
    assert 0.05 < sampler.acceptance_rate_ < 0.95
    assert np.all(np.abs(draws.mean(axis=0) - mu) < 4.5 * np.sqrt(variances / n_draws))
    assert np.all(np.abs(draws.var(axis=0) - variances)
                  < 4.5 * variances * math.sqrt(2 / n_draws))


def test_default_step_size_stays_inside_the_ball_and_the_step_bound():
    assert default_step_size(0.3) == 0.6
    assert default_step_size(0.3, radius=0.8) == 0.4
    assert default_step_size(0.3, radius=0.8, max_step=0.6) == pytest.approx(0.2)
