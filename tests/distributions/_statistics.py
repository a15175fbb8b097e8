"""Statistical assertions for draws of a tangent Gaussian N_w(mu, sigma^2).

For iid draws xi_1..xi_n of N_w(mu, sigma^2) on a d-dimensional manifold, the coordinates
c in a metric-orthonormal basis of T_w are iid N(mu_c, sigma^2 I_d). Each check compares a
sample statistic with its exact expectation in units of its exact standard error:

- ||xi - mu||_w^2 = sigma^2 chi^2_d: mean d sigma^2, variance 2 d sigma^4, so the sample
  mean has standard error sigma^2 sqrt(2 d / n);
- a coordinate sample mean has standard error sigma / sqrt(n);
- an entry (a, b) of S = (1/n) sum (c - mu_c)(c - mu_c)^T has mean sigma^2 delta_ab and
  standard error sigma^2 sqrt((1 + delta_ab) / n) (products of independent normals have
  variance sigma^4, squares 2 sigma^4).

The allowed number of standard errors is Bonferroni-corrected over the entries checked at
once, for a family-wise false-alarm probability FALSE_ALARM (normal approximation, fine for
n in the thousands). A wrong scale of a single coordinate by 1/sqrt(2) shifts its variance
by sigma^2 / 2, i.e. sqrt(n / 8) standard errors: 35 at n = 10,000.
"""

import math

import numpy as np
from scipy import special

from geomstats_dp._backend import to_backend, to_numpy

FALSE_ALARM = 1e-6
RANK_RTOL = 1e-12


def critical_z(n_comparisons, false_alarm=FALSE_ALARM):
    """Two-sided normal quantile, Bonferroni-corrected over ``n_comparisons``."""
    return float(special.ndtri(1 - false_alarm / (2 * n_comparisons)))


def inner_products(metric, vecs_a, vecs_b, base_point):
    """``metric.inner_product`` of numpy arrays broadcast against each other -> numpy."""
    arrays = [to_backend(np.array(x)) for x in np.broadcast_arrays(vecs_a, vecs_b, base_point)]
    products = metric.inner_product(*arrays)
    return np.atleast_1d(to_numpy(products))


def tangent_basis(space, metric, base_point):
    """Metric-orthonormal basis [d, *shape] of T_w, built independently of the transports.

    The ambient canonical basis is projected with ``space.to_tangent``; with G its Gram
    matrix in ``metric.inner_product`` and G = V diag(g) V^T, the vectors
    g_i^(-1/2) sum_j V_ji t_j over the d largest eigenvalues g_i are orthonormal. The
    other eigenvalues must be rounding noise (below RANK_RTOL max(g)): projections of
    ambient vectors normal to T_w come out as noise rather than exact zeros, and an
    ill-conditioned metric spreads the true eigenvalues over many decades (1e8 at an SPD
    point of condition number 1e4), so no per-vector relative threshold separates them.
    """
    shape = tuple(space.shape)
    n_ambient = math.prod(shape)
    canonical = np.eye(n_ambient).reshape((n_ambient,) + shape)
    points = np.array(np.broadcast_to(base_point, canonical.shape))
    projected = to_numpy(space.to_tangent(to_backend(canonical), to_backend(points)))
    gram = np.stack([inner_products(metric, projected, vec, base_point) for vec in projected])
    eigvals, eigvecs = np.linalg.eigh((gram + gram.T) / 2)
    dim = int(space.dim)
    rank_floor = RANK_RTOL * eigvals[-1]
    assert eigvals[-dim] > rank_floor and eigvals[: -dim].max(initial=0) < rank_floor, (
        f"to_tangent does not span exactly {dim} dimensions: Gram eigenvalues {eigvals}"
    )
    weights = eigvecs[:, -dim:].T / np.sqrt(eigvals[-dim:])[:, None]
    return np.tensordot(weights, projected, axes=1)


def orthonormal_coordinates(space, metric, base_point, tangent_vecs):
    """Coordinates [n, d] of tangent vectors [n, *shape] in ``tangent_basis``."""
    basis = tangent_basis(space, metric, base_point)
    return np.stack(
        [inner_products(metric, tangent_vecs, vec, base_point) for vec in basis], axis=-1
    )


def assert_squared_norm_mean(squared_norms, dim, sigma):
    """Sample mean of ||xi - mu||_w^2 [n] equals d sigma^2 within the critical z."""
    n_draws = squared_norms.shape[0]
    std_error = sigma**2 * np.sqrt(2 * dim / n_draws)
    z_score = abs(squared_norms.mean() - dim * sigma**2) / std_error
    assert z_score < critical_z(1), (
        f"E||xi||^2: {squared_norms.mean():.5g} vs d sigma^2 = {dim * sigma**2:.5g} "
        f"({z_score:.2f} standard errors)"
    )


def assert_gaussian_coordinates(coords, sigma, mean=None):
    """Coordinates [n, d] have mean ``mean`` (default 0) and covariance sigma^2 I."""
    n_draws, dim = coords.shape
    mean = np.zeros(dim) if mean is None else np.asarray(mean)
    centred = coords - mean
    mean_z = np.abs(centred.mean(axis=0)) / (sigma / np.sqrt(n_draws))
    assert mean_z.max() < critical_z(dim), (
        f"coordinate means off by up to {mean_z.max():.2f} standard errors: "
        f"{coords.mean(axis=0)} vs {mean}"
    )
    covariance = centred.T @ centred / n_draws
    std_errors = sigma**2 * np.sqrt((1 + np.eye(dim)) / n_draws)
    cov_z = np.abs(covariance - sigma**2 * np.eye(dim)) / std_errors
    n_entries = dim * (dim + 1) // 2
    assert cov_z.max() < critical_z(n_entries), (
        f"coordinate covariance off by up to {cov_z.max():.2f} standard errors at entry "
        f"{np.unravel_index(cov_z.argmax(), cov_z.shape)}: diagonal {np.diag(covariance)}, "
        f"expected {sigma**2}"
    )


def assert_transport_is_isometric(space, transport, points, seed):
    """Orthonormal coordinates moved to each of ``points`` [k, *shape] keep their inner
    products in the space's metric (geomstats' ``inner_product``, pair by pair)."""
    coefficients = np.random.default_rng(seed).standard_normal(
        (3, points.shape[0], int(space.dim)))
    moved = transport.transport(points, transport.from_coordinates(coefficients))
    for index, point in enumerate(points):
        gram = [[inner_products(space.metric, first, second, point)[0]
                 for second in moved[:, index]] for first in moved[:, index]]
        np.testing.assert_allclose(gram, coefficients[:, index] @ coefficients[:, index].T,
                                   atol=1e-10)
