"""The log-concave rejection sampler draws exactly from its target (pure numpy/scipy)."""

import numpy as np
import pytest
from scipy import stats

from geomstats_dp.distributions.laplace.log_concave import LogConcaveSampler
from tests.conftest import shifted

from .laplace_reference import P_MIN

pytestmark = pytest.mark.backend_independent

N_DRAWS = 4000


def test_log_concave_sampler_is_exact_for_a_truncated_normal():
    # h(x) = -x^2/2 on [-1, 2]: an independent closed form (scipy's truncnorm).
    sampler = LogConcaveSampler(lambda x: -0.5 * x**2, lambda x: -x, 0.0, -1.0, 2.0)
    draws = sampler.sample(N_DRAWS, np.random.default_rng(shifted(6)))
    assert stats.kstest(draws, stats.truncnorm(-1.0, 2.0).cdf).pvalue > P_MIN
