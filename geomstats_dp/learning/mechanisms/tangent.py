"""One-shot and localised tangent releases: noisy full-batch unit steps from a public point.

A tangent step at a point x with clip radius C releases

    x' = Exp_x(-eta (sum_i w_i clip_C(grad f(x; z_i)) + xi)),   xi ~ N_x(0, sigma^2),

eta = 1 / (the loss's smoothness). For the squared distance d(x, z)^2 / 2 (and its Huber
version with radius >= C) this is Exp_x(mean_i clip_C(Log_x(z_i)) + noise): the clipped
tangent mean of the samples at x, pushed back to the space.

- ``TangentRelease`` (method "tangent"): one step at the public start x0 (``init_point``,
  the public ``center`` of a Frechet mean, or the canonical point of the space).
- ``TwoStageRelease`` (method "two_stage", localised): a coarse tangent step at x0, a
  private clip radius C2 for the distances to the coarse point (exponential-mechanism
  quantile, ``privacy.quantile``), then unit tangent steps started at the coarse point
  with clip radius C2: first travel steps with the coarse step's small budget share, so
  that a clip radius far below the data's distance to x0 still reaches them, then steps
  whose shares grow fourfold, the last taking most of the budget. Once a step has
  settled, the later steps with no less noise are skipped (``skipped``). The release is
  the noise-weighted mean of the step points from the first settled step
  (``settled_mean``, post-processing): the last point when no earlier step has settled.

Privacy. Adjacency: replace-one. Sensitivity of a step's query: 2 C max_i w_i (2C/n for
uniform weights; a record's clipped gradient moves by at most 2C), with C the step's
clip radius. Accountant: each step is a full-batch Gaussian release with noise multiplier
z_k, composed exactly as Gaussian DP (mu^2 = sum_k 1/z_k^2, ``privacy.accountant``);
the quantiles (``clip_norm="auto"``, the localisation radius) are pure-DP events composed
with it by basic composition. The multipliers are calibrated (``calibrate_gaussian``)
from epsilon, delta and the public step shares before any data value is read.

Skipped steps. Whether a step runs is decided from the released step points and the
public noise scales (given the released clip radius) only: post-processing. Under
adaptive composition a skipped step is a query that returns nothing whatever the data,
so charging every step's event, skipped or not, keeps the guarantee; the ledger
over-charges by the skipped steps' shares. ``n_iter_``, ``n_gradient_evaluations_`` and
the time of a fit are then functions of the release (``released_outputs``), and the
events of the steps that may be skipped are declared (``skippable_events``).
"""

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar

import geomstats.backend as gs
import numpy as np

from geomstats_dp import _dask
from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.distributions import TangentGaussian
from geomstats_dp.learning._defaults import privacy_horizon
from geomstats_dp.learning._diagnostics import (
    NoiseDominatesWarning,
    ScheduleStopsShortWarning,
    noise_ratio,
    reach,
)
from geomstats_dp.learning.mechanisms.base import Mechanism
from geomstats_dp.learning.mechanisms.clip_bound import (
    AutoClip,
    clip_events,
    resolve_clip_norm,
)
from geomstats_dp.learning.mechanisms.loss_checks import probe_loss
from geomstats_dp.optim import SquaredDistanceLoss
from geomstats_dp.optim.affine_log import known_factors
from geomstats_dp.optim.clipping import clipped_sum_sensitivity
from geomstats_dp.optim.geodesics import geodesics_for
from geomstats_dp.optim.karcher import first_settled, karcher_mean
from geomstats_dp.optim.oracle import GradientOracle
from geomstats_dp.optim.strategies import weight_factor
from geomstats_dp.optim.weights import normalize_sample_weight
from geomstats_dp.privacy import GaussianEvent, share_noise_multipliers
from geomstats_dp.privacy.quantile import private_quantile, quantile_event

LOCALISE_FACTOR = 1.25  # C2 = min(C, factor x the released quantile)
LOCALISE_EPSILON_FRACTION = 0.05  # of epsilon, spent on the quantile
LOCALISE_GRID = np.geomspace(1e-3, 1.0, 37)  # candidates for C2 / C: 12 a decade
STEP_SHARE_RATIO = 4.0  # each step gets this many times the previous step's mu^2
REFINE_HORIZON_RATIO = 4.0  # refinement steps: privacy horizon / this, at least one
REACH_HORIZON_RATIO = 2.0  # 1 + horizon / this unit steps in all (``travel_steps``)
SETTLED_MEAN_TOL = 1e-13  # the settled mean's Karcher steps stop at rounding level


