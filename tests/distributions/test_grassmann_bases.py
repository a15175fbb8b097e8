"""Gr(n, r) on orthonormal bases: closed-form geometry and its tangent-Gaussian sampler.

Statistical tolerances come from ``_statistics.py`` (exact standard errors, Bonferroni,
family-wise false alarm 1e-6); geometric identities hold up to rounding.
"""

import numpy as np
import pytest
from scipy.linalg import subspace_angles

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.distributions import TangentGaussian
from geomstats_dp.distributions.grassmann_bases import (
    GrassmannBases,
    GrassmannBasesTransport,
)
from geomstats_dp.distributions.registry import find_transport

from ._statistics import assert_gaussian_coordinates, assert_squared_norm_mean
from ._statistics import orthonormal_coordinates

N, R = 6, 2
N_DRAWS = 10_000
SIGMA = 0.7
ROUNDING = 1e-10


def _basis(seed, flip=False):
    basis = np.linalg.qr(np.random.default_rng(seed).standard_normal((N, R)))[0]
    return -basis if flip else basis


BASES = {"reference": np.eye(N, R), "random": _basis(1), "negative_diagonal": _basis(2, True)}


def _horizontal(seed, base_point, scale=0.4):
    vec = np.random.default_rng(seed).standard_normal((N, R))
    return scale * (vec - base_point @ (base_point.T @ vec))


@pytest.mark.parametrize("name", sorted(BASES))
def test_sampler_is_the_tangent_gaussian(name):
    space = GrassmannBases(N, R)
    assert space.dim == R * (N - R)
    assert find_transport(space.metric, space) is GrassmannBasesTransport
    base_point = BASES[name]
    draws = to_numpy(TangentGaussian(space).sample(
        to_backend(base_point), n_samples=N_DRAWS, sigma=SIGMA, random_state=0))
    assert draws.shape == (N_DRAWS, N, R)
    # tangency: horizontal at the basis
    assert np.abs(np.einsum("ij,sik->sjk", base_point, draws)).max() < ROUNDING
    assert_squared_norm_mean((draws**2).sum(axis=(1, 2)), R * (N - R), SIGMA)
    coords = orthonormal_coordinates(space, space.metric, base_point, draws)
    assert_gaussian_coordinates(coords, SIGMA)


def test_transport_is_an_isometry_and_inverts():
    space = GrassmannBases(N, R)
    sampler = GrassmannBasesTransport(space, space.metric)
    base_point = BASES["negative_diagonal"][None]
    coefficients = np.random.default_rng(3).standard_normal((4, 1, space.dim))
    at_reference = sampler.from_coordinates(coefficients)
    moved = sampler.transport(base_point, at_reference)
    np.testing.assert_allclose((moved**2).sum(axis=(-2, -1)),
                               (coefficients**2).sum(axis=-1), rtol=ROUNDING)
    back = sampler.to_coordinates(sampler.transport_back(base_point, moved))
    np.testing.assert_allclose(back, coefficients, atol=ROUNDING)


def test_exp_and_log_are_grassmann_geodesics():
    space = GrassmannBases(N, R)
    base_point = BASES["random"]
    tangent_vec = _horizontal(4, base_point)
    end = to_numpy(space.metric.exp(to_backend(tangent_vec), to_backend(base_point)))
    np.testing.assert_allclose(end.T @ end, np.eye(R), atol=ROUNDING)
    # the geodesic distance is the norm of the principal angles (scipy, independently)
    angles = subspace_angles(base_point, end)
    np.testing.assert_allclose(np.sqrt((angles**2).sum()), np.linalg.norm(tangent_vec),
                               rtol=1e-8)
    # log inverts exp whatever basis of the end subspace is given
    rotation = np.linalg.qr(np.random.default_rng(5).standard_normal((R, R)))[0]
    log = to_numpy(space.metric.log(to_backend(end @ rotation), to_backend(base_point)))
    np.testing.assert_allclose(log, tangent_vec, atol=1e-8)
    # exp depends only on the subspace: the same span from W Q
    other = to_numpy(space.metric.exp(to_backend(tangent_vec @ rotation),
                                      to_backend(base_point @ rotation)))
    np.testing.assert_allclose(subspace_angles(end, other), 0.0, atol=1e-7)


def test_tangent_projection_and_check():
    space = GrassmannBases(N, R)
    base_point = to_backend(BASES["random"])
    vec = to_backend(np.random.default_rng(6).standard_normal((N, R)))
    projected = space.to_tangent(vec, base_point)
    assert bool(space.is_tangent(projected, base_point))
    assert not bool(space.is_tangent(vec, base_point))
