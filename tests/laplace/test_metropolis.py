"""The property the manifold Metropolis-Hastings kernel rests on: theta_x(y) = theta_y(x).

theta_x(y) = |det dExp_x| at Log_x(y) in orthonormal bases of T_x and T_y. On SPD(2) with the
affine-invariant metric it is not a function of rho(x, y) alone (the space is not isotropic),
so the symmetry is a real check. Central differences with step 1e-6 leave errors near 1e-9.
"""

import numpy as np
from geomstats.geometry.spd_matrices import SPDMatrices

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.distributions.baselines import orthonormal_basis
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
