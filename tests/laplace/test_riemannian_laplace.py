"""RiemannianLaplace on each supported space (runs on every geomstats backend).

Statistical checks: the law of rho(eta, x) against CDFs computed by quadrature in
``laplace_reference`` (KS, threshold P_MIN, see there), and the moments of the direction
of Log_eta(x) in a metric-orthonormal basis (uniform on the unit sphere: mean 0, covariance
I/d, each entry within 5 standard errors).
"""

import math

import geomstats.backend as gs
import numpy as np
import pytest
from geomstats.geometry.euclidean import Euclidean
from geomstats.geometry.grassmannian import Grassmannian
from geomstats.geometry.hyperboloid import Hyperboloid
from geomstats.geometry.hypersphere import Hypersphere
from geomstats.geometry.poincare_ball import PoincareBall
from geomstats.geometry.spd_matrices import SPDLogEuclideanMetric, SPDMatrices
from scipy import stats

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.distributions import RiemannianLaplace
from geomstats_dp.distributions.baselines import orthonormal_basis
from tests.conftest import shifted

from .laplace_reference import (
    P_MIN,
    gamma_cdf,
    log_sphere_area,
    radial_cdf,
    spd_radius_cdf,
    spd_spread_cdf,
    sphere_moments_tolerance,
)

N_DRAWS = 2000


def log_euclidean(n):
    space = SPDMatrices(n)
    space.equip_with_metric(SPDLogEuclideanMetric)
    return space


def scaled(space, factor):
    space.equip_with_metric(factor * space.metric)
    return space


def unit(vector):
    vector = np.asarray(vector, dtype=float)
    return vector / np.linalg.norm(vector)


def hyperboloid_point(tail):
    tail = np.asarray(tail, dtype=float)
    return np.concatenate([[math.sqrt(1 + tail @ tail)], tail])


SPD_FOOTPOINT = np.array([[2.0, 0.5, 0.0], [0.5, 1.0, 0.2], [0.0, 0.2, 0.7]])

# name -> (space factory, footpoint, sigma, reference CDF of rho(eta, x))
RADIAL_CASES = {
    "sphere2": (lambda: Hypersphere(2), unit([0.3, -0.4, 0.8]), 0.4,
                lambda: radial_cdf(2, 0.4, 1)),
    "sphere2_wide": (lambda: Hypersphere(2), unit([0.0, 0.0, -1.0]), 3.0,
                     lambda: radial_cdf(2, 3.0, 1)),
    # metric 4 g: the sphere of radius 2, distances doubled, so rho/2 has scale sigma/2
    "sphere2_radius2": (lambda: scaled(Hypersphere(2), 4.0), unit([0.0, 1.0, 0.0]), 0.6,
                        lambda: lambda x: radial_cdf(2, 0.3, 1)(np.asarray(x) / 2)),
    "sphere5": (lambda: Hypersphere(5), unit([1, 2, 0, 0, -1, 0.5]), 0.3,
                lambda: radial_cdf(5, 0.3, 1)),
    "hyperboloid2": (lambda: Hyperboloid(2), hyperboloid_point([0.8, -0.3]), 0.5,
                     lambda: radial_cdf(2, 0.5, -1)),
    "hyperboloid3": (lambda: Hyperboloid(3), hyperboloid_point([0.1, 0.2, 0.3]), 0.3,
                     lambda: radial_cdf(3, 0.3, -1)),
    "poincare2": (lambda: PoincareBall(2), np.array([0.3, -0.2]), 0.4,
                  lambda: radial_cdf(2, 0.4, -1)),
    "euclidean3": (lambda: Euclidean(3), np.array([1.0, -2.0, 0.5]), 0.8,
                   lambda: gamma_cdf(3, 0.8)),
}


def distances(space, origin, points):
    return np.atleast_1d(to_numpy(space.metric.dist(to_backend(origin), points)))


