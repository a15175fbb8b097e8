"""The smallest noise level meeting a target epsilon, against the exact Gaussian-DP answer
of full-batch steps: T steps of multiplier z are sqrt(T)/z-GDP (Dong, Roth & Su 2022)."""

import math

import pytest

from geomstats_dp.privacy import GaussianEvent, compose_epsilon
from geomstats_dp.privacy.gaussian_dp import gdp_mu
from geomstats_dp.privacy.noise_search import TOLERANCE, smallest_noise

pytestmark = pytest.mark.backend_independent


@pytest.mark.parametrize("initial", [0.01, 3.0, 1e4])
@pytest.mark.parametrize(("target", "n_steps"), [(1.0, 100), (0.2, 10)])
def test_finds_the_exact_gaussian_multiplier_from_any_guess(target, n_steps, initial):
    delta = 1e-5
    found = smallest_noise(lambda z: (GaussianEvent(z, n_steps),), target, delta, initial)
    exact = math.sqrt(n_steps) / gdp_mu(target, delta)
    epsilon = compose_epsilon([GaussianEvent(found, n_steps)], delta)
    assert epsilon <= target
    assert epsilon >= target * (1 - 2 * TOLERANCE)
    assert found == pytest.approx(exact, rel=2 * TOLERANCE)


def test_a_target_no_level_meets_is_refused_naming_the_quantity():
    with pytest.raises(ValueError, match="even a clip multiplier"):
        smallest_noise(lambda x: (GaussianEvent(1.0, 10),), 0.1, 1e-5, 1.0,
                       name="clip multiplier")
