"""Baseline tangent samplers: explicit basis, Gram-Schmidt and Metropolis-Hastings.

The exact baselines (explicit basis, Gram-Schmidt) draw iid vectors and are checked with
the exact standard errors of ``_statistics.py`` in the independent basis ``tangent_basis``
(family-wise false alarm 1e-6 per check). Metropolis-Hastings draws are autocorrelated
within a chain, so its checks use batch means: each of N_CHAINS independent chains gives
one group mean, the standard error is estimated from their spread, and a statistic may
differ from its expectation by at most the two-sided t-quantile (N_CHAINS - 1 degrees of
freedom) of FALSE_ALARM, Bonferroni-corrected over the entries checked at once.
"""

import numpy as np
import pytest
from geomstats.geometry.positive_lower_triangular_matrices import (
    PositiveLowerTriangularMatrices,
)
from scipy import stats
from threadpoolctl import threadpool_limits

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.distributions import TangentGaussian
from geomstats_dp.distributions.baselines import (
    ExplicitBasis,
    GramSchmidt,
    MetropolisHastings,
    orthonormal_basis,
)
from geomstats_dp.distributions.registry import find_transport
from tests.conftest import shifted

from ._statistics import (
    FALSE_ALARM,
    assert_gaussian_coordinates,
    assert_squared_norm_mean,
    inner_products,
    orthonormal_coordinates,
)
from .conftest import make_case

SIGMA = 0.7
N_DRAWS = 10_000
N_CHAINS = 400
DRAWS_PER_CHAIN = 10
ROUNDING = 1e-10


@pytest.fixture(autouse=True)
def _single_threaded():
    """Run on one BLAS / OpenMP thread (torch's kernels included).

    These tests make many tiny calls, which extra threads only slow down: up to 20x on a
    loaded 2-core machine.
    """
    with threadpool_limits(limits=1):
        yield


def _cholesky_case():
    """A metric with no registered transport: Cholesky metric on lower-triangular matrices."""
    lower = np.tril(np.random.default_rng(shifted(8)).normal(size=(2, 3, 3)), -1)
    diagonals = np.stack([np.diag([1.0, 2.0, 0.5]), np.diag([0.2, 1.0, 3.0])])
    return PositiveLowerTriangularMatrices(3), lower + diagonals


def _gram(space, vecs, base_point):
    return np.stack([inner_products(space.metric, vecs, vec, base_point) for vec in vecs])


def _assert_tangent(space, vecs, base_point):
    """Every vector [n, *shape] is tangent at base_point (atol scaled by their sizes)."""
    scale = max(1.0, np.abs(base_point).max()) * max(1.0, np.abs(vecs).max())
    points = np.array(np.broadcast_to(base_point, vecs.shape))
    atol = ROUNDING * scale
    tangent = to_numpy(space.is_tangent(to_backend(vecs), to_backend(points), atol=atol))
    assert np.all(tangent.astype(bool)), f"{np.sum(~tangent.astype(bool))} vectors not tangent"


def _assert_orthonormal_tangent_basis(space, basis, point):
    assert basis.shape == (int(space.dim),) + tuple(space.shape)
    _assert_tangent(space, basis, point)
    np.testing.assert_allclose(_gram(space, basis, point), np.eye(basis.shape[0]), atol=1e-10)


def test_orthonormal_basis_is_tangent_and_orthonormal(case):
    """At every family's hard points too (ill-conditioned SPD, antipode, far points)."""
    basis = orthonormal_basis(case.space, case.space.metric, to_backend(case.base_point))
    _assert_orthonormal_tangent_basis(case.space, basis, case.base_point)


def test_orthonormal_basis_without_a_registered_transport():
    space, points = _cholesky_case()
    for point in points:
        basis = orthonormal_basis(space, space.metric, point)
        _assert_orthonormal_tangent_basis(space, basis, point)


def test_orthonormal_basis_rejects_a_batch():
    space, points = _cholesky_case()
    with pytest.raises(ValueError, match="base_point must have shape"):
        orthonormal_basis(space, space.metric, points)


