"""The law of the number of runs of a private selection (Papernot & Steinke 2022): the
truncated negative binomial against its closed forms (geometric for shape 1, Poisson for
an infinite shape), and draws by inverse transform against its mean."""

import math

import numpy as np
import pytest
from scipy import stats

from geomstats_dp.privacy.selection import (
    law_gamma,
    law_mean,
    max_runs,
    runs_tail,
    sample_runs,
)
from tests.conftest import shifted

pytestmark = pytest.mark.backend_independent


@pytest.mark.parametrize("mean", [1.5, 4.0, 20.0])
def test_shape_one_is_the_geometric_law(mean):
    # P[K = k] = gamma (1 - gamma)^(k - 1), k >= 1: mean 1 / gamma, P[K > k] = (1 - gamma)^k
    gamma = law_gamma(mean, 1.0)
    assert gamma == pytest.approx(1 / mean, rel=1e-12)
    assert law_mean(gamma, 1.0) == pytest.approx(mean, rel=1e-12)
    for runs in (0, 1, 5, 40):
        assert runs_tail(mean, 1.0, runs) == pytest.approx((1 - gamma) ** runs, rel=1e-10)
    bound = max_runs(mean, 1.0, 1e-6)
    expected = max(math.ceil(mean), math.ceil(math.log(1e-6) / math.log(1 - gamma) - 1e-12))
    assert bound == expected


@pytest.mark.parametrize("mean", [1.0, 3.0, 12.0])
def test_an_infinite_shape_is_the_poisson_law(mean):
    for runs in (0, 2, 10, 30):
        assert runs_tail(mean, math.inf, runs) == pytest.approx(
            stats.poisson.sf(runs, mean), rel=1e-10, abs=1e-300
        )


def test_mean_one_always_runs_once():
    assert law_gamma(1.0, 2.0) == 1.0
    assert sample_runs(1.0, 2.0, np.random.default_rng(0)) == 1
    assert runs_tail(1.0, 2.0, 1) == 0.0


@pytest.mark.parametrize(("mean", "shape"), [(5.0, 1.0), (5.0, 0.0), (8.0, 2.5), (6.0, math.inf)])
def test_draws_have_the_stated_mean(mean, shape):
    rng = np.random.default_rng(shifted(3))
    draws = np.array([sample_runs(mean, shape, rng) for _ in range(4000)])
    assert draws.min() >= (0 if shape == math.inf else 1)
    # 4.5 standard errors of the sample mean (the law's variance estimated from the draws)
    assert abs(draws.mean() - mean) < 4.5 * draws.std(ddof=1) / math.sqrt(draws.size)