def direction_coordinates(space, footpoint, points):
    """Unit coordinates of Log_eta(x) in a metric-orthonormal basis of T_eta, [n, d]."""
    basis = orthonormal_basis(space, space.metric, footpoint)
    logs = space.metric.log(points, to_backend(footpoint))
    coordinates = np.stack(
        [
            to_numpy(space.metric.inner_product(logs, to_backend(vector), to_backend(footpoint)))
            for vector in basis
        ],
        axis=-1,
    )
    return coordinates / np.linalg.norm(coordinates, axis=-1, keepdims=True)


@pytest.mark.parametrize("name", sorted(RADIAL_CASES))
def test_radial_law_and_directions(name):
    make_space, footpoint, sigma, reference = RADIAL_CASES[name]
    space = make_space()
    points = RiemannianLaplace(space, to_backend(footpoint), sigma).sample(
        N_DRAWS, random_state=shifted(11)
    )
    assert points.shape == (N_DRAWS,) + tuple(space.shape)
    assert type(points) is type(gs.zeros(1))
    assert bool(np.all(to_numpy(space.belongs(points, atol=1e-6))))
    assert stats.kstest(distances(space, footpoint, points), reference()).pvalue > P_MIN

    assert_uniform_directions(direction_coordinates(space, footpoint, points))


def assert_uniform_directions(directions):
    """Unit vectors [n, d] have the mean and covariance of the uniform law on S^(d-1)."""
    dim = directions.shape[-1]
    mean_tol, diag_tol, off_tol = sphere_moments_tolerance(dim, N_DRAWS)
    covariance = directions.T @ directions / N_DRAWS
    assert np.all(np.abs(directions.mean(axis=0)) < mean_tol)
    assert np.all(np.abs(np.diag(covariance) - 1 / dim) < diag_tol)
    assert np.all(np.abs(covariance - np.diag(np.diag(covariance))) < off_tol)


def symmetric_log(matrices):
    values, vectors = np.linalg.eigh(matrices)
    return (vectors * np.log(values)[..., None, :]) @ np.swapaxes(vectors, -1, -2)


def test_log_euclidean_law():
    # Log-Euclidean: rho(eta, x) = |log x - log eta|_F ~ Gamma(6, sigma) on SPD(3), and the
    # coordinates (diagonal, sqrt2 * upper off-diagonal) of log x - log eta are Frobenius-
    # orthonormal, so their direction is uniform on S^5. Computed in numpy (geomstats'
    # logm on pytorch goes through scipy one matrix at a time); geomstats' distance is
    # checked to agree on the first 50 draws.
    space, sigma = log_euclidean(3), 0.5
    points = RiemannianLaplace(space, to_backend(SPD_FOOTPOINT), sigma).sample(
        N_DRAWS, random_state=shifted(19)
    )
    assert bool(np.all(to_numpy(space.belongs(points, atol=1e-8))))
    difference = symmetric_log(to_numpy(points)) - symmetric_log(SPD_FOOTPOINT)
    upper = np.triu_indices(3, k=1)
    coordinates = np.concatenate(
        [np.diagonal(difference, axis1=-2, axis2=-1),
         math.sqrt(2) * difference[:, upper[0], upper[1]]], axis=-1,
    )
    rho = np.linalg.norm(coordinates, axis=-1)
    np.testing.assert_allclose(distances(space, SPD_FOOTPOINT, points[:50]), rho[:50], rtol=1e-6)
    assert stats.kstest(rho, gamma_cdf(6, sigma)).pvalue > P_MIN
    assert_uniform_directions(coordinates / rho[:, None])


def spd_spectra(footpoint, points):
    """Log-eigenvalues and eigenvectors of eta^-1/2 x eta^-1/2."""
    values, vectors = np.linalg.eigh(footpoint)
    inv_sqrt = (vectors / np.sqrt(values)) @ vectors.T
    whitened = inv_sqrt @ to_numpy(points) @ inv_sqrt
    eigenvalues, eigenvectors = np.linalg.eigh(whitened)
    return np.log(eigenvalues), eigenvectors