def check_point_loss(loss, method):
    """Raise TypeError unless the loss's samples are points of the space."""
    if not isinstance(loss, SquaredDistanceLoss):
        raise TypeError(
            f"method={method!r} releases a tangent mean of the samples: it needs a loss "
            "whose samples are points of the space (SquaredDistanceLoss, "
            f"HuberDistanceLoss), got {type(loss).__name__}; use method='rgd'"
        )


def localise_quantile(n_samples, dim, multiplier):
    """The quantile of the distances to the coarse point that sets C2 (public).

    Clipping k records at radius c biases the mean by at most about k c / n, while the
    step's noise has norm about sqrt(d) z 2c / n: clip the sqrt(d) z farthest records,
    q = 1 - sqrt(d) z / n, kept in [1/2, 1 - 1e-9] (with little noise nothing is clipped,
    so the release converges to the minimiser as epsilon grows).
    """
    return min(max(1 - math.sqrt(dim) * multiplier / n_samples, 0.5), 1 - 1e-9)


def settled_mean(space, points, noise_norms):
    """The Karcher mean of the step points from the first settled step, weights 1 / nu_k^2.

    Step k >= 1 has settled when it moved the previous point by at most
    sqrt(nu_{k-1}^2 + nu_k^2), the expected norm of the difference of the two steps'
    noises (nu_k: the norm of step k's noise in the tangent space). From there on, each
    step point is the localised tangent mean plus that step's own noise, so the
    inverse-variance weighted mean has the noise of the Gaussian budget of all the steps
    it averages; the earlier points carry the start's bias and are left out. A function
    of the released points and of public or released noise scales (post-processing).
    Its measurements against the last point and looser rules are on the baselines page
    (docs/benchmarks/baselines.md, "Which method when").

    Parameters
    ----------
    space : Manifold
    points : list of array-like, each shape=[*space.shape]
        The step points x_0, ..., x_{K-1}.
    noise_norms : list of float
        nu_k, the expected norm of step k's displacement noise.

    Returns
    -------
    point : array-like, shape=[*space.shape]
    """
    nus = np.asarray(noise_norms, dtype=float)
    if len(points) == 1:
        return points[-1]
    first = first_settled(space, points, np.sqrt(nus[:-1] ** 2 + nus[1:] ** 2))
    if first == len(points) - 1:
        return points[-1]
    weights = nus[first:] ** -2
    return karcher_mean(space, gs.stack(points[first:]), to_backend(weights / weights.sum()),
                        points[-1], tol=SETTLED_MEAN_TOL)


def has_settled(space, points, noise_norms):
    """Whether the last step moved the previous point by at most
    sqrt(nu_{k-1}^2 + nu_k^2) (``settled_mean``'s criterion; False for a single point).
    A function of released points and public or released noise scales."""
    if len(points) < 2:
        return False
    bound = math.hypot(noise_norms[-2], noise_norms[-1])
    return float(to_numpy(space.metric.dist(points[-2], points[-1]))) <= bound


def skipped(multipliers, settled, step):
    """Whether ``step`` is skipped: a step after the first settled one whose noise
    multiplier is at least that step's (public; ``settled``: the settled step's index or
    None).

    From the settled step on, a step point is the localised mean plus that step's noise:
    a step with no less noise than the settled point's cannot bring the chain closer to
    the minimiser, it would only add a term of the settled mean's average.
    """
    return settled is not None and multipliers[step] >= multipliers[settled]


def skippable_steps(multipliers):
    """The steps ``skipped`` may leave out in some run: from step 2 on, those whose
    multiplier is at least the previous step's (the multipliers never grow)."""
    return frozenset(step for step in range(2, len(multipliers))
                     if multipliers[step] >= multipliers[step - 1])


def travel_steps(horizon, n_refine):
    """Unit steps with the coarse step's budget share inserted before the ``n_refine``
    growing-share refinements, so that there are 1 + ceil(horizon / 2) unit steps in all.

    A unit step moves at most its clip radius C, so when C is much smaller than the
    distance of the data to the start only the number of steps lets the release travel:
    with these it reaches as far as the default DP-RGD (ceil(horizon) steps of 0.5 C) plus
    the coarse step. Each travel step takes the coarse step's share of mu^2, so the last
    step's noise grows by a few percent. Measured on docs/benchmarks/baselines.md
    ("Travel steps when the clip norm binds").
    """
    return max(0, 1 + math.ceil(horizon / REACH_HORIZON_RATIO) - (1 + n_refine))


def step_shares(n_steps, n_travel=0):
    """Shares of mu^2 of ``n_travel`` steps with the first step's share, then ``n_steps``
    steps growing by STEP_SHARE_RATIO, summing to 1; shape=[n_travel + n_steps]."""
    shares = np.concatenate([np.ones(n_travel), STEP_SHARE_RATIO ** np.arange(n_steps)])
    return shares / shares.sum()


