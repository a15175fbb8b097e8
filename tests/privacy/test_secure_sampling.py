"""SecureGenerator: operating-system entropy, and normals and gammas summed from two
inverse-transform draws (Holohan & Braghin 2021) with the right laws."""

import math
import os

import numpy as np
import pytest
from scipy import stats

from geomstats_dp._backend import SecureGenerator

N_DRAWS = 200_000


@pytest.mark.backend_independent
def test_secure_normals_have_the_standard_moments():
    """Mean 0, variance 1, excess kurtosis 0, each within 5 standard errors
    (sqrt(1/n), sqrt(2/n), sqrt(24/n)); and Kolmogorov-Smirnov against N(0, 1)."""
    draws = SecureGenerator().standard_normal(N_DRAWS)
    assert abs(draws.mean()) < 5 * math.sqrt(1 / N_DRAWS)
    assert abs(draws.var() - 1) < 5 * math.sqrt(2 / N_DRAWS)
    assert abs(stats.kurtosis(draws)) < 5 * math.sqrt(24 / N_DRAWS)
    assert stats.kstest(draws, stats.norm.cdf).pvalue > 1e-4


@pytest.mark.backend_independent
def test_secure_normals_are_a_sum_of_two_draws(monkeypatch):
    """Each normal is (N_1 + N_2) / sqrt(2): it consumes two uniforms (16 bytes)."""
    generator = SecureGenerator()
    drawn = []
    real_urandom = os.urandom
    monkeypatch.setattr(os, "urandom", lambda length: drawn.append(length) or real_urandom(length))
    generator.standard_normal(10)
    single = generator.standard_normal()
    assert sum(drawn) == 16 * 11
    assert isinstance(single, float)


@pytest.mark.backend_independent
def test_secure_draws_come_from_the_operating_system(monkeypatch):
    """The same calls on two generators (no seed exists) give different normals; with
    os.urandom replaced by a constant, they give the same."""
    first, second = SecureGenerator(), SecureGenerator()
    assert not np.array_equal(first.standard_normal(8), second.standard_normal(8))
    monkeypatch.setattr(os, "urandom", lambda length: b"\x5a" * length)
    np.testing.assert_array_equal(first.standard_normal(8), second.standard_normal(8))
    assert first.bytes(3) == b"\x5a" * 3


@pytest.mark.backend_independent
@pytest.mark.parametrize("shape", [0.3, 2.5, 40.0])
def test_secure_gammas_have_their_law(shape):
    draws = SecureGenerator().gamma(shape, 2.0, 50_000)
    assert stats.kstest(draws, stats.gamma(shape, scale=2.0).cdf).pvalue > 1e-4


@pytest.mark.backend_independent
def test_secure_uniforms_have_their_law():
    draws = SecureGenerator().uniform(-1.0, 3.0, size=50_000)
    assert stats.kstest(draws, stats.uniform(-1.0, 4.0).cdf).pvalue > 1e-4


def test_secure_bures_wasserstein_laplace_release_draws_its_uniforms():
    """The Bures-Wasserstein Laplace sampler draws ``rng.uniform``: under secure=True the
    release is made (it raised AttributeError before SecureGenerator had uniforms)."""
    from geomstats.geometry.spd_matrices import SPDBuresWassersteinMetric, SPDMatrices

    from geomstats_dp._backend import to_backend, to_numpy
    from geomstats_dp.learning import PrivateFrechetMean
    from geomstats_dp.privacy import PrivacyBudget

    space = SPDMatrices(3, equip=False)
    space.equip_with_metric(SPDBuresWassersteinMetric)
    points = to_backend(np.array([np.eye(3) * (1 + 0.01 * i) for i in range(10)]))
    estimator = PrivateFrechetMean(space, method="laplace", epsilon=1.0, radius=0.09,
                                   center=to_backend(np.eye(3)), secure=True,
                                   budget=PrivacyBudget(1.0, 0.0)).fit(points)
    assert np.all(np.linalg.eigvalsh(to_numpy(estimator.estimate_)) > 0)
