"""The Laplace Frechet mean on SPD with the Bures-Wasserstein metric (the barycenter).

The exact sampler's radial law (100,000 draws, made in numpy) is checked once, on numpy;
the estimator's use of it runs on every backend.
"""

import math

import numpy as np
import pytest
from geomstats.geometry.grassmannian import Grassmannian
from geomstats.geometry.spd_matrices import SPDBuresWassersteinMetric, SPDMatrices

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.distributions.laplace import (
    RiemannianLaplace,
    ball_geometry,
    frechet_mean_sensitivity,
    riemannian_laplace,
)
from geomstats_dp.distributions.laplace.bures_wasserstein import sqrt_chart_volume
from geomstats_dp.distributions.laplace.mean_solver import TOL_FRACTION
from geomstats_dp.learning import PrivateFrechetMean
from geomstats_dp.learning.reference import exact_frechet_mean
from geomstats_dp.privacy import PrivacyBudget, PureEvent


def _bures_wasserstein():
    space = SPDMatrices(2, equip=False)
    space.equip_with_metric(SPDBuresWassersteinMetric)
    return space


def _in_ball(space, center, radius, n_samples, rng):
    """Wishart draws kept inside the ball."""
    kept = []
    while len(kept) < n_samples:
        g = rng.standard_normal((2, 2)) * 0.7
        candidate = center + 0.3 * (g @ g.T - np.eye(2) * 0.5)
        eigenvalues = np.linalg.eigvalsh(candidate)
        if eigenvalues[0] > 0 and float(space.metric.dist(
                to_backend(candidate), to_backend(center))) < radius:
            kept.append(candidate)
    return np.array(kept)


def test_mirsky_bound_on_eigenvalues():
    """d_BW(X, Y) >= |sqrt(lambda(X)) - sqrt(lambda(Y))|: what the ball's floor rests on."""
    space, rng = _bures_wasserstein(), np.random.default_rng(0)
    for _ in range(200):
        a, b = rng.standard_normal((2, 2, 2))
        X, Y = a @ a.T + 0.01 * np.eye(2), b @ b.T + 0.01 * np.eye(2)
        gap = np.linalg.norm(np.sqrt(np.linalg.eigvalsh(X)) - np.sqrt(np.linalg.eigvalsh(Y)))
        assert float(space.metric.dist(to_backend(X), to_backend(Y))) >= gap - 1e-9


def test_ball_geometry_and_its_errors():
    space, center = _bures_wasserstein(), np.diag([2.0, 3.0])
    kappa_min, kappa_max, injectivity = ball_geometry(space, center, 0.3)
    floor = (math.sqrt(2.0) - 0.3) ** 2
    assert (kappa_min, kappa_max, injectivity) == (0.0, 3 / (2 * floor), math.sqrt(floor))
    with pytest.raises(ValueError, match=r"radius must be < sqrt\(lambda_min\(center\)\)"):
        ball_geometry(space, center, 1.5)
    with pytest.raises(ValueError, match="needs the public ball"):
        frechet_mean_sensitivity(space, 0.3, 10)


@pytest.mark.slow
def test_sensitivity_bound_holds_on_adversarial_neighbours():
    space, center, radius = _bures_wasserstein(), np.eye(2), 0.3
    rng = np.random.default_rng(1)
    for n_samples in (3, 10):
        bound = frechet_mean_sensitivity(space, radius, n_samples, center)
        others = _in_ball(space, center, radius, n_samples - 1, rng)
        # replacements near the boundary, in opposite directions
        boundary = [center + s * 0.99 * radius * np.array(d) for s in (1, -1)
                    for d in ([[2.0, 0.0], [0.0, 0.0]], [[0.0, 0.0], [0.0, 2.0]])]
        means = [to_numpy(exact_frechet_mean(space, to_backend(np.concatenate([others, [z]]))))
                 for z in boundary]
        largest = max(float(space.metric.dist(to_backend(a), to_backend(b)))
                      for a in means for b in means)
        assert largest <= bound


