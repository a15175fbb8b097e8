"""Sensitivity of the Frechet mean and the Laplace scale (Reimherr et al., 2021).

Theorem 2: if all data lie in a geodesic ball B_r(m0) with
r < r* = (1/2) min(inj M, (pi/2) kappa^(-1/2)) (kappa > 0 an upper bound on the sectional
curvatures; the second term is dropped when kappa <= 0), the Frechet means of two datasets
of size n differing in one point (replace-one) are at distance at most

    2 r (2 - h) / (n h),   h = 2 r sqrt(kappa) cot(2 r sqrt(kappa)) if kappa > 0, else 1.

The proof bounds |Log_m(x) - Log_m(y)| <= 2 r (2 - h) for x, y, m in the ball (supplement,
Lemma 1), which is also the sensitivity of n times the gradient of the Frechet function
used by the K-norm gradient mechanism (``frechet_gradient_sensitivity``).

Theorem 1, corrected: the Laplace mechanism is eps-DP with sigma = 2 Delta / eps, and
with sigma = Delta / eps when the normalising constant does not depend on the footpoint
(homogeneous spaces, untruncated law).
"""

import math

import numpy as np
from geomstats.geometry.spd_matrices import SPDBuresWassersteinMetric

from geomstats_dp._backend import to_numpy
from geomstats_dp._validation import check_positive_finite, check_positive_int
from geomstats_dp.distributions.laplace.geometry import describe
from geomstats_dp.distributions.registry import unwrap_metric


def _unsupported(space, what):
    metric = type(unwrap_metric(space.metric)[0]).__name__
    return NotImplementedError(
        f"{what} is not known for {type(space).__name__} with {metric}; supported: "
        "Hypersphere, Hyperboloid, PoincareBall, SPDMatrices (affine-invariant, "
        "log-Euclidean), Euclidean/matrix spaces, Grassmannian"
    )


def curvature_bounds(space):
    """Lowest and highest sectional curvature of ``space``'s metric.

    Parameters
    ----------
    space : Manifold
        Hypersphere (1, 1), Hyperboloid / PoincareBall (-1, -1), SPDMatrices with the
        affine-invariant metric (-1/2, 0) or the log-Euclidean metric (0, 0), Euclidean and
        matrix spaces (0, 0), Grassmannian (0, 1) ((1/2, 1/2) for lines or hyperplanes).
        One-dimensional spaces report (0, 0). A metric scaled by c divides these by c.

    Returns
    -------
    bounds : tuple of float
        (kappa_min, kappa_max).
    """
    geometry = describe(space)
    if geometry.curvature is None:
        raise _unsupported(space, "the curvature range")
    low, high = geometry.curvature
    return (low / geometry.metric_scale, high / geometry.metric_scale)


def injectivity_radius(space):
    """Global injectivity radius of ``space``'s metric (inf for Hadamard manifolds)."""
    radius = describe(space).scaled_injectivity_radius()
    if radius is None:
        raise _unsupported(space, "the injectivity radius")
    return radius


def _is_bures_wasserstein(space):
    metric, scale = unwrap_metric(space.metric)
    return isinstance(metric, SPDBuresWassersteinMetric), scale


def locally_bounded(space):
    """Whether the curvature is bounded only on balls (Bures-Wasserstein): the Laplace
    mechanism then restricts its law to the public data ball (``ball_geometry``)."""
    return _is_bures_wasserstein(space)[0]


def ball_geometry(space, center=None, radius=None):
    """(kappa_min, kappa_max, injectivity radius) over the ball B_radius(center).

    The global values (``curvature_bounds``, ``injectivity_radius``) for the spaces they
    support. On SPD matrices with the Bures-Wasserstein metric, whose curvature is
    unbounded near singular matrices, the bounds come from the public ball itself: by
    Mirsky's inequality d_BW(X, Y) = min_U |X^1/2 - Y^1/2 U|_F >= |sqrt(lambda(X)) -
    sqrt(lambda(Y))| (sorted eigenvalues), so every X in the ball has eigenvalues
    >= lambda_lb = (sqrt(lambda_min(center)) - radius)^2. There the sectional curvature
    lies in [0, 3 / (lambda_r + lambda_(r-1))] <= [0, 3 / (2 lambda_lb)] (Massart & Absil
    2020; Han et al. 2024, Section 5.3) and the injectivity radius is at least
    sqrt(lambda_lb) (a geodesic reaches the singular boundary after sqrt(lambda_min)).

    Parameters
    ----------
    space : Manifold
    center : array-like, shape=[*space.shape], optional
        Needed for Bures-Wasserstein.
    radius : float, optional
        Needed for Bures-Wasserstein; must be < sqrt(lambda_min(center)).

    Returns
    -------
    kappa_min, kappa_max, injectivity : float
    """
    bures_wasserstein, scale = _is_bures_wasserstein(space)
    if not bures_wasserstein:
        low, high = curvature_bounds(space)
        return low, high, injectivity_radius(space)
    if scale != 1.0:
        raise NotImplementedError("a scaled Bures-Wasserstein metric is not supported")
    if center is None or radius is None:
        raise ValueError(
            "the Bures-Wasserstein metric has no global curvature bound: the sensitivity "
            "needs the public ball (center, radius) holding the data"
        )
    smallest = float(np.linalg.eigvalsh(to_numpy(center))[0])
    if not radius < math.sqrt(smallest):
        raise ValueError(
            f"radius must be < sqrt(lambda_min(center)) = {math.sqrt(smallest):.6g} on "
            f"the Bures-Wasserstein metric (the ball must avoid singular matrices), got "
            f"{radius}"
        )
    floor = (math.sqrt(smallest) - radius) ** 2
    return 0.0, 3.0 / (2.0 * floor), math.sqrt(floor)


