"""The polar form of SPD(n) under geomstats' affine-invariant metric.

The Laplace sampler relies on the Riemannian volume in polar coordinates
x = Q diag(exp(r)) Q^T being proportional to prod_{i<j} sinh(|r_i - r_j| / 2) times Haar
measure. Checked here from geomstats' own ``inner_product``: in the coordinates
(theta, r) -> Q0 expm(S(theta)) diag(exp(r)) expm(-S(theta)) Q0^T at theta = 0 (where Haar
measure has a constant density), sqrt(det g) / prod sinh(|r_i - r_j| / 2) must not depend on
(Q0, r).
"""

import math

import numpy as np
import pytest
from geomstats.geometry.spd_matrices import SPDMatrices
from scipy import stats
from scipy.linalg import expm

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.distributions.laplace.spd_polar import SPDSpectrumLaw, scale_limit
from tests.conftest import shifted

from .laplace_reference import P_MIN, spd_pair_gaps, spd_radius_cdf, spd_spread_cdf

N = 3
N_DRAWS = 4000
PAIRS = [(i, j) for i in range(N) for j in range(i + 1, N)]
STEP = 1e-5


def polar(rotation, coordinates):
    angles, spectrum = coordinates[: len(PAIRS)], coordinates[len(PAIRS):]
    skew = np.zeros((N, N))
    for angle, (i, j) in zip(angles, PAIRS):
        skew[i, j], skew[j, i] = angle, -angle
    q = rotation @ expm(skew)
    return q @ np.diag(np.exp(spectrum)) @ q.T


def volume_density(space, rotation, spectrum):
    """sqrt(det g) of the affine-invariant metric in (theta, r) coordinates at theta = 0."""
    base = np.r_[np.zeros(len(PAIRS)), spectrum]
    point = polar(rotation, base)
    partials = []
    for k in range(base.size):
        shift = np.zeros(base.size)
        shift[k] = STEP
        partials.append((polar(rotation, base + shift) - polar(rotation, base - shift)) / (2 * STEP))
    partials = np.stack(partials)
    gram = to_numpy(space.metric.inner_product(
        to_backend(partials[:, None]), to_backend(partials[None, :]), to_backend(point)
    ))
    return np.sqrt(np.linalg.det(gram))


def test_volume_element_is_prod_sinh_of_half_gaps():
    space = SPDMatrices(N)
    rng = np.random.default_rng(shifted(40))
    half, full = [], []
    for _ in range(6):
        rotation, _ = np.linalg.qr(rng.standard_normal((N, N)))
        spectrum = rng.normal(scale=1.5, size=N)
        gaps = np.array([abs(spectrum[i] - spectrum[j]) for i, j in PAIRS])
        density = volume_density(space, rotation, spectrum)
        half.append(density / np.prod(np.sinh(gaps / 2)))
        full.append(density / np.prod(np.sinh(gaps)))
    # finite differences with step 1e-5 leave a relative error near 1e-9
    assert np.std(half) / np.mean(half) < 1e-6
    assert np.std(full) / np.mean(full) > 1e-2


@pytest.mark.backend_independent
@pytest.mark.parametrize(
    "n, sigma, upper",
    [(2, 0.1, math.inf), (2, 1.2, math.inf), (3, 0.05, math.inf), (3, 0.5, math.inf),
     (3, 2.0, 1.5)],
)
def test_spd_spectrum_norm_and_spread_match_quadrature(n, sigma, upper):
    # |r| and the direction statistic sum |r_i - r_j| / |r| together distinguish the target
    # from either envelope (the norm alone barely does at sigma = 0.5).
    spectra = SPDSpectrumLaw(n, sigma, upper).sample_exact(N_DRAWS, np.random.default_rng(shifted(7)))
    norms = np.linalg.norm(spectra, axis=-1)
    assert stats.kstest(norms, spd_radius_cdf(n, sigma, upper)).pvalue > P_MIN
    spread = spd_pair_gaps(spectra).sum(axis=-1) / norms
    assert stats.kstest(spread, spd_spread_cdf(n, sigma, upper)).pvalue > P_MIN


@pytest.mark.backend_independent
@pytest.mark.slow
@pytest.mark.parametrize("n, sigma", [(2, 0.3), (3, 0.2)])
def test_spd_spectrum_mcmc_matches_quadrature(n, sigma):
    # Independent chains, one draw each, 2,000 steps: the draws are iid up to the burn-in
    # bias; the same KS threshold applies on 2,000 draws.
    law = SPDSpectrumLaw(n, sigma)
    draws = law.sample_mcmc(2000, np.random.default_rng(shifted(8)), burn_in=2000)
    norms = np.linalg.norm(draws, axis=-1)
    assert stats.kstest(norms, spd_radius_cdf(n, sigma)).pvalue > P_MIN
    spread = spd_pair_gaps(draws).sum(axis=-1) / norms
    assert stats.kstest(spread, spd_spread_cdf(n, sigma)).pvalue > P_MIN


@pytest.mark.backend_independent
def test_spd_existence_limit():
    # sigma < 2 / sqrt(n (n^2 - 1) / 3): sqrt(2) for SPD(2), the curvature -1/2 plane.
    assert scale_limit(2) == pytest.approx(math.sqrt(2))
    with pytest.raises(ValueError, match="radius="):
        SPDSpectrumLaw(2, 1.5)
    SPDSpectrumLaw(2, 1.5, upper=2.0)
