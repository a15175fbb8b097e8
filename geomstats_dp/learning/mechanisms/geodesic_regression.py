"""Geodesic regression by DP Riemannian gradient descent on the base point and the
tangent vector (p, v) (Fletcher 2013's model; DP-RGD as in Kulkarni & Soto 2025).

Privacy. Adjacency: replace-one on whole records (x_i, y_i). Each record's gradient of
d(Exp_p(x_i v), y_i)^2 / 2 in (p, v), both tangent at p, is clipped to C in the product
norm sqrt(|g_p|_p^2 + |g_v|_p^2) (a non-finite one counts as zero), so each step's mean of
clipped gradients has L2 sensitivity 2C/n (``optim.clipping.clipped_sum_sensitivity``);
isotropic Gaussian noise of standard deviation sigma in each of the 2 dim coordinates of
T_p M x T_p M is added; the noisy pair is then projected onto the ball of radius C that
holds the clipped mean (post-processing: it never moves the pair further from the mean,
and it bounds each step by eta C). Accountant: the n_iter steps composed exactly in Gaussian DP
(``learning._gradient_plan.plan_gradient_release``, method "rgd"), calibrated before any
data value is read. The start, the number of steps, the schedule and the public range of
x are public.
"""

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import geomstats.backend as gs
import numpy as np

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp._validation import check_finite_array
from geomstats_dp.distributions import TangentGaussian
from geomstats_dp.learning import _defaults
from geomstats_dp.learning._data import check_values
from geomstats_dp.learning._geodesic_gradients import gradients
from geomstats_dp.learning._gradient_plan import plan_gradient_release
from geomstats_dp.learning.mechanisms.base import Mechanism
from geomstats_dp.optim.clipping import (
    clip_factors,
    clipped_sum_sensitivity,
    zero_nonfinite,
)
from geomstats_dp.optim.schedules import step_size_values
from geomstats_dp.privacy.stages import noisy_stage

ATOL = 1e-6  # tolerance of the check that the responses lie on the space
MIN_ITER = 100  # the default number of steps is at least this


def default_n_iter(n_samples, dim, epsilon, delta):
    """max(MIN_ITER, DP-RGD's default for n and the 2 dim coordinates of (p, v))."""
    return max(MIN_ITER, _defaults.default_n_iter("rgd", n_samples, 2 * dim, epsilon,
                                                  delta))


def scale_covariate(x, x_range):
    """(x - centre) / half-width of the public ``x_range``, clipped to [-1, 1]; shape=[k]."""
    low, high = x_range
    centre, half = (low + high) / 2, (high - low) / 2
    return np.clip((np.asarray(x, dtype=float) - centre) / half, -1.0, 1.0)


def _joint_norm(metric, point, statistic):
    """The product norm sqrt(|a|_p^2 + |b|_p^2) of a stacked pair [2, *shape], a float."""
    return float(math.sqrt(float(to_numpy(gs.sum(metric.squared_norm(statistic, point))))))


@dataclass(frozen=True)
class GeodesicRegressionRelease(Mechanism):
    """DP-RGD on (p, v) for the model y = Exp_p(x v) (module docstring).

    Parameters
    ----------
    space : Manifold
        Euclidean, Hypersphere or Hyperboloid (``_geodesic_gradients.curvature_of``).
    curvature : int
        Its sectional curvature K.
    n_samples : int
        n, public.
    epsilon, delta : float
    n_iter : int
    clip_norm : float
        C, in the product norm of (g_p, g_v).
    x_range : tuple of float
        Public (low, high) of the covariate: x is mapped to [-1, 1] by it, and clipped.
    init_point : numpy.ndarray, shape=[*space.shape]
        The public start p_0 (v_0 = 0).
    step_size : float or callable, optional
        Constant or schedule; default ``_defaults.default_step_size`` of DP-RGD in 2 dim.
    noise_method : str
        ``TangentGaussian`` method of the noise.
    label : str
        Prefix of the event labels.
    """

    space: Any
    curvature: int
    n_samples: int
    epsilon: float
    delta: float
    n_iter: int
    clip_norm: float
    x_range: tuple
    init_point: Any
    step_size: Any = None
    noise_method: str = "transport"
    label: str = "geodesic regression"

    @cached_property
    def plan(self):
        """The calibrated DP-RGD plan: its FullBatch strategy and its events."""
        return plan_gradient_release("rgd", self.epsilon, self.delta, self.n_samples,
                                     self.n_iter, self.clip_norm, label=self.label)

    def events(self):
        return self.plan.events

    def release(self, data, weights, rng):
        """Release on ``data = (x, y)``, x shape=[n], y shape=[n, *space.shape]; returns
        ``intercept_`` (p), ``coef_`` (v per unit of x) and the run's attributes."""
        x, y = data
        check_finite_array(x, "X")
        check_values(self.space, y, ATOL, "y")
        x = to_backend(scale_covariate(x, self.x_range))
        y = to_backend(y)
        space, metric = self.space, self.space.metric
        sigma = self.plan.strategy.noise_std
        sensitivity = clipped_sum_sensitivity(self.clip_norm, self.n_samples)
        steps = step_size_values(self.step_size or _defaults.default_step_size(
            "rgd", 1, self.clip_norm, (sigma,), 2 * int(space.dim)), self.n_iter)
        sampler = TangentGaussian(space, self.noise_method, validate=False)
        point = to_backend(self.init_point)
        vec = gs.zeros_like(point)
        for eta in steps.tolist():
            statistic = self._clipped_mean(x, y, point, vec)
            noise = sampler.sample(point, n_samples=2, sigma=sigma, random_state=rng)
            noisy = noisy_stage(statistic, noise, label="full_gradient", law="gaussian",
                                scale=sigma, sensitivity=sensitivity,
                                dim=2 * int(space.dim),
                                norm=lambda diff, at=point: _joint_norm(metric, at, diff))
            noisy = noisy * min(1.0, self.clip_norm / max(
                _joint_norm(metric, point, noisy), 1e-300))  # onto the ball of the mean
            moved = metric.exp(-eta * noisy[0], point)
            vec = space.to_tangent(metric.parallel_transport(
                vec - eta * noisy[1], point, end_point=moved), moved)
            point = moved
        half = (self.x_range[1] - self.x_range[0]) / 2
        return {"intercept_": point, "coef_": vec / half,
                "noise_multiplier_": self.plan.noise_multipliers["full_gradient"],
                "n_iter_": self.n_iter, "clip_norm_": self.clip_norm}

    def _clipped_mean(self, x, y, point, vec):
        """The mean of the per-record (g_p, g_v) clipped jointly to C, shape [2, *shape]."""
        metric = self.space.metric
        grad_point, grad_vec = gradients(self.space, self.curvature, point, vec, x, y)
        norms = gs.sqrt(metric.squared_norm(grad_point, point)
                        + metric.squared_norm(grad_vec, point))
        factors = clip_factors(norms, self.clip_norm) / self.n_samples
        grad_point = zero_nonfinite(grad_point, norms)
        grad_vec = zero_nonfinite(grad_vec, norms)
        return gs.stack([gs.einsum("k,k...->...", factors, grad_point),
                         gs.einsum("k,k...->...", factors, grad_vec)])
