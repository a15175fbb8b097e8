"""Reference laws for the Laplace tests, computed here by quadrature, independently of the
library (no import from geomstats_dp.distributions.laplace).

Kolmogorov-Smirnov tolerance used throughout: with a fixed seed a test is deterministic; a
correct sampler gives p >= P_MIN except with probability P_MIN, while a 10% error in the scale
shifts the CDF by about 0.04, which n = 2,000 draws detect (the KS critical value at level
1e-3 is 1.95 / sqrt(n) = 0.044; 0.031 at n = 4,000).
"""

import functools
import math

import numpy as np
from scipy import integrate, special, stats

P_MIN = 1e-3


def _radius_function(r, curvature):
    return {1: np.sin, 0: lambda x: x, -1: np.sinh}[curvature](r)


@functools.lru_cache(maxsize=None)
def radial_cdf(dim, sigma, curvature, upper=math.inf, n_grid=4001):
    """CDF of the density ~ s_k(r)^(dim-1) exp(-r/sigma) on [0, upper], by quadrature.

    The support is cut where the density has fallen below e^-60 of its scale when it is
    unbounded (the neglected mass is below 1e-20).
    """
    if curvature == 1:
        upper = min(upper, math.pi)
    if math.isinf(upper):
        rate = 1.0 / sigma - (dim - 1) * (curvature == -1)
        upper = (60.0 + 3 * dim) / rate + 5 * dim * sigma
    grid = np.linspace(0.0, upper, n_grid)

    def density(r):
        return _radius_function(r, curvature) ** (dim - 1) * np.exp(-r / sigma)

    pieces = [
        integrate.quad(density, a, b, epsabs=0, epsrel=1e-10)[0]
        for a, b in zip(grid[:-1], grid[1:])
    ]
    cumulative = np.concatenate([[0.0], np.cumsum(pieces)])
    return lambda x: np.interp(x, grid, cumulative / cumulative[-1])


def _sphere_quadrature(n):
    """Nodes and weights of a quadrature for the mean over the unit sphere of R^n (n = 2, 3)."""
    if n == 2:
        angles = (np.arange(2048) + 0.5) * 2 * np.pi / 2048
        return np.stack([np.cos(angles), np.sin(angles)], axis=-1), np.full(2048, 1 / 2048)
    # Fibonacci sphere, equal weights: a product grid (Gauss-Legendre heights x uniform
    # angles) aligns its nodes on the level sets of sum |w_i - w_j| and put the CDF of that
    # spread 0.009 off at sigma = 0.05 (against 2e6 Monte Carlo directions); this grid 0.003
    index = np.arange(8192) + 0.5
    z, phi = 1 - 2 * index / 8192, np.pi * (1 + math.sqrt(5.0)) * index
    ring = np.sqrt(1 - z**2)
    nodes = np.stack([ring * np.cos(phi), ring * np.sin(phi), z], axis=-1)
    return nodes, np.full(8192, 1 / 8192)


def spd_pair_gaps(vectors):
    """|v_i - v_j|, i < j, along the last axis."""
    i, j = np.triu_indices(vectors.shape[-1], k=1)
    return np.abs(vectors[..., i] - vectors[..., j])


def spd_radius_density(n, sigma):
    """Unnormalised density of |r| when r ~ exp(-|r|/sigma) prod sinh(|r_i - r_j|/2) on R^n."""
    nodes, weights = _sphere_quadrature(n)
    gaps = spd_pair_gaps(nodes)

    def density(t):
        t = np.atleast_1d(t)
        angular = np.concatenate(
            [
                np.prod(np.sinh(chunk[:, None, None] * gaps[None] / 2), axis=-1) @ weights
                for chunk in np.array_split(t, max(1, t.size // 100))
            ]
        )
        return t ** (n - 1) * np.exp(-t / sigma) * angular

    return density


@functools.lru_cache(maxsize=None)
def spd_radius_cdf(n, sigma, upper=math.inf, n_grid=6001):
    """CDF of |r| for the SPD(n) affine-invariant Laplace law (n = 2, 3), by quadrature."""
    if math.isinf(upper):
        rate = 1 / sigma - 0.5 * math.sqrt(n * (n * n - 1) / 3)
        upper = 70.0 / rate
    grid = np.linspace(0.0, upper, n_grid)
    values = spd_radius_density(n, sigma)(grid)
    cumulative = integrate.cumulative_simpson(values, x=grid, initial=0.0)
    return lambda x: np.interp(x, grid, cumulative / cumulative[-1])


@functools.lru_cache(maxsize=None)
def spd_spread_cdf(n, sigma, upper=math.inf, n_grid=1501):
    """CDF of A = sum_{i<j} |r_i - r_j| / |r| for the SPD(n) Laplace spectrum (n = 2, 3).

    A depends only on the direction w = r/|r|, whose density is the radial integral
    m(w) = int_0^upper t^(n-1) e^(-t/sigma) prod sinh(t |w_i - w_j| / 2) dt (Simpson on a
    t-grid), tabulated on the sphere quadrature nodes.
    """
    nodes, weights = _sphere_quadrature(n)
    gaps = spd_pair_gaps(nodes)
    if math.isinf(upper):
        upper = 70.0 / (1 / sigma - 0.5 * math.sqrt(n * (n * n - 1) / 3))
    radii = np.linspace(0.0, upper, n_grid)
    masses = np.zeros(len(nodes))
    for chunk in np.array_split(np.arange(len(nodes)), max(1, len(nodes) // 256)):
        integrand = (
            radii[:, None] ** (n - 1) * np.exp(-radii[:, None] / sigma)
            * np.prod(np.sinh(radii[:, None, None] * gaps[None, chunk] / 2), axis=-1)
        )
        masses[chunk] = integrate.simpson(integrand, x=radii, axis=0)
    spread = gaps.sum(axis=-1)
    order = np.argsort(spread)
    cumulative = np.cumsum((weights * masses)[order])
    return lambda x: np.interp(x, spread[order], cumulative / cumulative[-1])


def gamma_cdf(dim, sigma, upper=math.inf):
    """CDF of Gamma(dim, sigma), truncated to [0, upper]."""
    law = stats.gamma(dim, scale=sigma)
    total = law.cdf(upper)
    return lambda x: law.cdf(np.minimum(x, upper)) / total


def sphere_moments_tolerance(dim, n_samples, n_sd=5.0):
    """Tolerances for the mean and covariance of a uniform unit vector in R^dim.

    E u = 0 with Var(u_i) = 1/dim; E u u^T = I/dim with Var(u_i^2) = 3/(dim(dim+2)) - 1/dim^2
    and Var(u_i u_j) = 1/(dim(dim+2)). Returns n_sd standard errors of each estimate.
    """
    mean_tol = n_sd * math.sqrt(1 / dim / n_samples)
    diag_tol = n_sd * math.sqrt((3 / (dim * (dim + 2)) - 1 / dim**2) / n_samples)
    off_tol = n_sd * math.sqrt(1 / (dim * (dim + 2)) / n_samples)
    return mean_tol, diag_tol, off_tol


def log_sphere_area(dim):
    """log |S^(dim-1)| = log(2 pi^(dim/2) / Gamma(dim/2))."""
    return math.log(2) + dim / 2 * math.log(math.pi) - special.gammaln(dim / 2)
