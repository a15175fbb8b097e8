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
from geomstats_dp.learning._diagnostics import NoiseDominatesWarning
from geomstats_dp.learning.mechanisms.base import ReleaseMechanism
from geomstats_dp.optim import canonical_point, minimize
from geomstats_dp.privacy.quantile import private_quantile, quantile_event


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
        self.early_events = tuple(est._preliminary_events(n_samples))
        if est._auto_clip:
            self.early_events += (quantile_event(
                est.epsilon * est.clip_budget_fraction,
                f"{type(est).__name__}: clip_norm='auto'"),)

    def events(self):
        return self.early_events + self.plan.events

    def release(self, data, weights, rng):
        from geomstats_dp.learning.erm import (
            _gradient_norms,
            _infer_clip_norm,
            _probe_loss,
        )

        est = self.estimator
        n_iter, batch_size, inner_steps, output = self.settings
        loss = est._make_loss()
        init_point = canonical_point(est.space) if est.init_point is None else est.init_point
        data, preliminary = est._prepare(_dask.check_records(loss, data), rng)
        start = to_backend(to_numpy(init_point))
        _probe_loss(loss, data, start)
        release = self.plan
        clip_norm = est.clip_norm if self.fixed_clip else None
        if est._auto_clip:
            norms = _gradient_norms(loss, data, start)
            clip_norm = private_quantile(norms, est.clip_quantile,
                                         self.early_events[-1].epsilon, rng)
        elif clip_norm is None:
            clip_norm = _infer_clip_norm(loss, data, start)
        if not self.fixed_clip:
            release = est._plan(self.n_samples, weights, n_iter, batch_size, inner_steps,
                                clip_norm)
        step_size = est.step_size or est._default_step_size(
            inner_steps, clip_norm, release.strategy.noise_stds)
        n_steps = n_iter * (inner_steps if est._method == "rsvrg" else 1)
        progress = tqdm(total=n_steps, desc=f"{type(est).__name__} ({est._method})",
                        disable=not est.verbose)
        result = minimize(
            loss, data, release.strategy, n_iter, step_size, init_point,
            sample_weight=weights, output=output, random_state=rng,
            noise_sampler=TangentGaussian(est.space, est.noise_method, validate=False),
            callback=lambda step, point: progress.update(), data_checked=True,
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
