"""DP Riemannian gradient descent (rgd), stochastic (rsgd) and SVRG (rsvrg) releases.

Adjacency: replace-one (add/remove for Poisson batches). Each per-sample Riemannian
gradient is clipped to C in the metric's norm; the noisy queries have L2 sensitivity 2C/n
(rgd), 2C/b (rsgd without replacement), C/b (Poisson) and 2C/n and 4 C1 (rsvrg: Utpala et
al. 2023). Accountant: autodp's exact Gaussian-DP composition (rgd) or amplification by
sampling (rsgd, rsvrg), through ``learning._gradient_plan``. ``clip_norm="auto"`` adds a
pure-DP quantile release (``privacy.quantile``) as its own event.

On a Dask array the value checks and every step's clipped sum run on its workers, chunk
by chunk (``geomstats_dp._dask``: the same query and events; the noise is drawn here).
"""

from tqdm import tqdm

from geomstats_dp import _dask
from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.distributions import TangentGaussian
from geomstats_dp.learning._diagnostics import (
    NoiseDominatesWarning,
    ScheduleStopsShortWarning,
    reach,
)
from geomstats_dp.learning.mechanisms.base import ReleaseMechanism
from geomstats_dp.learning.mechanisms.loss_checks import infer_clip_norm, probe_loss
from geomstats_dp.optim import SquaredDistanceLoss, minimize
from geomstats_dp.optim.oracle import gradient_norms
from geomstats_dp.optim.schedules import step_size_values
from geomstats_dp.privacy.quantile import private_quantile, quantile_event


def auto_clip_event(estimator):
    """The quantile release of ``clip_norm="auto"`` (a pure-DP event), or ()."""
    if not estimator._auto_clip:
        return ()
    return (quantile_event(estimator.epsilon * estimator.clip_budget_fraction,
                           f"{type(estimator).__name__}: clip_norm='auto'"),)


def resolve_clip_norm(estimator, loss, data, start, rng, early_events):
    """The clip norm of the first step at ``start``: the public ``clip_norm``, its private
    quantile (``clip_norm="auto"``, whose event is the last of ``early_events``), or the
    largest gradient norm (None: not private, with a PrivacyLeakWarning)."""

    if estimator._auto_clip:
        norms = gradient_norms(loss, data, start)
        event = early_events[-1]
        return private_quantile(norms, estimator.clip_quantile, event.epsilon, rng,
                                label=event.label)
    if estimator.clip_norm is None:
        return infer_clip_norm(loss, data, start)
    return estimator.clip_norm


class GradientRelease(ReleaseMechanism):
    """The estimator's loss minimised by DP-RGD, DP-RSGD or DP-RSVRG (``method``).

    Reads the estimator's hooks: ``_make_loss``, ``_settings``, ``_plan``,
    ``_preliminary_events``, ``_prepare``, ``_default_step_size``,
    ``_noise_ratio`` (see ``PrivateERM``).
    """

    reads_dask = True

    def __init__(self, estimator, n_samples, weights=None):
        super().__init__(estimator, n_samples, weights)
        est = estimator
        self.settings = est._settings(n_samples)
        n_iter, batch_size, inner_steps, _ = self.settings
        self.fixed_clip = est.clip_norm is not None and not est._auto_clip
        # the noise multipliers do not depend on C: calibrate before any value is read
        self.plan = est._plan(n_samples, weights, n_iter, batch_size, inner_steps,
                              est.clip_norm if self.fixed_clip else 1.0)
        self.early_events = tuple(est._preliminary_events(n_samples)) + auto_clip_event(est)

    def events(self):
        return self.early_events + self.plan.events

    def release(self, data, weights, rng):
        est = self.estimator
        n_iter, batch_size, inner_steps, output = self.settings
        loss = est._make_loss()
        init_point = est._start_point()
        data, preliminary = est._prepare(_dask.check_records(loss, data), rng)
        start = to_backend(to_numpy(init_point))
        probe_loss(loss, data, start)
        release = self.plan
        clip_norm = resolve_clip_norm(est, loss, data, start, rng, self.early_events)
        if not self.fixed_clip:
            release = est._plan(self.n_samples, weights, n_iter, batch_size, inner_steps,
                                clip_norm)
        step_size = est.step_size or est._default_step_size(
            inner_steps, clip_norm, release.strategy.noise_stds)
        n_steps = n_iter * (inner_steps if est._method == "rsvrg" else 1)
        if isinstance(loss, SquaredDistanceLoss):  # the minimiser within C of the start
            ScheduleStopsShortWarning.warn_if(reach(
                step_size_values(step_size, n_steps), clip_norm,
                getattr(loss, "radius", None)))
        progress = tqdm(total=n_steps, desc=f"{type(est).__name__} ({est._method})",
                        disable=not est.verbose)
        result = minimize(
            loss, data, release.strategy, n_iter, step_size, init_point,
            sample_weight=weights, output=output, random_state=rng,
            noise_sampler=TangentGaussian(est.space, est.noise_method, validate=False),
            callback=(lambda step, point: progress.update()) if est.verbose else None,
            data_checked=True,  # no callback: SPD(2) runs can take ``optim.compiled_blocks``
        )
        progress.close()
        ratio = est._noise_ratio(result.step_sizes, release.strategy.noise_stds, clip_norm,
                                 output)
        NoiseDominatesWarning.warn_if(ratio)
        multipliers = release.noise_multipliers
        return {
            "estimate_": result.point,
            "noise_multiplier_": list(multipliers.values())[-1],
            "noise_multipliers_": multipliers,
            "n_iter_": result.n_steps,
            "n_gradient_evaluations_": (
                None if est._poisson else result.n_gradient_evaluations
            ),
            "clip_norm_": clip_norm,
            "events_": self.early_events + release.events,
            "noise_ratio_": ratio,
            **preliminary,
        }
