"""The exact samplers of privacy.discrete_noise against their closed-form laws, and the grid
that makes a rounded statistic's sensitivity an integer."""

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from geomstats_dp.privacy.discrete_noise import (
    RandomBits,
    bernoulli_exp,
    discrete_gaussian,
    discrete_laplace,
    grid_sensitivity,
    grid_step,
    rounded_to_grid,
)
from tests.conftest import shifted

pytestmark = pytest.mark.backend_independent


def _bits(seed):
    return RandomBits(np.random.default_rng(shifted(seed)))


def _chi_square_pvalue(draws, pmf, support):
    """Pearson's test of integer ``draws`` against ``pmf`` on ``support`` (the two tails
    beyond it pooled into one bin each)."""
    draws = np.asarray(draws)
    probabilities = np.array([pmf(z) for z in support])
    below = sum(pmf(z) for z in range(support[0] - 1, support[0] - 2000, -1))
    above = 1.0 - below - probabilities.sum()
    expected = len(draws) * np.concatenate([[below], probabilities, [above]])
    observed = np.concatenate([[np.sum(draws < support[0])],
                               [np.sum(draws == z) for z in support],
                               [np.sum(draws > support[-1])]])
    return stats.chisquare(observed, expected).pvalue


@pytest.mark.parametrize("scale", [Fraction(3, 2), Fraction(1, 3)])
def test_discrete_laplace_has_its_pmf(scale):
    """P(Z = z) = tanh(1 / (2t)) exp(-|z| / t) (Canonne, Kamath & Steinke 2020, Def. 1)."""
    bits = _bits(0)
    draws = [discrete_laplace(scale, bits) for _ in range(20_000)]
    decay = math.exp(-1 / float(scale))

    def pmf(z):
        return (1 - decay) / (1 + decay) * decay ** abs(z)

    assert _chi_square_pvalue(draws, pmf, range(-6, 7)) > 1e-3


def test_discrete_laplace_of_a_large_rational_scale_has_its_variance():
    """Scale 5 / 0.3 (0.3 a float: a denominator of 2^54): variance 2 q / (1 - q)^2,
    q = exp(-1 / t); the sample variance within 5 standard errors (excess kurtosis ~3)."""
    scale = Fraction(5) / Fraction(0.3)
    bits = _bits(1)
    draws = np.array([discrete_laplace(scale, bits) for _ in range(8000)], dtype=float)
    q = math.exp(-1 / float(scale))
    variance = 2 * q / (1 - q) ** 2
    assert abs(draws.var() / variance - 1) < 5 * math.sqrt(5 / len(draws))
    assert abs(draws.mean()) < 5 * math.sqrt(variance / len(draws))


@pytest.mark.parametrize("sigma", [2.5, 0.7])
def test_discrete_gaussian_has_its_pmf(sigma):
    """P(Z = z) proportional to exp(-z^2 / (2 sigma^2)), normalised over the integers."""
    bits = _bits(2)
    draws = [discrete_gaussian(Fraction(sigma) ** 2, bits) for _ in range(10_000)]
    support = np.arange(-60, 61)
    weights = np.exp(-support**2 / (2 * sigma**2))
    total = weights.sum()

    def pmf(z):
        return math.exp(-z**2 / (2 * sigma**2)) / total

    assert _chi_square_pvalue(draws, pmf, range(-int(3 * sigma) - 1, int(3 * sigma) + 2)) > 1e-3


@pytest.mark.parametrize("gamma", [Fraction(3, 10), Fraction(17, 10)])
def test_bernoulli_exp_has_probability_exp_minus_gamma(gamma):
    bits = _bits(3)
    n_draws = 20_000
    hits = sum(bernoulli_exp(gamma.numerator, gamma.denominator, bits)
               for _ in range(n_draws))
    p = math.exp(-float(gamma))
    assert abs(hits / n_draws - p) < 5 * math.sqrt(p * (1 - p) / n_draws)


def test_random_bits_below_is_uniform():
    bits = _bits(4)
    draws = [bits.below(5) for _ in range(10_000)]
    assert stats.chisquare(np.bincount(draws, minlength=5)).pvalue > 1e-3
    assert set(draws) == set(range(5))


def test_the_grid_is_a_power_of_two_below_the_sensitivity_and_the_scale():
    for sensitivity, scale in [(0.2, 0.4), (10 / 3, 1e-3), (1e-9, 5.0), (4.0, 4.0)]:
        step = grid_step(sensitivity, scale)
        mantissa, _ = math.frexp(step)
        assert mantissa == 0.5  # a power of two
        assert min(sensitivity, scale) / 2**11 < step <= min(sensitivity, scale) / 2**10


def test_a_rounded_statistic_moves_by_at_most_the_grid_sensitivity():
    """Replace a record's value 0 by B (the worst case) and round the exact means: the grid
    value moves by at most floor((B / n) / gamma) + 1 units, and that bound is reached."""
    rng = np.random.default_rng(shifted(5))
    bound, n = 10.0, 50
    sensitivity = bound / n
    step = grid_step(sensitivity, sensitivity / 0.5)
    units = grid_sensitivity(sensitivity, step)
    moves = []
    for _ in range(300):
        values = rng.uniform(0, bound, n)
        values[0] = 0.0
        neighbour = values.copy()
        neighbour[0] = bound
        moves.append(abs(rounded_to_grid(values, n, step) - rounded_to_grid(neighbour, n, step)))
        exact = sum(map(Fraction, values.tolist())) / (n * Fraction(step))
        assert rounded_to_grid(values, n, step) == round(exact)
    assert max(moves) == units
    assert units == math.floor(Fraction(bound) / n / Fraction(step)) + 1
