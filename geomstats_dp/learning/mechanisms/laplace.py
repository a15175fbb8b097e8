"""The Riemannian Laplace mechanism for the Frechet mean (Reimherr et al., 2021).

Adjacency: replace-one, over any points of the space: each record is first moved onto the
public ball B_r(m0) (``project_onto_ball``, a per-record map of public settings, applied
silently), so every dataset becomes one inside the ball and neighbours stay neighbours.
Release: one draw of the Riemannian Laplace law centred at x_K, the Frechet mean of the
projected records computed by a PUBLIC number K of gradient steps that provably reach a
public tolerance tol (``laplace.mean_solver``: no stopping rule, no convergence error).
Sensitivity: Delta + 2 tol, Delta = 2 r (2 - h) / (n h) (Theorem 2) and
tol = 1e-4 Delta (``laplace.mean_solver.released_mean_sensitivity``). Scale
(Delta + 2 tol) / epsilon (twice that where the normalising constant depends on the
footpoint). Accountant: a pure epsilon-DP event (``PureEvent``) in the ledger. The draw is
reported as an exponential-mechanism stage (``privacy.stages.discrete_stage``) whose
statistic is x_K, of sensitivity Delta + 2 tol in the metric's distance.

Nothing else observable depends on the data: no warning for projected records, no
exception from the solver; the sampler never gives up. Geometries and radii outside the
solver's proof (curvature of both signs; on positively curved spaces 3r must stay below
pi / (2 sqrt(kappa_max)), e.g. r < pi / 6 on the unit sphere) are refused before the budget
is checked.

On SPD matrices with the Bures-Wasserstein metric (the Wasserstein barycenter of centred
Gaussians), whose curvature is bounded only away from singular matrices, the curvature
and injectivity bounds of Theorem 2 are those of the public ball (``laplace.ball_geometry``:
eigenvalues >= (sqrt(lambda_min(center)) - r)^2 there), and the law is restricted to the
ball, hence the scale 2 Delta / epsilon; it is sampled exactly by rejection in the
square-root chart (``laplace.bures_wasserstein``).

Only exact samplers are used: a metric without one (Grassmann, Stiefel, any other), or a
law whose rejection sampler accepts too rarely at the public center (Bures-Wasserstein from
6 x 6 on), is refused before the budget is checked, since a Metropolis-Hastings draw is
epsilon-DP only up to its unproven mixing. The release never gives up sampling (its
acceptance rate depends on the mean).
"""

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp._validation import check_positive_finite
from geomstats_dp.distributions import RiemannianLaplace
from geomstats_dp.distributions.laplace import laplace_scale
from geomstats_dp.distributions.laplace.mean_solver import released_mean_sensitivity
from geomstats_dp.distributions.laplace.rejection import LowAcceptanceError
from geomstats_dp.distributions.laplace.sensitivity import locally_bounded
from geomstats_dp.learning._data import check_values
from geomstats_dp.learning.mechanisms.base import Mechanism
from geomstats_dp.privacy import PureEvent
from geomstats_dp.privacy.stages import discrete_stage

LABEL = "Riemannian Laplace Frechet mean"
INSIDE = 1 - 1e-9  # projected points land just inside the open ball
PILOT_DRAWS, PILOT_SEED = 20, 0  # the public feasibility check of the exact sampler


def project_onto_ball(space, points, center, radius):
    """Move each point at distance >= ``radius`` from ``center`` just inside the ball.

    A per-record map of public settings: replacing one record still changes one record,
    so the guarantee for data in the ball covers any data after projection. A point goes
    to Exp_center(radius (1 - 1e-9) v / |v|), v = Log_center(point), along its geodesic
    from the center; where v is not finite or vanishes (e.g. the antipode of the center on
    the sphere) it goes to the center.

    Parameters
    ----------
    space : Manifold
    points : numpy.ndarray, shape=[n_samples, *space.shape]
    center : array-like, shape=[*space.shape]
    radius : float

    Returns
    -------
    points : numpy.ndarray, shape=[n_samples, *space.shape]
        Every point in the open ball B_radius(center).
    """
    center = to_backend(center)
    distances = to_numpy(space.metric.dist(to_backend(points), center))
    outside = ~(distances < radius * INSIDE)
    if not outside.any():
        return points
    logs = space.metric.log(to_backend(points[outside]), center)
    norms = to_numpy(space.metric.norm(logs, center))
    usable = np.isfinite(norms) & (norms > 0)
    scale = np.where(usable, radius * INSIDE / np.where(usable, norms, 1.0), 0.0)
    logs = to_numpy(logs)
    logs[~np.isfinite(logs)] = 0.0
    shrink = scale.reshape((-1,) + (1,) * len(space.shape))
    projected = points.copy()
    projected[outside] = to_numpy(space.metric.exp(to_backend(logs * shrink), center))
    return projected