def test_spd2_affine_polar_law():
    footpoint, sigma = np.array([[1.5, 0.4], [0.4, 0.8]]), 0.3
    space = SPDMatrices(2)
    points = RiemannianLaplace(space, to_backend(footpoint), sigma).sample(
        N_DRAWS, random_state=shifted(12)
    )
    assert bool(np.all(to_numpy(space.belongs(points, atol=1e-8))))
    log_eigenvalues, eigenvectors = spd_spectra(footpoint, points)
    # rho(eta, x) is the norm of the log-eigenvalues of the whitened point (affine
    # invariance); geomstats' distance is compared on 50 draws (its logm is slow on pytorch)
    rho = np.linalg.norm(log_eigenvalues, axis=-1)
    np.testing.assert_allclose(distances(space, footpoint, points[:50]), rho[:50], rtol=1e-6)
    assert stats.kstest(rho, spd_radius_cdf(2, sigma)).pvalue > P_MIN
    spread = np.abs(log_eigenvalues[:, 1] - log_eigenvalues[:, 0]) / rho
    assert stats.kstest(spread, spd_spread_cdf(2, sigma)).pvalue > P_MIN
    # U Haar: the eigenvector's angle (mod pi) is uniform on [0, pi)
    angles = np.mod(np.arctan2(eigenvectors[:, 1, 0], eigenvectors[:, 0, 0]), np.pi)
    assert stats.kstest(angles, stats.uniform(0, np.pi).cdf).pvalue > P_MIN


@pytest.mark.slow
@pytest.mark.parametrize("method", ["exact", "mcmc"])
def test_spd3_affine_radius(method):
    # mcmc: independent chains on the spectrum, one draw each after 1,500 steps (the law of
    # the draws is the target up to the burn-in bias); same KS threshold.
    sigma = 0.2
    law = RiemannianLaplace(
        SPDMatrices(3), to_backend(SPD_FOOTPOINT), sigma, method=method,
        mcmc_options={"burn_in": 1500} if method == "mcmc" else None,
    )
    points = law.sample(N_DRAWS, random_state=shifted(13))
    assert law.method_ == method
    log_eigenvalues, _ = spd_spectra(SPD_FOOTPOINT, points)
    rho = np.linalg.norm(log_eigenvalues, axis=-1)
    np.testing.assert_allclose(
        distances(SPDMatrices(3), SPD_FOOTPOINT, points[:50]), rho[:50], rtol=1e-6
    )
    assert stats.kstest(rho, spd_radius_cdf(3, sigma)).pvalue > P_MIN


def test_sphere_ball_about_the_footpoint_truncates_the_radial_law():
    space, footpoint, sigma, radius = Hypersphere(2), unit([1.0, 1.0, 0.0]), 0.8, 0.7
    points = RiemannianLaplace(space, to_backend(footpoint), sigma, radius=radius).sample(
        N_DRAWS, random_state=shifted(14)
    )
    rho = distances(space, footpoint, points)
    assert rho.max() < radius
    assert stats.kstest(rho, radial_cdf(2, sigma, 1, radius)).pvalue > P_MIN


@pytest.mark.slow
def test_off_centre_ball_exact_and_mcmc_agree():
    # Two-sample KS between rejection (exact) and ball-respecting Metropolis-Hastings
    # (600 independent chains, 300 steps each); both must stay in the ball. KS critical
    # value at level 1e-3 for 600 + 600 draws: 0.11.
    space, sigma, radius = Hyperboloid(2), 0.6, 0.8
    footpoint, center = hyperboloid_point([0.3, 0.0]), hyperboloid_point([0.0, 0.2])
    samples = {}
    for method in ("exact", "mcmc"):
        law = RiemannianLaplace(
            space, to_backend(footpoint), sigma, radius=radius, center=to_backend(center),
            method=method, mcmc_options={"burn_in": 300} if method == "mcmc" else None,
        )
        points = law.sample(600, random_state=shifted(15))
        samples[method] = distances(space, center, points)
        assert samples[method].max() < radius
    assert stats.ks_2samp(samples["exact"], samples["mcmc"]).pvalue > P_MIN


