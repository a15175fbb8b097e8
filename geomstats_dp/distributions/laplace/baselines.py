"""Mechanisms the Riemannian Laplace mechanism is compared with.

- Ambient Laplace (Reimherr et al., 2021, Sect. 5): the l2 K-norm ("Euclidean Laplace")
  mechanism in the vectorised ambient space (vech for symmetric matrices, as in the paper's
  SPD experiment), then ``space.projection`` back onto the manifold.
- FM-KNG (Soto et al., 2022; Han et al., Sect. 6.1): the K-norm gradient mechanism for the
  Frechet mean, density ~ exp(-eps |grad F(x)|_x / (2 Delta_g)) on the data ball, sampled by
  Metropolis-Hastings on the manifold.
"""

import math

import numpy as np
from geomstats.geometry.spd_matrices import SPDMatrices

from geomstats_dp._backend import get_rng, to_backend, to_numpy
from geomstats_dp._validation import check_positive_finite, check_positive_int
from geomstats_dp.distributions.laplace.geometry import describe
from geomstats_dp.distributions.laplace.mcmc import ManifoldMetropolis, default_step_size
from geomstats_dp.distributions.laplace.sensitivity import frechet_gradient_sensitivity


def _is_symmetric_space(space):
    return isinstance(space, SPDMatrices)


def _vectorise(space, point):
    """Ambient coordinates: vech (upper triangle) for symmetric matrices, else flattened."""
    if _is_symmetric_space(space):
        return point[np.triu_indices(point.shape[-1])]
    return point.reshape(-1)


def _unvectorise(space, vector):
    shape = tuple(space.shape)
    if _is_symmetric_space(space):
        matrix = np.zeros(shape)
        matrix[np.triu_indices(shape[-1])] = vector
        return matrix + np.triu(matrix, 1).T
    return vector.reshape(shape)


def l2_laplace_noise(dim, scale, rng):
    """One draw of density ~ exp(-|z|_2 / scale) on R^dim: Gamma(dim, scale) radius times a
    uniform direction (Reimherr et al., supplement A.4)."""
    direction = rng.standard_normal(dim)
    direction /= np.linalg.norm(direction)
    return rng.gamma(dim, scale) * direction


def ambient_mean_sensitivity(space, radius, n_samples, center=None):
    """Replace-one l2 sensitivity 2 r_E / n of the ambient (extrinsic) mean of data in B_r(m0).

    r_E bounds the ambient distance |vec(x) - vec(m0)| over the geodesic ball (supplement
    A.2.2, A.3.2 of Reimherr et al.): 2 sin(r/2) on the unit sphere (r <= pi), r on
    Euclidean spaces, |m0|_op (e^r - 1) for SPD affine-invariant (e^r - 1 at m0 = I,
    Proposition 1; the vech norm is at most the Frobenius norm).

    Parameters
    ----------
    space : Manifold
        Hypersphere, Euclidean or SPDMatrices (affine-invariant), unscaled metric.
    radius : float
    n_samples : int
    center : array-like, shape=[*space.shape], optional
        m0; needed for SPD (its operator norm scales r_E).

    Returns
    -------
    sensitivity : float
    """
    radius = check_positive_finite(radius, "radius")
    n_samples = check_positive_int(n_samples, "n_samples")
    geometry = describe(space)
    if geometry.metric_scale != 1.0:
        raise NotImplementedError("ambient radii are tabulated for unscaled metrics only")
    if geometry.family == "sphere":
        ambient = 2.0 * math.sin(min(radius, math.pi) / 2.0)
    elif geometry.family == "flat" and not _is_symmetric_space(space):
        ambient = radius
    elif geometry.family == "spd_affine":
        if center is None:
            raise ValueError("center is required for SPD matrices")
        ambient = float(np.linalg.eigvalsh(to_numpy(center))[-1]) * math.expm1(radius)
    else:
        raise NotImplementedError(
            f"no ambient radius for {type(space).__name__}; pass sensitivity_ambient yourself"
        )
    return 2.0 * ambient / n_samples


def ambient_laplace_release(space, mean, sensitivity_ambient, epsilon, random_state=None):
    """Release ``mean`` + l2 Laplace noise in the ambient coordinates, projected on the space.

    epsilon-DP (replace-one) provided ``mean`` has l2 sensitivity at most
    ``sensitivity_ambient`` in the vectorised coordinates, e.g. the extrinsic mean of data in
    B_r(m0) with ``ambient_mean_sensitivity``; the noise scale is Delta / epsilon (the
    Euclidean normalising constant does not depend on the centre) and the projection is
    post-processing. Reimherr et al. (Sect. 5) add this noise to the Frechet mean with the
    same 2 r_E / n, which is not a proven bound for the Frechet mean.

    Parameters
    ----------
    space : Manifold
        A geomstats space with ``projection``.
    mean : array-like, shape=[*space.shape]
    sensitivity_ambient : float
    epsilon : float
    random_state : None, int or numpy.random.Generator

    Returns
    -------
    point : array-like, shape=[*space.shape]
    """
    scale = check_positive_finite(sensitivity_ambient, "sensitivity_ambient") / (
        check_positive_finite(epsilon, "epsilon")
    )
    vector = _vectorise(space, to_numpy(mean))
    noisy = vector + l2_laplace_noise(vector.size, scale, get_rng(random_state))
    return space.projection(to_backend(_unvectorise(space, noisy)))