@dataclass(frozen=True)
class PointMeanFields(Mechanism):
    """The public fields every release of a mean of points starts with (in this order):
    ``space, loss, n_samples, epsilon, delta, steps_epsilon, clip_norm, init_point,
    weights``; the subclasses document them and add their own."""

    space: Any
    loss: Any
    n_samples: int
    epsilon: float
    delta: float
    steps_epsilon: float
    clip_norm: Any = None
    init_point: Any = None
    weights: Any = None


@dataclass(frozen=True)
class TangentSteps(PointMeanFields):
    """Base of the tangent releases: unit steps, step k with share ``shares[k]`` of the
    Gaussian budget (module docstring). Every field is public.

    Parameters
    ----------
    space : Manifold
    loss : SquaredDistanceLoss
        A loss whose samples are points of the space (or ``HuberDistanceLoss``).
    n_samples : int
        The public number of records n.
    epsilon, delta : float
        The whole release's (the horizon of the step count and the localisation share
        are read from them).
    steps_epsilon : float
        Epsilon of the Gaussian steps and the localisation quantile (``epsilon`` less the
        clip norm's share).
    clip_norm : float, AutoClip or None
        C of the first step (``mechanisms.clip_bound``).
    init_point : array-like, shape=[*space.shape]
        The public start x0, already checked.
    weights : numpy.ndarray, shape=[n_samples], optional
        Public normalised weights (None: uniform).
    noise_method : str
        ``TangentGaussian`` method of the noise.
    smoothness : float
        The step is 1 / smoothness.
    label : str
        Prefix of the event labels.
    horizon_scale : float
        The privacy horizon that sets the number of travel steps is multiplied by it
        (public; ``PrivateERM``: ``_defaults.convergence_scale``).
    travel_radius : float, optional
        The public distance the minimiser may lie from x0, read by the
        ``ScheduleStopsShortWarning`` diagnostic; default the clip norm.
    """

    method: ClassVar[str] = ""
    localised: ClassVar[bool] = False
    reads_dask: ClassVar[bool] = True

    noise_method: str = "transport"
    smoothness: float = 1.0
    label: str = ""
    horizon_scale: float = 1.0
    travel_radius: Any = None

    def __post_init__(self):
        check_point_loss(self.loss, self.method)

    @property
    def dim(self):
        return int(self.space.dim)

    @property
    def factor(self):
        """The public weight factor n max_i w_i (1 for uniform weights)."""
        return weight_factor(self.weights, self.n_samples)

    @cached_property
    def early_events(self):
        """The clip norm's quantile event and (localised) the localisation radius's."""
        events = clip_events(self.clip_norm, self.label)
        if self.localised:
            events += (quantile_event(self.epsilon * LOCALISE_EPSILON_FRACTION,
                                      f"{self.label} two_stage: localisation radius"),)
        return events

    @cached_property
    def multipliers(self):
        """The noise multiplier z_k of each step, calibrated from public quantities."""
        epsilon = self.steps_epsilon
        if self.localised:
            epsilon -= self.epsilon * LOCALISE_EPSILON_FRACTION
        count, travel = self.n_steps(self.n_samples, self.epsilon, self.delta)
        return share_noise_multipliers(epsilon, self.delta, step_shares(count, travel))

    @cached_property
    def noise_ratio(self):
        """The last step's noise over its clip radius (public: it does not depend on C)."""
        last_sigma = clipped_sum_sensitivity(1.0, self.n_samples, self.factor,
                                             multiplier=self.multipliers[-1])
        return noise_ratio(np.ones(1), (last_sigma,), self.dim, 1.0, "last")

    def n_steps(self, n_samples, epsilon, delta):
        """Numbers of growing-share and of travel steps, from public quantities."""
        return 1, 0

    def skippable_events(self):
        return frozenset(map(self._label, skippable_steps(self.multipliers)))

    def _label(self, step):
        return f"{self.label} {self.method}: step {step}"

    def _sensitivity(self, clip_norm):
        return clipped_sum_sensitivity(clip_norm, self.n_samples, self.factor)

    def events(self):
        fixed = not (self.clip_norm is None or isinstance(self.clip_norm, AutoClip))
        events = []
        for step, z in enumerate(self.multipliers):
            if step == 0 and fixed:
                sensitivity = self._sensitivity(self.clip_norm)
                events.append(GaussianEvent.from_noise(z * sensitivity, sensitivity,
                                                       label=self._label(step)))
            else:  # clip radius released privately: only the multiplier is public
                events.append(GaussianEvent(z, label=self._label(step)))
        return self.early_events + tuple(events)

    def release(self, data, weights, rng):
        NoiseDominatesWarning.warn_if(self.noise_ratio)
        space, loss = self.space, self.loss
        data = _dask.check_records(loss, data)
        point = to_backend(to_numpy(self.init_point))
        probe_loss(loss, data, point)
        clip_norm = resolve_clip_norm(self.clip_norm, loss, data, point, rng, self.label)
        oracle = GradientOracle(
            loss, data, to_backend(normalize_sample_weight(weights, len(data))),
            TangentGaussian(space, self.noise_method, validate=False), rng)
        step_size = 1.0 / self.smoothness
        ScheduleStopsShortWarning.warn_if(reach(
            np.full(len(self.multipliers), step_size), self.travel_radius or clip_norm,
            getattr(loss, "radius", None)))

        def localise(norms):  # a private radius around the coarse point
            # a record beyond C counts as at C, so that the grid's top (C) wins when most
            # records lie beyond it (otherwise no candidate counts them and the choice is
            # uniform on the grid)
            quantile = localise_quantile(self.n_samples, self.dim, self.multipliers[-1])
            event = self.early_events[-1]
            radius = private_quantile(np.minimum(norms, clip_norm), quantile, event.epsilon,
                                      rng, grid=clip_norm * LOCALISE_GRID, label=event.label)
            return min(clip_norm, LOCALISE_FACTOR * radius)

        geodesics = geodesics_for(space)
        clip = clip_norm
        points, noise_norms, settled = [], [], None
        with known_factors(geodesics.known_factor):  # SPD: each step point's factor, reused
            for step, z in enumerate(self.multipliers):
                if skipped(self.multipliers, settled, step):
                    continue
                if step == 1:  # the coarse point's distances, then the sum, in one pass
                    clip, gradient = oracle.norms_then_clipped_sum(point, localise)
                else:
                    gradient = oracle.clipped_sum(point, clip)
                sensitivity = self._sensitivity(clip)
                sigma = clipped_sum_sensitivity(clip, self.n_samples, self.factor,
                                                multiplier=z)
                noisy = oracle.add_noise(gradient, point, sigma, label=self._label(step),
                                         sensitivity=sensitivity)
                point = geodesics.exp(-step_size * noisy, point)
                points.append(point)
                noise_norms.append(step_size * sigma * math.sqrt(self.dim))
                if settled is None and has_settled(space, points, noise_norms):
                    settled = step
        return {
            "estimate_": settled_mean(space, points, noise_norms),
            "noise_multiplier_": self.multipliers[-1],
            "noise_multipliers_": {f"step_{k}": z for k, z in enumerate(self.multipliers)},
            "n_iter_": len(points),
            "n_gradient_evaluations_": oracle.n_gradient_evaluations,
            "clip_norm_": clip_norm,
            "noise_ratio_": self.noise_ratio,
        }