def test_truncation_makes_a_non_normalisable_law_usable():
    space = SPDMatrices(2)
    with pytest.raises(ValueError, match="radius="):
        RiemannianLaplace(space, gs.eye(2), 5.0)
    points = RiemannianLaplace(space, gs.eye(2), 5.0, radius=1.0).sample(300, random_state=shifted(0))
    assert distances(space, np.eye(2), points).max() < 1.0


def test_hyperbolic_draws_beyond_float64_range_raise():
    # b = (1/sigma - 1)/2 = 0.005: radii are ~ Exp(0.01), far beyond the ~18 that geomstats'
    # hyperbolic coordinates represent
    law = RiemannianLaplace(PoincareBall(2), gs.zeros(2), 1 / 1.01)
    with pytest.raises(ValueError, match="float64"):
        law.sample(50, random_state=shifted(0))


@pytest.mark.parametrize("space_factory", [lambda: Hyperboloid(3), lambda: PoincareBall(3)])
def test_hyperbolic_existence_condition(space_factory):
    space = space_factory()
    footpoint = to_backend(hyperboloid_point([0, 0, 0]) if space.shape == (4,) else np.zeros(3))
    with pytest.raises(ValueError, match="scale must be < 0.5"):
        RiemannianLaplace(space, footpoint, 0.5)
    RiemannianLaplace(space, footpoint, 0.49)


def test_log_prob_is_normalised_on_the_sphere():
    # E_uniform[p(x)] * area(S^2) = 1; p <= e^{-log C}, so the Monte Carlo error of the mean
    # of p over 20,000 uniform points is below 5 sd / sqrt(20000) of p.
    space, sigma = Hypersphere(2), 0.5
    law = RiemannianLaplace(space, to_backend(unit([0, 1.0, 1.0])), sigma)
    assert law.is_normalised
    uniform = np.random.default_rng(shifted(16)).standard_normal((20000, 3))
    uniform /= np.linalg.norm(uniform, axis=-1, keepdims=True)
    density = np.exp(to_numpy(law.log_prob(to_backend(uniform))))
    integral = density.mean() * 4 * math.pi
    assert abs(integral - 1) < 5 * density.std() * 4 * math.pi / math.sqrt(20000)


def test_log_prob_is_normalised_on_the_hyperboloid():
    # int |S^1| sinh(r) p(Exp_eta(r u)) dr = 1, p evaluated along one geodesic ray.
    space, sigma = Hyperboloid(2), 0.4
    footpoint = hyperboloid_point([0.5, 0.5])
    law = RiemannianLaplace(space, to_backend(footpoint), sigma)
    direction = to_numpy(space.to_tangent(to_backend(np.array([0.0, 1.0, -1.0])),
                                          to_backend(footpoint)))
    direction /= float(to_numpy(space.metric.norm(to_backend(direction), to_backend(footpoint))))
    # geomstats' hyperboloid coordinates lose the point beyond r ~ 18 in float64; the
    # integrand is below 1e-10 at r = 17
    radii = np.linspace(0, 17, 17001)[1:]  # the integrand vanishes at r = 0
    ray = space.metric.exp(to_backend(radii[:, None] * direction), to_backend(footpoint))
    density = np.exp(to_numpy(law.log_prob(ray)))
    integrand = math.exp(log_sphere_area(2)) * np.sinh(radii) * density
    assert np.trapezoid(np.r_[0.0, integrand], np.r_[0.0, radii]) == pytest.approx(1.0, abs=1e-6)


def test_log_prob_shapes_and_ball():
    space = Hypersphere(2)
    law = RiemannianLaplace(space, to_backend(unit([0, 0, 1.0])), 0.3, radius=0.5)
    assert not law.is_normalised
    inside, outside = unit([0, 0.1, 1.0]), unit([1.0, 0, 0])
    values = to_numpy(law.log_prob(to_backend(np.stack([inside, outside]))))
    assert values.shape == (2,)
    assert np.isfinite(values[0]) and values[1] == -np.inf
    assert to_numpy(law.log_prob(to_backend(inside))).shape == ()


