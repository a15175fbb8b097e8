"""Noisy clipped tangent-mean steps: the private base point of the manifold estimators.

A step at x releases x' = Exp_x(mean_i clip_C(Log_x(z_i)) + xi), xi ~ N_x(0, sigma^2)
(the tangent release of ``learning.mechanisms.tangent`` with a fixed public schedule).
Adjacency replace-one; sensitivity of a step's query 2C/n; each step is one full-batch
Gaussian release, charged by ``mean_steps_event`` (n_steps releases of one multiplier,
composed exactly in Gaussian DP with the rest of the fit).
"""

import geomstats.backend as gs

from geomstats_dp.distributions import TangentGaussian
from geomstats_dp.optim import SquaredDistanceLoss
from geomstats_dp.optim.clipping import clipped_sum_sensitivity
from geomstats_dp.optim.oracle import GradientOracle
from geomstats_dp.privacy import GaussianEvent


def mean_step_sensitivity(clip_norm, n_samples):
    """2C/n: the most one replaced record moves a mean of n tangent vectors clipped to C."""
    return clipped_sum_sensitivity(clip_norm, n_samples)


def mean_steps_event(multiplier, clip_norm, n_samples, n_steps, label):
    """The GaussianEvent of ``n_steps`` tangent-mean steps with noise multiplier z."""
    sensitivity = mean_step_sensitivity(clip_norm, n_samples)
    return GaussianEvent.from_noise(multiplier * sensitivity, sensitivity, n_steps=n_steps,
                                    label=label)


def noisy_mean_steps(space, points, start, event, clip_norm, rng, noise_method):
    """Run the ``event.n_steps`` steps of ``event`` from ``start``; returns the last point.

    Parameters
    ----------
    space : Manifold
    points : array-like, shape=[n_samples, *space.shape]
        Checked points of the space (backend array).
    start : array-like, shape=[*space.shape]
        Public start.
    event : GaussianEvent
        From ``mean_steps_event`` (its label, noise and sensitivity name the stages).
    clip_norm : float
    rng : numpy.random.Generator
    noise_method : str
        ``TangentGaussian`` method.

    Returns
    -------
    point : array-like, shape=[*space.shape]
    """
    n_samples = int(points.shape[0])
    oracle = GradientOracle(SquaredDistanceLoss(space), points, gs.ones(n_samples) / n_samples,
                            TangentGaussian(space, noise_method, validate=False), rng)
    point = start
    for _ in range(event.n_steps):
        gradient = oracle.clipped_sum(point, clip_norm)  # -mean_i clip_C(Log_x(z_i))
        noisy = oracle.add_noise(gradient, point, event.noise_std, label=event.label,
                                 sensitivity=event.sensitivity)
        point = space.metric.exp(-noisy, point)
    return point
