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

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp._validation import check_positive_finite
from geomstats_dp.distributions import RiemannianLaplace
from geomstats_dp.distributions.laplace import frechet_mean_sensitivity, laplace_scale
from geomstats_dp.distributions.laplace.sensitivity import locally_bounded
from geomstats_dp.learning._data import check_values
from geomstats_dp.learning._diagnostics import user_stacklevel
from geomstats_dp.learning.mechanisms.base import ReleaseMechanism
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


class LaplaceRelease(ReleaseMechanism):
    """The Riemannian Laplace release of the Frechet mean (pure epsilon-DP; module doc).

    Needs the estimator's public ball (``radius``, ``center``) and uniform weights.
    """

    def __init__(self, estimator, n_samples, weights=None):
        super().__init__(estimator, n_samples, weights)
        space = estimator.space
        if estimator.radius is None or estimator.center is None:
            raise ValueError(
                "method='laplace' needs the public ball holding the data: pass radius and "
                "center"
            )
        self.radius = check_positive_finite(estimator.radius, "radius")
        if weights is not None and np.ptp(weights) > 0:
            raise ValueError("sample_weight is not supported with method='laplace'")
        self.center = to_backend(estimator.center)
        self.sensitivity = frechet_mean_sensitivity(space, self.radius, n_samples,
                                                    self.center)
        # Bures-Wasserstein: curvature bounded on the ball only, so the law is restricted
        # to it, and a truncated law needs 2 Delta / eps
        self.ball = ({"radius": self.radius, "center": self.center}
                     if locally_bounded(space) else {})
        self.scale = laplace_scale(self.sensitivity, estimator.epsilon, space,
                                   truncated=bool(self.ball))
        # Build the law once at the center: checks the center and the law's existence
        # (hyperbolic: scale < 1/(d-1)) before the budget is charged or the data read.
        RiemannianLaplace(space, self.center, self.scale, **self.ball)

    def events(self):
        return (PureEvent(self.estimator.epsilon, sensitivity=self.sensitivity,
                          noise_scale=self.scale, label="Riemannian Laplace Frechet mean"),)

    def release(self, points, weights, rng):
        space = self.estimator.space
        check_values(space, points, 1e-6)
        points, n_projected = project_onto_ball(space, points, self.center, self.radius)
        if n_projected:
            warnings.warn(
                "some points lie outside the ball B(center, radius) and were projected onto "
                "it; this warning depends on the data and is not covered by the budget",
                PrivacyLeakWarning,
                stacklevel=user_stacklevel(),
            )
        mean = exact_frechet_mean(space, to_backend(points))
        release = RiemannianLaplace(space, mean, self.scale, **self.ball).sample(
            random_state=rng)
        multiplier = self.scale / self.sensitivity
        return {
            "estimate_": release,
            "noise_multiplier_": multiplier,
            "noise_multipliers_": {"laplace": multiplier},
            "n_iter_": 0,
            "n_gradient_evaluations_": 0,
        }