def test_single_sample_is_unbatched_and_reproducible():
    law = RiemannianLaplace(Hyperboloid(2), to_backend(hyperboloid_point([0, 0])), 0.3)
    first, second = law.sample(random_state=shifted(5)), law.sample(random_state=shifted(5))
    assert first.shape == (3,)
    np.testing.assert_array_equal(to_numpy(first), to_numpy(second))
    batch_a = to_numpy(law.sample(10, random_state=np.random.default_rng(shifted(7))))
    batch_b = to_numpy(law.sample(10, random_state=np.random.default_rng(shifted(7))))
    np.testing.assert_array_equal(batch_a, batch_b)
    assert not np.allclose(batch_a, to_numpy(law.sample(10, random_state=shifted(8))))


@pytest.mark.slow
def test_generic_metropolis_on_the_grassmannian():
    # Smoke test of the fallback dispatch (geomstats' Grassmann distance calls scipy's logm
    # per point, about 1 ms each, so a KS-sized run would take minutes); the Metropolis
    # kernel itself is checked on the sphere below.
    space, footpoint = Grassmannian(3, 1), np.diag([1.0, 0.0, 0.0])
    law = RiemannianLaplace(space, to_backend(footpoint), 0.4, mcmc_options={"burn_in": 5})
    points = law.sample(10, random_state=shifted(17))
    assert law.method_ == "mcmc"
    assert bool(np.all(to_numpy(space.belongs(points, atol=1e-6))))
    rho = distances(space, footpoint, points)
    assert rho.max() <= math.pi / math.sqrt(2) + 1e-9


@pytest.mark.slow
def test_sphere_metropolis_matches_the_exact_radial_law():
    space, sigma = Hypersphere(2), 0.5
    law = RiemannianLaplace(space, to_backend(unit([1.0, 0, 0])), sigma, method="mcmc",
                            mcmc_options={"burn_in": 300})
    points = law.sample(1500, random_state=shifted(18))
    assert law.method_ == "mcmc"
    rho = distances(space, unit([1.0, 0, 0]), points)
    assert stats.kstest(rho, radial_cdf(2, sigma, 1)).pvalue > P_MIN


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"scale": 0.0}, ValueError, "scale"),
        ({"scale": -1.0}, ValueError, "scale"),
        ({"scale": "1"}, TypeError, "scale"),
        ({"footpoint": np.array([0.0, 0.0, 2.0])}, ValueError, "footpoint is not on"),
        ({"footpoint": np.array([0.0, 1.0])}, ValueError, "footpoint must have shape"),
        ({"center": unit([1.0, 0, 0])}, ValueError, "center is only used"),
        ({"radius": 0.5, "center": np.array([3.0, 0, 0])}, ValueError, "center is not on"),
        ({"radius": -0.5}, ValueError, "radius"),
        ({"method": "gibbs"}, ValueError, "method"),
        ({"mcmc_options": {"steps": 3}}, ValueError, "mcmc_options"),
    ],
)
def test_bad_inputs_raise(kwargs, error, match):
    arguments = {"footpoint": unit([0, 0, 1.0]), "scale": 0.5, **kwargs}
    arguments["footpoint"] = to_backend(arguments["footpoint"])
    if "center" in arguments:
        arguments["center"] = to_backend(arguments["center"])
    with pytest.raises(error, match=match):
        RiemannianLaplace(Hypersphere(2), **arguments)


def test_bad_sample_size_and_exact_request_raise():
    law = RiemannianLaplace(Hypersphere(2), to_backend(unit([0, 0, 1.0])), 0.5)
    with pytest.raises(ValueError, match="n_samples"):
        law.sample(0)
    with pytest.raises(ValueError, match="method='exact'"):
        RiemannianLaplace(Grassmannian(3, 1), to_backend(np.diag([1.0, 0, 0])), 0.5,
                          method="exact")
