"""Exact radial laws and SPD spectra (pure numpy/scipy): KS against quadrature CDFs."""

import math

import numpy as np
import pytest
from scipy import integrate, special, stats

from geomstats_dp.distributions.laplace.log_concave import LogConcaveSampler
from geomstats_dp.distributions.laplace.radial import RadialLaw
from geomstats_dp.distributions.laplace.rejection import LowAcceptanceError, rejection_sample
from geomstats_dp.distributions.laplace.spd_polar import SPDSpectrumLaw, scale_limit
from tests.conftest import shifted
from .laplace_reference import (
    P_MIN,
    gamma_cdf,
    radial_cdf,
    spd_pair_gaps,
    spd_radius_cdf,
    spd_spread_cdf,
)

pytestmark = pytest.mark.backend_independent

N_DRAWS = 4000


@pytest.mark.parametrize(
    "dim, sigma, curvature, upper",
    [
        (2, 0.3, 1, math.inf),
        (5, 0.02, 1, math.inf),  # small scale: the radius is ~ Gamma(d, sigma)
        (5, 50.0, 1, math.inf),  # large scale: ~ sin^4 r on [0, pi]
        (1, 2.0, 1, math.inf),  # the circle: truncated exponential
        (2, 0.4, -1, math.inf),
        (3, 0.45, -1, math.inf),  # close to the existence limit 1/(d-1) = 0.5
        (3, 3.0, -1, 2.0),  # beyond the limit, truncated
        (4, 0.7, 0, 1.5),
        (5, 0.5, 1, 1.0),
    ],
)
def test_radius_matches_quadrature_cdf(dim, sigma, curvature, upper):
    draws = RadialLaw(dim, 1 / sigma, curvature, upper).sample(N_DRAWS, np.random.default_rng(shifted(3)))
    assert stats.kstest(draws, radial_cdf(dim, sigma, curvature, upper)).pvalue > P_MIN


def test_flat_untruncated_radius_is_gamma():
    draws = RadialLaw(6, 1 / 0.7, 0).sample(N_DRAWS, np.random.default_rng(shifted(4)))
    assert stats.kstest(draws, gamma_cdf(6, 0.7)).pvalue > P_MIN


def test_hyperbolic_radius_is_accurate_near_the_existence_limit():
    # b = (1/sigma - (d-1))/2 = 0.005: 1 - T ~ Beta(b, d) underflows unless drawn in log
    # space. r = -log(1 - T)/2 has mean (psi(b+d) - psi(b))/2 and variance
    # (psi'(b) - psi'(b+d))/4; the sample mean must be within 5 standard errors.
    dim, b, n_draws = 2, 0.005, 20000
    sigma = 1 / (2 * b + dim - 1)
    draws = RadialLaw(dim, 1 / sigma, -1).sample(n_draws, np.random.default_rng(shifted(5)))
    mean = 0.5 * (special.digamma(b + dim) - special.digamma(b))
    sd = 0.5 * math.sqrt(special.polygamma(1, b) - special.polygamma(1, b + dim))
    assert np.isfinite(draws).all()
    assert abs(draws.mean() - mean) < 5 * sd / math.sqrt(n_draws)


@pytest.mark.parametrize(
    "dim, sigma, curvature, upper",
    [(3, 0.2, 1, math.inf), (3, 0.3, -1, math.inf), (4, 0.5, 0, math.inf), (2, 2.0, -1, 3.0)],
)
def test_log_normaliser_matches_quadrature(dim, sigma, curvature, upper):
    law = RadialLaw(dim, 1 / sigma, curvature, upper)
    radius_function = {1: np.sin, 0: lambda r: r, -1: np.sinh}[curvature]
    end = math.pi if curvature == 1 else min(upper, 200 * sigma)
    value, _ = integrate.quad(
        lambda r: radius_function(r) ** (dim - 1) * math.exp(-r / sigma), 0, end, limit=200
    )
    assert law.log_normaliser() == pytest.approx(math.log(value), abs=1e-8)


def test_hyperbolic_law_without_truncation_needs_small_scale():
    with pytest.raises(ValueError, match="1/sigma > d - 1"):
        RadialLaw(3, 1 / 0.5, -1)


def test_log_concave_sampler_is_exact_for_a_truncated_normal():
    # h(x) = -x^2/2 on [-1, 2]: an independent closed form (scipy's truncnorm).
    sampler = LogConcaveSampler(lambda x: -0.5 * x**2, lambda x: -x, 0.0, -1.0, 2.0)
    draws = sampler.sample(N_DRAWS, np.random.default_rng(shifted(6)))
    assert stats.kstest(draws, stats.truncnorm(-1.0, 2.0).cdf).pvalue > P_MIN


def test_rejection_gives_up_when_nothing_is_accepted():
    def propose(size, rng):
        return np.zeros(size), np.zeros(size, dtype=bool)

    with pytest.raises(LowAcceptanceError, match="mcmc"):
        rejection_sample(propose, 5, np.random.default_rng(shifted(0)), what="test")


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


def test_spd_existence_limit():
    # sigma < 2 / sqrt(n (n^2 - 1) / 3): sqrt(2) for SPD(2), the curvature -1/2 plane.
    assert scale_limit(2) == pytest.approx(math.sqrt(2))
    with pytest.raises(ValueError, match="radius="):
        SPDSpectrumLaw(2, 1.5)
    SPDSpectrumLaw(2, 1.5, upper=2.0)
