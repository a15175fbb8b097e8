"""The Metropolis-Hastings baseline draws the tangent Gaussian.

Its draws are autocorrelated within a chain, so its checks use batch means: each of
N_CHAINS independent chains gives one group mean, the standard error is estimated from
their spread, and a statistic may differ from its expectation by at most the two-sided
t-quantile (N_CHAINS - 1 degrees of freedom) of FALSE_ALARM, Bonferroni-corrected over the
entries checked at once.

The full law of every family's chains (4,000 draws a point) is checked once, on numpy:
the chain is numpy arithmetic around the backend's ``to_tangent`` and squared norm,
whose use the iid squared-norm test and the option tests check on every backend.
"""

import numpy as np
import pytest
from scipy import stats

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.distributions import TangentGaussian
from geomstats_dp.distributions.baselines import MetropolisHastings
from tests.conftest import shifted

from ._baselines import (
    SIGMA,
    assert_tangent,
    batched_draws,
    cholesky_case,
    single_threaded,  # noqa: F401  (autouse fixture)
)
from ._statistics import (
    FALSE_ALARM,
    assert_squared_norm_mean,
    inner_products,
    orthonormal_coordinates,
)
from .conftest import make_case

N_CHAINS = 400
DRAWS_PER_CHAIN = 10


def _assert_batch_means(statistic, expected, what, n_comparisons=1):
    """statistic [draws_per_chain, n_chains, ...]: chain means are independent replicates."""
    chain_means = statistic.mean(axis=0)
    estimate = chain_means.mean(axis=0)
    std_error = chain_means.std(axis=0, ddof=1) / np.sqrt(chain_means.shape[0])
    z_scores = np.abs(estimate - expected) / std_error
    critical = stats.t.ppf(1 - FALSE_ALARM / (2 * n_comparisons), df=chain_means.shape[0] - 1)
    assert np.all(z_scores < critical), (
        f"{what}: {estimate} vs {expected}, up to {z_scores.max():.2f} standard errors"
    )


MCMC_FAMILIES = (
    "spd_affine",
    "spd_bures_wasserstein",
    "spd_log_euclidean",
    "hypersphere",
    "hyperboloid",
    "poincare_ball",
    "stiefel",
    "grassmannian",
)


def _mcmc_case(name):
    """(space, base points [k, *shape]): the reference and random points of a family."""
    if name == "cholesky_no_transport":
        return cholesky_case()
    case = make_case(name)
    return case.space, np.stack([case.points["reference"], case.points["random"]])


@pytest.mark.slow
@pytest.mark.backend_independent
@pytest.mark.parametrize("name", MCMC_FAMILIES + ("cholesky_no_transport",))
def test_mcmc_draws_the_tangent_gaussian(name):
    """Default burn-in, step and thinning; DRAWS_PER_CHAIN successive draws per chain."""
    space, stacked = _mcmc_case(name)
    draws = batched_draws(
        space,
        stacked,
        "mcmc",
        N_CHAINS * DRAWS_PER_CHAIN,
        mcmc_options={"chains_per_point": N_CHAINS},
    ).reshape((DRAWS_PER_CHAIN, N_CHAINS) + stacked.shape)
    dim = int(space.dim)
    for index, point in enumerate(stacked):
        at_point = draws[:, :, index].reshape((-1,) + point.shape)
        assert_tangent(space, at_point, point)
        squared_norms = inner_products(space.metric, at_point, at_point, point)
        _assert_batch_means(
            squared_norms.reshape(DRAWS_PER_CHAIN, N_CHAINS), dim * SIGMA**2, "E||xi||^2"
        )
        coords = orthonormal_coordinates(space, space.metric, point, at_point)
        coords = coords.reshape(DRAWS_PER_CHAIN, N_CHAINS, dim)
        _assert_batch_means(coords, np.zeros(dim), "coordinate means", dim)
        products = coords[..., :, None] * coords[..., None, :]
        _assert_batch_means(
            products, SIGMA**2 * np.eye(dim), "coordinate covariance", dim * (dim + 1) // 2
        )


def test_mcmc_default_one_chain_per_draw_has_the_right_squared_norm():
    """By default every draw ends its own chain, so draws are iid: exact standard error."""
    case = make_case("hypersphere", "random")
    draws = to_numpy(
        TangentGaussian(case.space, method="mcmc").sample(
            to_backend(case.base_point), n_samples=4000, sigma=SIGMA, random_state=shifted(3)
        )
    )
    squared_norms = inner_products(case.space.metric, draws, draws, case.base_point)
    assert_squared_norm_mean(squared_norms, int(case.space.dim), SIGMA)


def test_mcmc_stays_put_on_rejection():
    """A step so large that every proposal is rejected leaves every chain at its start 0."""
    case = make_case("hypersphere", "random")
    sampler = MetropolisHastings(case.space, case.space.metric, burn_in=20, step_size=1e4)
    draws = sampler.sample(case.base_point[None], 50, np.random.default_rng(shifted(0)))
    assert np.all(draws == 0.0)


def test_mcmc_options_reach_the_sampler():
    space = make_case("hypersphere").space
    options = {"burn_in": 7, "thinning": 3, "step_size": 0.5, "chains_per_point": 2}
    sampler = TangentGaussian(space, method="mcmc", mcmc_options=options).sampler
    assert isinstance(sampler, MetropolisHastings)
    assert {key: getattr(sampler, key) for key in options} == options


@pytest.mark.parametrize(
    "option, value, error",
    [
        ("burn_in", 0, ValueError),
        ("thinning", 2.5, TypeError),
        ("step_size", -1.0, ValueError),
        ("chains_per_point", 0, ValueError),
    ],
)
def test_mcmc_rejects_bad_options(option, value, error):
    space = make_case("hypersphere").space
    with pytest.raises(error, match=option):
        MetropolisHastings(space, space.metric, **{option: value})