@pytest.mark.slow
def test_release_is_calibrated_and_restricted_to_the_ball(monkeypatch):
    space, center, radius = _bures_wasserstein(), np.eye(2), 0.15
    X = _in_ball(space, center, radius, 40, np.random.default_rng(2))
    laws = []
    original = RiemannianLaplace.__init__

    def spy(law, space_, footpoint, scale, **kwargs):
        laws.append((scale, kwargs.get("radius")))
        original(law, space_, footpoint, scale, **kwargs)

    monkeypatch.setattr(riemannian_laplace.RiemannianLaplace, "__init__", spy)
    estimator = PrivateFrechetMean(space, epsilon=0.5, method="laplace", radius=radius,
                                   center=center, random_state=0).fit(X)
    (event,) = estimator.events_
    # Theorem 2 plus twice the fixed-iteration solver's tolerance
    sensitivity = frechet_mean_sensitivity(space, radius, 40, center) * (1 + 2 * TOL_FRACTION)
    assert isinstance(event, PureEvent)
    assert event.sensitivity == pytest.approx(sensitivity, rel=1e-12)
    # the normalising constant depends on the footpoint and the law is truncated
    assert event.noise_scale == pytest.approx(2 * sensitivity / 0.5)
    assert laws[-1] == (event.noise_scale, radius)
    release = estimator.estimate_
    assert float(space.metric.dist(release, to_backend(center))) < radius


def _square_root_basis(n):
    """Frobenius-orthonormal basis of the symmetric n x n matrices, [n(n+1)/2, n, n]."""
    basis = []
    for i in range(n):
        for j in range(i, n):
            element = np.zeros((n, n))
            element[i, j] = element[j, i] = 1.0 if i == j else 1.0 / math.sqrt(2.0)
            basis.append(element)
    return np.array(basis)


def _geomstats_chart_volume(space, roots):
    """sqrt det of geomstats' metric pulled back by S -> S^2, [k] for roots [k, n, n]."""
    basis = _square_root_basis(roots.shape[-1])
    tangents = [roots @ element + element @ roots for element in basis]
    points = to_backend(roots @ roots)
    gram = np.empty((len(roots), len(basis), len(basis)))
    for p, first in enumerate(tangents):
        for q, second in enumerate(tangents[p:], start=p):
            value = to_numpy(space.metric.inner_product(
                to_backend(first), to_backend(second), points))
            gram[:, p, q] = gram[:, q, p] = value
    return np.sqrt(np.linalg.det(gram))


def test_square_root_chart_volume_matches_geomstats_metric():
    """The volume density J(S) of the exact sampler, against geomstats' inner product."""
    space = SPDMatrices(3, equip=False)
    space.equip_with_metric(SPDBuresWassersteinMetric)
    rng = np.random.default_rng(3)
    a = rng.standard_normal((20, 3, 3))
    points = a @ np.swapaxes(a, 1, 2) + 0.05 * np.eye(3)
    values, vectors = np.linalg.eigh(points)
    roots = np.einsum("kij,kj,klj->kil", vectors, np.sqrt(values), vectors)
    expected = _geomstats_chart_volume(space, roots)
    assert np.allclose(sqrt_chart_volume(roots), expected, rtol=1e-8)
    assert np.all(expected <= 1 + 1e-12)  # the bound that makes the acceptance a probability


def test_square_roots_are_within_sqrt2_of_the_bures_wasserstein_distance():
    """Araki-Yamagami: |X^1/2 - Y^1/2|_F <= sqrt2 d_BW(X, Y), the envelope's other fact."""
    space = SPDMatrices(3, equip=False)
    space.equip_with_metric(SPDBuresWassersteinMetric)
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((2, 500, 3, 3))
    # nearly singular, badly conditioned pairs are where the ratio is largest
    X = a @ np.swapaxes(a, 1, 2) + 1e-3 * np.eye(3)
    Y = b @ np.swapaxes(b, 1, 2) + 1e-3 * np.eye(3)

    def root(m):
        values, vectors = np.linalg.eigh(m)
        return np.einsum("kij,kj,klj->kil", vectors, np.sqrt(values), vectors)

    gap = np.linalg.norm(root(X) - root(Y), axis=(1, 2))
    distance = to_numpy(space.metric.dist(to_backend(X), to_backend(Y)))
    assert np.all(gap <= math.sqrt(2.0) * distance + 1e-9)


