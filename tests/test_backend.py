"""The backend boundary and the random generators (seeded and operating-system entropy)."""

import math

import numpy as np
import pytest
from scipy import stats

from geomstats_dp._backend import SecureGenerator, get_rng, to_backend, to_numpy


def test_round_trip_keeps_shape_values_and_zero_dimensional_arrays():
    for array in (np.float64(2.5), np.arange(6.0).reshape(2, 3), np.ones((3, 3)).T):
        back = to_numpy(to_backend(array))
        assert back.shape == np.shape(array)
        assert np.array_equal(back, array)


def test_get_rng_seeds_reuses_and_rejects():
    assert get_rng(3).standard_normal() == get_rng(3).standard_normal()
    generator = np.random.default_rng(0)
    assert get_rng(generator) is generator
    assert isinstance(get_rng(secure=True), SecureGenerator)
    with pytest.raises(ValueError, match="random_state must be None"):
        get_rng(1, secure=True)
    with pytest.raises(ValueError, match="non-negative"):
        get_rng(-1)
    with pytest.raises(TypeError, match="random_state"):
        get_rng("seed")


@pytest.mark.backend_independent
def test_secure_generator_draws_the_right_laws():
    """Kolmogorov-Smirnov at level 1e-4 on 20,000 draws of each law used by the library."""
    rng = SecureGenerator()
    size = 20_000
    laws = [
        (rng.random(size), stats.uniform().cdf),
        (rng.standard_normal(size), stats.norm().cdf),
        (rng.gamma(3.0, 0.5, size), stats.gamma(3.0, scale=0.5).cdf),
    ]
    for draws, cdf in laws:
        assert stats.kstest(draws, cdf).pvalue > 1e-4
    integers = rng.integers(0, 7, size)
    assert integers.min() == 0 and integers.max() == 6
    counts = np.bincount(integers, minlength=7)
    # chi-square with 6 degrees of freedom, level 1e-4
    chi2 = ((counts - size / 7) ** 2 / (size / 7)).sum()
    assert chi2 < stats.chi2(6).ppf(1 - 1e-4)
    assert sorted(rng.permutation(10)) == list(range(10))
    picked = rng.choice(10, size=4, replace=False)
    assert len(set(picked.tolist())) == 4
    assert not math.isclose(rng.random(), rng.random())
