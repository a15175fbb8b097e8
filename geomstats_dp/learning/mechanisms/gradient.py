"""DP Riemannian gradient descent (rgd), stochastic (rsgd) and SVRG (rsvrg) releases.

Adjacency: replace-one (add/remove for Poisson batches). Each per-sample Riemannian
gradient is clipped to C in the metric's norm; the noisy queries have L2 sensitivity 2C/n
(rgd), 2C/b (rsgd without replacement), C/b (Poisson) and 2C/n and 4 C1 (rsvrg: Utpala et
al. 2023) (``mechanisms.clip_bound``). Accountant: autodp's exact Gaussian-DP
composition (rgd) or amplification by sampling (rsgd, rsvrg), through
``learning._gradient_plan``. An ``AutoClip`` clip norm adds a pure-DP quantile release
(``privacy.quantile``) as its own event.

On a Dask array the value checks and every step's clipped sum run on its workers, chunk
by chunk (``geomstats_dp._dask``: the same query and events; the noise is drawn here).
"""

from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar

from tqdm import tqdm

from geomstats_dp import _dask
from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.distributions import TangentGaussian
from geomstats_dp.learning import _defaults
from geomstats_dp.learning._diagnostics import (
    NoiseDominatesWarning,
    ScheduleStopsShortWarning,
    noise_ratio,
    reach,
)
from geomstats_dp.learning._gradient_plan import (
    FAMILIES,
    GRADIENT_METHODS,
    plan_gradient_release,
)
from geomstats_dp.learning.mechanisms.base import Mechanism
from geomstats_dp.learning.mechanisms.clip_bound import (
    AutoClip,
    clip_events,
    resolve_clip_norm,
)
from geomstats_dp.learning.mechanisms.loss_checks import probe_loss
from geomstats_dp.optim import SquaredDistanceLoss, minimize
from geomstats_dp.optim.initial_point import check_init_point
from geomstats_dp.optim.schedules import step_size_values


@dataclass(frozen=True)
class Preliminary:
    """Releases made from the data before a gradient run, and the data it then reads.

    Attributes
    ----------
    events : tuple of PrivacyEvent
        Their calibrated events (public quantities only), charged before the run's.
    prepare : callable
        ``prepare(data, rng) -> (data, fitted, context)``: makes the releases (each
        through ``privacy.stages``) once the budget is reserved and the values checked;
        returns the data the run reads, the released fitted attributes and a context
        passed to the run's ``step_rule`` and ``ratio_rule``.
    """

    events: tuple
    prepare: Any