def point_distance(metric, point, other):
    """The metric's distance of two points, a float."""
    return float(to_numpy(metric.dist(point, other)))


def check_exact_sampler(space, center, scale, ball):
    """Refuse, from public quantities only, a Laplace law without a working exact sampler.

    Builds the law at the public ``center`` (checks the center and the law's existence,
    e.g. scale < 1/(d-1) on H^d) and draws ``PILOT_DRAWS`` points from it with a fixed
    seed. A Metropolis-Hastings draw only approximates the law, so its pure-DP claim
    would hold only up to the chain's unproven mixing: no such release is offered.

    Raises
    ------
    ValueError
        If the space has no exact sampler, or its rejection sampler accepts fewer than
        1 in 1,000 proposals at the center.
    """
    if not RiemannianLaplace(space, center, scale, **ball).has_exact_sampler:
        raise ValueError(
            f"method='laplace' has no exact sampler of the Laplace law on "
            f"{type(space).__name__} with this metric; Metropolis-Hastings would make the "
            "pure-DP claim hold only up to the chain's mixing, which is not proven. Use a "
            "Gaussian method (method='auto')"
        )
    try:
        law = RiemannianLaplace(space, center, scale, method="exact", **ball)
        law.sample(PILOT_DRAWS, random_state=PILOT_SEED)
    except LowAcceptanceError as error:
        raise ValueError(
            f"method='laplace' refuses this release: {error}. Its exact sampler accepts too "
            "rarely at this scale, and a Metropolis-Hastings draw would make the pure-DP "
            "claim hold only up to the chain's mixing, which is not proven"
        ) from error


@dataclass(frozen=True)
class LaplaceRelease(Mechanism):
    """The Riemannian Laplace release of the Frechet mean (pure epsilon-DP; module doc).

    Every field is public; uniform weights only (the estimator refuses others). The
    sensitivity, the scale and the exact sampler's feasibility are settled when the spec
    is built, before the budget is checked or the data read.

    Parameters
    ----------
    space : Manifold
    n_samples : int
        The public number of records n.
    epsilon : float
        > 0.
    radius : float
        r of the public ball B(center, r) the records are projected onto.
    center : array-like, shape=[*space.shape]
    label : str
        The event's label.
    """

    space: Any
    n_samples: int
    epsilon: float
    radius: float
    center: Any
    label: str = LABEL

    def __post_init__(self):
        radius = check_positive_finite(self.radius, "radius")
        center = to_backend(self.center)
        sensitivity, solver = released_mean_sensitivity(self.space, radius, self.n_samples,
                                                        center)
        # Bures-Wasserstein: curvature bounded on the ball only, so the law is restricted
        # to it, and a truncated law needs 2 Delta / eps
        ball = {"radius": radius, "center": center} if locally_bounded(self.space) else {}
        scale = laplace_scale(sensitivity, self.epsilon, self.space, truncated=bool(ball))
        # Build the law at the center and try its exact sampler there: public checks
        # before the budget is charged or the data read.
        check_exact_sampler(self.space, center, scale, ball)
        for name, value in (("sensitivity", sensitivity), ("solver", solver),
                            ("ball", ball), ("scale", scale)):
            object.__setattr__(self, name, value)

    def events(self):
        return (PureEvent(self.epsilon, sensitivity=self.sensitivity,
                          noise_scale=self.scale, label=self.label),)

    def release(self, points, weights, rng):
        space = self.space
        check_values(space, points, 1e-6)
        center = to_backend(self.center)
        points = project_onto_ball(space, points, center, float(self.radius))
        mean = self.solver.solve(space, to_backend(points), center)
        law = RiemannianLaplace(space, mean, self.scale, method="exact", **self.ball)
        release = discrete_stage(  # an exponential mechanism centred on the mean
            law.sample(random_state=rng, give_up=False), label=self.label,
            epsilon=self.epsilon, sensitivity=self.sensitivity, utility=mean,
            dist=functools.partial(point_distance, space.metric))
        multiplier = self.scale / self.sensitivity
        return {
            "estimate_": release,
            "noise_multiplier_": multiplier,
            "noise_multipliers_": {"laplace": multiplier},
            "n_iter_": 0,
            "n_gradient_evaluations_": 0,
        }