def _gradient_norms(space, data):
    """x -> |grad F(x)|_x with F(x) = (1/2n) sum rho(x, x_i)^2, for points [k, *shape]."""
    n_data = data.shape[0]

    def norms(points):
        points = to_numpy(points)
        k = points.shape[0]
        bases = np.repeat(points, n_data, axis=0)
        targets = np.tile(data, (k,) + (1,) * (data.ndim - 1))
        logs = to_numpy(space.metric.log(to_backend(targets), to_backend(bases)))
        gradients = -logs.reshape((k, n_data) + data.shape[1:]).mean(axis=1)
        return np.atleast_1d(
            to_numpy(space.metric.norm(to_backend(gradients), to_backend(points)))
        )

    return norms


def knorm_gradient_release(
    space, points, epsilon, radius, center, n_samples=1, random_state=None, burn_in=5000,
    step_size=None,
):
    """FM-KNG: the K-norm gradient mechanism for the Frechet mean (Soto et al., 2022).

    Samples x in B_r(m0) with density ~ exp(-eps |grad F(x)|_x / (2 Delta_g)) w.r.t. the
    Riemannian volume, F(x) = (1/2n) sum rho(x, x_i)^2, grad F(x) = -(1/n) sum Log_x(x_i),
    and Delta_g = 2 r (2 - h) / n (``frechet_gradient_sensitivity``: for x, x_i, x'_i in the
    ball, |Log_x(x_i) - Log_x(x'_i)| <= 2 r (2 - h)). An exponential mechanism with utility
    -|grad F(x)| of sensitivity Delta_g, hence epsilon-DP under replace-one for data in
    B_r(m0) when sampled exactly; here it is sampled by Metropolis-Hastings started at m0
    (data-independent) after ``burn_in`` steps, as in Han et al. (Sect. 6.1), so the
    guarantee holds up to the chain's distance to stationarity. Each step evaluates the full
    gradient (n logarithms per chain).

    Parameters
    ----------
    space : Manifold
        A space supported by ``frechet_gradient_sensitivity``.
    points : array-like, shape=[n, *space.shape]
        The data, all in B_radius(center) (checked: ValueError otherwise).
    epsilon : float
    radius : float
    center : array-like, shape=[*space.shape]
    n_samples : int
        Independent releases (one chain each); each costs epsilon.
    random_state : None, int or numpy.random.Generator
    burn_in : int
        Metropolis-Hastings steps per chain (Han et al. use 5,000).
    step_size : float, optional
        Proposal scale; default min(2 sigma, r/2) with sigma = 2 Delta_g / eps.

    Returns
    -------
    released : array-like, shape=[n_samples, *space.shape] ([*space.shape] if n_samples == 1)
    """
    data = to_numpy(points)
    center = to_numpy(center)
    n_data = data.shape[0]
    scale = 2.0 * frechet_gradient_sensitivity(space, radius, n_data, center) / (
        check_positive_finite(epsilon, "epsilon")
    )
    in_ball = np.atleast_1d(
        to_numpy(space.metric.dist(to_backend(center), to_backend(data)))
    ) < radius
    if not in_ball.all():
        raise ValueError(
            f"points at indices {np.flatnonzero(~in_ball).tolist()} lie outside the ball "
            f"of radius {radius} about center; the sensitivity bound needs them inside"
        )
    gradient_norms = _gradient_norms(space, data)

    def log_target(candidates):
        candidates = to_numpy(candidates)
        inside = np.atleast_1d(
            to_numpy(space.metric.dist(to_backend(center), to_backend(candidates)))
        ) < radius
        values = np.full(candidates.shape[0], -np.inf)
        if inside.any():
            values[inside] = -gradient_norms(candidates[inside]) / scale
        return values

    max_step = describe(space).scaled_injectivity_radius() or math.inf
    if step_size is None:
        step_size = default_step_size(scale, radius, max_step)
    chains = ManifoldMetropolis(
        space, log_target, step_size, burn_in=burn_in, thinning=1,
        max_step=max_step if math.isfinite(max_step) else None,
    )
    draws = chains.sample(center, check_positive_int(n_samples, "n_samples"),
                          get_rng(random_state))
    return to_backend(draws[0] if n_samples == 1 else draws)
