"""The Riemannian Laplace mechanism for the Frechet mean (Reimherr et al., 2021).

Adjacency: replace-one, the data confined to the public ball B_r(m0). Sensitivity of the
Frechet mean: Delta = 2 r (2 - h) / (n h) (Theorem 2). Release: one draw of the Riemannian
Laplace law centred at the exact Frechet mean with scale Delta / epsilon (2 Delta / epsilon
where the normalising constant depends on the footpoint). Accountant: a pure epsilon-DP
event (``PureEvent``) in the ledger.

On SPD matrices with the Bures-Wasserstein metric (the Wasserstein barycenter of centred
Gaussians), whose curvature is bounded only away from singular matrices, the curvature
and injectivity bounds of Theorem 2 are those of the public ball (``laplace.ball_geometry``:
eigenvalues >= (sqrt(lambda_min(center)) - r)^2 there), and the law is restricted to the
ball, hence the scale 2 Delta / epsilon; it is sampled by Metropolis-Hastings, like every
metric without an exact sampler.
"""

import warnings

import numpy as np

from geomstats_dp._backend import get_rng, to_backend, to_numpy
from geomstats_dp._validation import check_positive_finite
from geomstats_dp.distributions import RiemannianLaplace
from geomstats_dp.distributions.laplace import frechet_mean_sensitivity, laplace_scale
from geomstats_dp.distributions.laplace.sensitivity import locally_bounded
from geomstats_dp.learning._data import check_values
from geomstats_dp.learning.reference import exact_frechet_mean
from geomstats_dp.privacy import PrivacyLeakWarning, PureEvent

INSIDE = 1 - 1e-9  # projected points land just inside the open ball


def project_onto_ball(space, points, center, radius):
    """Move the points farther than ``radius`` from ``center`` onto the ball's boundary.

    A per-record map: replacing one record still changes one record, so the guarantee
    for data in the ball covers any data after projection.

    Returns
    -------
    points : numpy.ndarray, shape=[n, *space.shape]
    n_projected : int
    """
    center = to_backend(center)
    distances = to_numpy(space.metric.dist(to_backend(points), center))
    outside = distances >= radius * INSIDE
    if not outside.any():
        return points, 0
    logs = space.metric.log(to_backend(points[outside]), center)
    shrink = (radius * INSIDE / distances[outside]).reshape((-1,) + (1,) * len(space.shape))
    projected = points.copy()
    projected[outside] = to_numpy(space.metric.exp(logs * to_backend(shrink), center))
    return projected, int(outside.sum())


def fit_laplace(estimator, points, weights, budget):
    """Release a Laplace-perturbed Frechet mean; return the fitted attributes.

    Parameters
    ----------
    estimator : PrivateFrechetMean
        Its ``space``, ``epsilon``, ``radius``, ``center``, ``random_state``, ``secure``.
    points : numpy.ndarray, shape=[n, *space.shape]
        Shape-checked data (values are checked after the budget).
    weights : numpy.ndarray, shape=[n]
        Must be uniform: Theorem 2 bounds the unweighted mean.
    budget : PrivacyBudget

    Returns
    -------
    fitted : dict
    """
    space, n_samples = estimator.space, len(points)
    if estimator.radius is None or estimator.center is None:
        raise ValueError(
            "method='laplace' needs the public ball holding the data: pass radius and center"
        )
    radius = check_positive_finite(estimator.radius, "radius")
    if np.ptp(weights) > 0:
        raise ValueError("sample_weight is not supported with method='laplace'")
    center = to_backend(estimator.center)
    sensitivity = frechet_mean_sensitivity(space, radius, n_samples, center)
    # Bures-Wasserstein: curvature bounded on the ball only, so the law is restricted to
    # it, and a truncated law needs 2 Delta / eps
    ball = {"radius": radius, "center": center} if locally_bounded(space) else {}
    scale = laplace_scale(sensitivity, estimator.epsilon, space, truncated=bool(ball))
    # Build the law once at the center: checks the center and the law's existence
    # (hyperbolic: scale < 1/(d-1)) before the budget is charged or the data read.
    RiemannianLaplace(space, center, scale, **ball)
    event = PureEvent(estimator.epsilon, sensitivity=sensitivity, noise_scale=scale,
                      label="Riemannian Laplace Frechet mean")
    budget.check(event)
    check_values(space, points, 1e-6)
    points, n_projected = project_onto_ball(space, points, center, radius)
    if n_projected:
        warnings.warn(
            "some points lie outside the ball B(center, radius) and were projected onto it; "
            "this warning depends on the data and is not covered by the budget",
            PrivacyLeakWarning,
            stacklevel=4,
        )
    mean = exact_frechet_mean(space, to_backend(points))
    rng = get_rng(estimator.random_state, secure=estimator.secure)
    release = RiemannianLaplace(space, mean, scale, **ball).sample(random_state=rng)
    budget.spend(event)
    return {
        "estimate_": release,
        "noise_multiplier_": scale / sensitivity,
        "noise_multipliers_": {"laplace": scale / sensitivity},
        "n_iter_": 0,
        "n_gradient_evaluations_": 0,
        "events_": (event,),
    }
