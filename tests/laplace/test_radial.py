"""Exact radial laws of the Laplace distribution (pure numpy/scipy): KS against quadrature CDFs."""

import math

import numpy as np
import pytest
from scipy import integrate, special, stats

from geomstats_dp.distributions.laplace.radial import RadialLaw
from tests.conftest import shifted

from .laplace_reference import (
    P_MIN,
    gamma_cdf,
    radial_cdf,
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