def max_data_radius(space, center=None, radius=None):
    """r* = (1/2) min(inj M, (pi/2) / sqrt(kappa_max)): data radii must stay below it.

    ``center`` and ``radius`` give the ball the bounds are taken over (``ball_geometry``).
    """
    _, kappa_max, limit = ball_geometry(space, center, radius)
    if kappa_max > 0:
        limit = min(limit, 0.5 * math.pi / math.sqrt(kappa_max))
    return 0.5 * limit


def curvature_correction(radius, kappa_max):
    """h(r, kappa) = 2 r sqrt(kappa) cot(2 r sqrt(kappa)) for kappa > 0, else 1."""
    if kappa_max <= 0:
        return 1.0
    angle = 2.0 * radius * math.sqrt(kappa_max)
    return angle / math.tan(angle)


def _checked_correction(space, radius, n_samples, center=None):
    radius = check_positive_finite(radius, "radius")
    check_positive_int(n_samples, "n_samples")
    limit = max_data_radius(space, center, radius)
    if not radius < limit:
        raise ValueError(
            f"radius must be < r* = {limit:.6g} for {type(space).__name__} (Assumption 1 "
            f"of Reimherr et al.: half of min(inj M, pi / (2 sqrt(kappa_max)))), got {radius}"
        )
    return curvature_correction(radius, ball_geometry(space, center, radius)[1])


def frechet_mean_sensitivity(space, radius, n_samples, center=None):
    """Replace-one sensitivity of the Frechet mean of data in a ball, in geodesic distance.

    Parameters
    ----------
    space : Manifold
        A space supported by ``curvature_bounds``.
    radius : float
        r: every data point lies in the open geodesic ball B_r(m0); r < ``max_data_radius``.
    n_samples : int
        Dataset size n.
    center : array-like, shape=[*space.shape], optional
        The ball's centre m0; needed where the curvature is bounded only locally
        (Bures-Wasserstein, ``ball_geometry``).

    Returns
    -------
    sensitivity : float
        2 r (2 - h) / (n h) (Theorem 2 of Reimherr et al.; 2 r / n when kappa_max <= 0).
    """
    correction = _checked_correction(space, radius, n_samples, center)
    return 2.0 * radius * (2.0 - correction) / (n_samples * correction)


def frechet_gradient_sensitivity(space, radius, n_samples, center=None):
    """Replace-one sensitivity of grad F(x) = -(1/n) sum Log_x(x_i), uniformly over x in the ball.

    Returns 2 r (2 - h) / n (supplement of Reimherr et al., Lemma 1, divided by n): the
    sensitivity of the K-norm gradient mechanism (Soto et al., 2022; Han et al., Sect. 6).
    """
    correction = _checked_correction(space, radius, n_samples, center)
    return 2.0 * radius * (2.0 - correction) / n_samples


def footpoint_free_normaliser(space):
    """Whether the Laplace normalising constant C(eta, sigma) is the same for every eta."""
    return describe(space).homogeneous


def laplace_scale(sensitivity, epsilon, space, truncated=False):
    """Scale sigma making the Riemannian Laplace mechanism epsilon-DP.

    Parameters
    ----------
    sensitivity : float
        Delta, in the geodesic distance of ``space``.
    epsilon : float
    space : Manifold
    truncated : bool
        Whether the law is restricted to a ball (``RiemannianLaplace(radius=...)``); the
        normalising constant then depends on the footpoint.

    Returns
    -------
    scale : float
        Delta / epsilon on homogeneous spaces (Euclidean, sphere, hyperbolic, SPD
        affine-invariant and log-Euclidean, Stiefel, Grassmann) without truncation;
        2 Delta / epsilon otherwise.
    """
    sensitivity = check_positive_finite(sensitivity, "sensitivity")
    epsilon = check_positive_finite(epsilon, "epsilon")
    factor = 1.0 if footpoint_free_normaliser(space) and not truncated else 2.0
    return factor * sensitivity / epsilon