@dataclass(frozen=True)
class GradientRelease(Mechanism):
    """A loss minimised by DP-RGD, DP-RSGD or DP-RSVRG: the spec of one run.

    Every field is public. The noise multipliers are calibrated from them before any
    data value is read (``plan``); with a private clip norm (``AutoClip``) the noise is
    rescaled to the released C, the multipliers unchanged.

    Parameters
    ----------
    space : Manifold
        A geomstats space with a metric; the estimate lies on it.
    loss : PerSampleLoss
    n_samples : int
        The public number of records n (the declared size N under Poisson sampling).
    epsilon, delta : float
        The target of the run's Gaussian queries (after the shares of ``clip_norm`` and
        of ``preliminary``, which charge their own events).
    method : {"rgd", "rsgd", "rsvrg"}
    n_iter : int, optional
        Steps (rgd, rsgd) or epochs (rsvrg); default ``_defaults.default_n_iter``.
    clip_norm : float, AutoClip or None
        C: public; a private quantile at the start; or None, read from the data (not
        private, with a PrivacyLeakWarning).
    init_point : array-like, shape=[*space.shape], optional
        The public start, already checked; default the canonical point of the space.
    step_size : float or callable, optional
        Constant or schedule ``t -> eta_t``; default ``step_rule``.
    batch_size, inner_steps : int, optional
        rsgd batch size (expected size for Poisson) and rsvrg inner steps; defaults
        ``_defaults.default_batch_size`` and ``default_inner_steps`` of n.
    clip_norm_single : float, optional
        rsvrg: C1; default C times ``_defaults.SVRG_SINGLE_CLIP_RATIO``.
    sampling : {"without_replacement", "poisson"}
        rsgd batches.
    output : {"last", "random", "average", "weighted_average"}, optional
        Default ``_defaults.default_output(method)``.
    weights : numpy.ndarray, shape=[n_samples], optional
        Public normalised weights (None: uniform).
    noise_method : str
        ``TangentGaussian`` method of the noise.
    smoothness : float
        The loss's curvature scale against d^2 / 2; the default steps divide by it.
    label : str
        Prefix of the event labels and of the progress bar.
    preliminary : Preliminary, optional
        Releases made before the run (their events come first).
    step_rule : callable, optional
        ``step_rule(inner_steps, clip_norm, noise_stds, context)`` -> schedule, the
        default step when ``step_size`` is None; default ``_defaults.default_step_size``.
    ratio_rule : callable, optional
        ``ratio_rule(step_sizes, noise_stds, clip_norm, output, context)`` -> the public
        noise ratio; default ``_diagnostics.noise_ratio``.
    verbose : bool
        Show a progress bar.
    travel_radius : float, optional
        The public distance the minimiser may lie from the start, read by the
        ``ScheduleStopsShortWarning`` diagnostic of a point loss; default the clip norm.
    """

    reads_dask: ClassVar[bool] = True

    space: Any
    loss: Any
    n_samples: int
    epsilon: float
    delta: float
    method: str = "rgd"
    n_iter: Any = None
    clip_norm: Any = None
    init_point: Any = None
    step_size: Any = None
    batch_size: Any = None
    inner_steps: Any = None
    clip_norm_single: Any = None
    sampling: str = "without_replacement"
    output: Any = None
    weights: Any = None
    noise_method: str = "transport"
    smoothness: float = 1.0
    label: str = ""
    preliminary: Any = None
    step_rule: Any = None
    ratio_rule: Any = None
    verbose: bool = False
    travel_radius: Any = None

    def __post_init__(self):
        if self.method not in GRADIENT_METHODS:
            raise ValueError(f"method must be one of {GRADIENT_METHODS}, got {self.method!r}")
        if self.family.batched and self.resolved_batch_size > self.n_samples:
            raise ValueError(f"batch_size must be <= the number of samples "
                             f"{self.n_samples}, got {self.resolved_batch_size}")

    # -- public quantities, resolved -----------------------------------------------------

    @property
    def family(self):
        """The ``GradientFamily`` of ``method``."""
        return FAMILIES[self.method]

    @property
    def poisson(self):
        """Whether the batches are Poisson (add/remove adjacency)."""
        return self.family.batched and self.sampling == "poisson"

    @property
    def dim(self):
        return int(self.space.dim)

    @property
    def resolved_batch_size(self):
        return self.batch_size or _defaults.default_batch_size(self.n_samples)

    @property
    def resolved_inner_steps(self):
        return self.inner_steps or _defaults.default_inner_steps(self.n_samples)

    @property
    def resolved_n_iter(self):
        return self.n_iter or _defaults.default_n_iter(
            self.method, self.n_samples, self.dim, self.epsilon, self.delta)

    @property
    def resolved_output(self):
        return self.output or _defaults.default_output(self.method)

    @property
    def fixed_clip(self):
        """Whether C is a public number (the plan is then final before the data)."""
        return not (self.clip_norm is None or isinstance(self.clip_norm, AutoClip))

    def plan_for(self, clip_norm):
        """The calibrated strategy and events of the run with clip bound ``clip_norm``."""
        clip_norm_single = self.clip_norm_single or (
            _defaults.SVRG_SINGLE_CLIP_RATIO * clip_norm)
        batch_size = self.resolved_batch_size
        return plan_gradient_release(
            self.method, self.epsilon, self.delta, self.n_samples, self.resolved_n_iter,
            clip_norm, batch_size, self.resolved_inner_steps, clip_norm_single,
            self.sampling, label=self.label, weights=self.weights,
            sampling_rate=batch_size / self.n_samples if self.poisson else None)

    @cached_property
    def plan(self):
        """The plan at the public C (at C = 1 when C is released: the multipliers do not
        depend on C)."""
        return self.plan_for(self.clip_norm if self.fixed_clip else 1.0)

    @cached_property
    def early_events(self):
        """The preliminary releases' events, then the clip norm's."""
        preliminary = tuple(self.preliminary.events) if self.preliminary else ()
        return preliminary + clip_events(self.clip_norm, self.label)

    def events(self):
        return self.early_events + self.plan.events

    # -- the release ---------------------------------------------------------------------

    def _default_step_size(self, inner_steps, clip_norm, noise_stds, context):
        if self.step_rule is not None:
            return self.step_rule(inner_steps, clip_norm, noise_stds, context)
        return _defaults.default_step_size(self.method, inner_steps, clip_norm, noise_stds,
                                           self.dim, self.smoothness)

    def _noise_ratio(self, step_sizes, noise_stds, clip_norm, output, context):
        if self.ratio_rule is not None:
            return self.ratio_rule(step_sizes, noise_stds, clip_norm, output, context)
        return noise_ratio(step_sizes, noise_stds, self.dim, clip_norm, output)

    def release(self, data, weights, rng):
        loss, inner_steps = self.loss, self.resolved_inner_steps
        n_iter, output = self.resolved_n_iter, self.resolved_output
        init_point = check_init_point(self.space, None) if self.init_point is None \
            else self.init_point
        data = _dask.check_records(loss, data)
        preliminary, context = {}, None
        if self.preliminary is not None:
            data, preliminary, context = self.preliminary.prepare(data, rng)
        start = to_backend(to_numpy(init_point))
        probe_loss(loss, data, start)
        clip_norm = resolve_clip_norm(self.clip_norm, loss, data, start, rng, self.label)
        release = self.plan if self.fixed_clip else self.plan_for(clip_norm)
        noise_stds = release.strategy.noise_stds
        step_size = self.step_size or self._default_step_size(
            inner_steps, clip_norm, noise_stds, context)
        n_steps = self.family.n_manifold_steps(n_iter, inner_steps)
        if isinstance(loss, SquaredDistanceLoss):  # the minimiser within C of the start
            ScheduleStopsShortWarning.warn_if(reach(
                step_size_values(step_size, n_steps), self.travel_radius or clip_norm,
                getattr(loss, "radius", None)))
        progress = tqdm(total=n_steps, desc=f"{self.label} ({self.method})",
                        disable=not self.verbose)
        result = minimize(
            loss, data, release.strategy, n_iter, step_size, init_point,
            sample_weight=weights, output=output, random_state=rng,
            noise_sampler=TangentGaussian(self.space, self.noise_method, validate=False),
            callback=(lambda step, point: progress.update()) if self.verbose else None,
            data_checked=True,  # no callback: SPD(2) runs can take ``optim.compiled_blocks``
        )
        progress.close()
        ratio = self._noise_ratio(result.step_sizes, noise_stds, clip_norm, output, context)
        NoiseDominatesWarning.warn_if(ratio)
        multipliers = release.noise_multipliers
        return {
            "estimate_": result.point,
            "noise_multiplier_": list(multipliers.values())[-1],
            "noise_multipliers_": multipliers,
            "n_iter_": result.n_steps,
            "n_gradient_evaluations_": None if self.poisson else result.n_gradient_evaluations,
            "clip_norm_": clip_norm,
            "events_": self.early_events + release.events,
            "noise_ratio_": ratio,
            **preliminary,
        }