class TangentRelease(TangentSteps):
    """One-shot tangent release at the public start (method "tangent"; module docstring).

    Adjacency replace-one; sensitivity 2 C max_i w_i (2C/n); one full-batch Gaussian
    release, z = calibrate_gaussian(epsilon, delta, 1). Exact for the squared distance on
    flat metrics; on curved ones Exp_x0(mean Log_x0(z_i)) differs from the Frechet mean
    by a curvature bias that grows with the distance of the data to x0.
    """

    method = "tangent"


class TwoStageRelease(TangentSteps):
    """Localised release (method "two_stage"; module docstring).

    A coarse tangent step at x0 (clip C), a quantile release of the distances to the
    coarse point spending ``LOCALISE_EPSILON_FRACTION`` of epsilon (clip C2 = min(C,
    ``LOCALISE_FACTOR`` x that quantile), the quantile
    ``localise_quantile``), then unit steps with clip C2 (horizon = ``privacy_horizon``,
    public): ``travel_steps`` with the coarse step's share of mu^2, then
    max(1, ceil(horizon / 4)) steps whose shares grow fourfold from step to step (at
    least 1 + ceil(horizon / 2) unit steps in all); the release is
    ``settled_mean`` of the step points (post-processing). Adjacency replace-one;
    sensitivities 2 C max_i w_i and 2 C2 max_i w_i; Gaussian DP composition of the steps
    plus the pure-DP quantile(s) by basic composition.
    """

    method = "two_stage"
    localised = True
    released_outputs = frozenset({"n_iter_", "n_gradient_evaluations_"})

    def n_steps(self, n_samples, epsilon, delta):
        horizon = privacy_horizon(n_samples, self.dim, epsilon, delta)
        n_refine = max(1, math.ceil(horizon / REFINE_HORIZON_RATIO))
        return 1 + n_refine, travel_steps(horizon * self.horizon_scale, n_refine)