def _batched_draws(space, points, method, n_samples, **kwargs):
    """Draws at every point in one call, numpy [n_samples, k, *shape]."""
    sampler = TangentGaussian(space, method=method, **kwargs)
    draws = sampler.sample(
        to_backend(points), n_samples=n_samples, sigma=SIGMA, random_state=shifted(11)
    )
    return to_numpy(draws)


def _random_and_hardest(points):
    """The family's random point and its last (hardest) one, stacked [k, *shape]."""
    kinds = dict.fromkeys(["random", list(points)[-1]])
    return np.stack([points[kind] for kind in kinds])


@pytest.mark.parametrize("method", ["explicit_basis", "gram_schmidt"])
def test_exact_baselines_draw_the_tangent_gaussian(family_case, method):
    """Tangent, E||xi||^2 = d sigma^2, iid N(0, sigma^2) coordinates.

    At a random point and at the family's hardest one (ill-conditioned SPD, antipode of
    the sphere's reference, far hyperbolic points, frames orthogonal to the reference).
    """
    space, points = family_case.space, _random_and_hardest(family_case.points)
    draws = _batched_draws(space, points, method, N_DRAWS)
    for index, point in enumerate(points):
        at_point = draws[:, index]
        _assert_tangent(space, at_point, point)
        squared_norms = inner_products(space.metric, at_point, at_point, point)
        assert_squared_norm_mean(squared_norms, int(space.dim), SIGMA)
        assert_gaussian_coordinates(
            orthonormal_coordinates(space, space.metric, point, at_point), SIGMA
        )


def test_explicit_basis_is_the_transported_basis(family_case):
    """Coordinates combined in the explicit basis equal their transport (linearity)."""
    space = family_case.space
    transport = find_transport(space.metric)(space, space.metric)
    explicit = ExplicitBasis(transport)
    coefficients = np.random.default_rng(shifted(4)).normal(size=(5, int(space.dim)))
    for point in family_case.points.values():
        basis = explicit.basis(point)
        _assert_orthonormal_tangent_basis(space, basis, point)
        moved = transport.transport(point[None], transport.from_coordinates(coefficients)[:, None])
        np.testing.assert_allclose(
            np.tensordot(coefficients, basis, axes=1), moved[:, 0], atol=ROUNDING
        )


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
        return _cholesky_case()
    case = make_case(name)
    return case.space, np.stack([case.points["reference"], case.points["random"]])


@pytest.mark.slow
@pytest.mark.parametrize("name", MCMC_FAMILIES + ("cholesky_no_transport",))
def test_mcmc_draws_the_tangent_gaussian(name):
    """Default burn-in, step and thinning; DRAWS_PER_CHAIN successive draws per chain."""
    space, stacked = _mcmc_case(name)
    draws = _batched_draws(
        space,
        stacked,
        "mcmc",
        N_CHAINS * DRAWS_PER_CHAIN,
        mcmc_options={"chains_per_point": N_CHAINS},
    ).reshape((DRAWS_PER_CHAIN, N_CHAINS) + stacked.shape)
    dim = int(space.dim)
    for index, point in enumerate(stacked):
        at_point = draws[:, :, index].reshape((-1,) + point.shape)
        _assert_tangent(space, at_point, point)
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


def test_metric_without_transport_falls_back_to_gram_schmidt():
    space, points = _cholesky_case()
    assert find_transport(space.metric) is None
    assert type(TangentGaussian(space).sampler) is GramSchmidt
    draws = _batched_draws(space, points, "transport", N_DRAWS)
    for index, point in enumerate(points):
        squared_norms = inner_products(space.metric, draws[:, index], draws[:, index], point)
        assert_squared_norm_mean(squared_norms, int(space.dim), SIGMA)
        coords = orthonormal_coordinates(space, space.metric, point, draws[:, index])
        assert_gaussian_coordinates(coords, SIGMA)


def test_explicit_basis_needs_a_transport():
    space, _ = _cholesky_case()
    with pytest.raises(ValueError, match="explicit_basis"):
        TangentGaussian(space, method="explicit_basis")