@pytest.mark.slow
@pytest.mark.backend_independent
# (0.2, 0.4) uses the l2 Laplace envelope, (1.0, 0.4) the uniform one on the ball
@pytest.mark.parametrize("scale, radius", [(1.0, None), (0.2, 0.4), (1.0, 0.4)])
def test_exact_sampler_radial_law_matches_quadrature(scale, radius, seed_shift):
    """Distances d_BW(I, X) of exact draws against their law computed by quadrature.

    At eta = I, d_BW(I, S^2) = |S - I|_F, so the radius r = |S - I|_F has density
    ~ e^(-r/sigma) r^(d-1) mean_u[vol(I + r u) 1_ball], the volume density taken from
    geomstats' own inner product (not from the sampler's formula), over fixed directions.
    Ignoring the volume factor (J = 1) moves the CDF by 0.01 at scale 1 (caught).
    """
    space, eta, center = _bures_wasserstein(), np.eye(2), np.diag([1.2, 0.9])
    ball = {} if radius is None else {"radius": radius, "center": center}
    law = RiemannianLaplace(space, eta, scale, method="exact", **ball)
    draws = law.sample(100_000, random_state=np.random.default_rng(10 + seed_shift))
    distances = np.sort(to_numpy(space.metric.dist(to_backend(eta), draws)))

    # 2,000 Fibonacci directions on the unit sphere of the symmetric 2 x 2 matrices
    index = np.arange(2000) + 0.5
    height, angle = 1 - 2 * index / 2000, math.pi * (1 + math.sqrt(5.0)) * index
    coordinates = np.stack([np.sqrt(1 - height**2) * np.cos(angle),
                            np.sqrt(1 - height**2) * np.sin(angle), height], axis=1)
    directions = np.einsum("kb,bij->kij", coordinates, _square_root_basis(2))
    grid = np.linspace(1e-4, 12 * scale if radius is None else 0.6, 481)
    roots = (eta + grid[:, None, None, None] * directions[None]).reshape(-1, 2, 2)
    # the volume density where the law has mass: positive roots, inside the ball if any
    kept = np.flatnonzero(np.linalg.eigvalsh(roots)[:, 0] > 0)
    if radius is not None:
        kept = kept[to_numpy(space.metric.dist(to_backend(roots[kept] @ roots[kept]),
                                               to_backend(center))) < radius]
    weight = np.zeros(len(roots))
    weight[kept] = _geomstats_chart_volume(space, roots[kept])
    density = np.exp(-grid / scale) * grid ** 2 * weight.reshape(len(grid), -1).mean(axis=1)
    cdf = np.concatenate([[0.0], np.cumsum((density[1:] + density[:-1]) / 2 * np.diff(grid))])
    cdf /= cdf[-1]
    empirical = np.arange(1, len(distances) + 1) / len(distances)
    ks = np.max(np.abs(np.interp(distances, grid, cdf) - empirical))
    # Kolmogorov's 0.999 quantile 1.95 / sqrt(n), plus 0.002 for the quadrature
    assert ks < 1.95 / math.sqrt(len(distances)) + 0.002


def test_estimator_draws_the_release_exactly():
    space, center, radius = _bures_wasserstein(), np.eye(2), 0.15
    X = _in_ball(space, center, radius, 20, np.random.default_rng(2))
    methods = []
    original = RiemannianLaplace.sample

    def spy(law, *args, **kwargs):
        points = original(law, *args, **kwargs)
        methods.append((law.method_, kwargs.get("give_up", True)))
        return points

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(RiemannianLaplace, "sample", spy)
        PrivateFrechetMean(space, epsilon=1.0, method="laplace", radius=radius,
                           center=center, random_state=0).fit(X)
    # the public pilot at the center (may give up: public), then the release (never does)
    assert methods == [("exact", True), ("exact", False)]


def test_laplace_without_an_exact_sampler_is_refused_before_the_budget():
    """Grassmann has only Metropolis-Hastings: its pure-DP claim would be unproven."""
    space = Grassmannian(4, 2)
    center = to_numpy(space.random_point())
    budget = PrivacyBudget(1.0, 0.0)
    points = np.broadcast_to(np.full((4, 4), np.nan), (5, 4, 4))  # never read
    with pytest.raises(ValueError, match="no exact sampler .* mixing, which is not proven"):
        PrivateFrechetMean(space, epsilon=1.0, method="laplace", radius=0.3,
                           center=center, budget=budget).fit(points)
    assert budget.spent_epsilon == 0


def test_laplace_whose_exact_sampler_accepts_too_rarely_is_refused_before_the_budget():
    """SPD(6) Bures-Wasserstein: 4 in 10,000 proposals accepted at the public center."""
    space = SPDMatrices(6, equip=False)
    space.equip_with_metric(SPDBuresWassersteinMetric)
    budget = PrivacyBudget(1.0, 0.0)
    points = np.full((50, 6, 6), np.nan)  # never read
    with pytest.raises(ValueError, match="accepts too rarely .* not proven"):
        PrivateFrechetMean(space, epsilon=1.0, method="laplace", radius=0.1,
                           center=np.eye(6), budget=budget).fit(points)
    assert budget.spent_epsilon == 0
