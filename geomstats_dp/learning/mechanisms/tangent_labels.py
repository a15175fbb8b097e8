"""The targets' log-coordinates at a base point, clipped and perturbed once.

Label-level privacy for structured prediction (features public, targets private).
Adjacency: replace-one on the targets (y_j replaced by any point of the space, the
features fixed; targets off the space or not finite are refused, their indices named). Two Gaussian releases, composed exactly in Gaussian DP (the squared
Gaussian-DP parameter mu^2 = 1 / z^2 of the whole budget split into shares):

1. the base point b, unless a public one is given: the one-shot clipped tangent mean at
   the canonical point b0, Exp_b0(clip_D(mean_i clip_D(Log_b0 y_i) + N_b0(0, sigma_0^2))),
   sensitivity 2D / n, share ``BASE_SHARE`` of mu^2. The outer clip is post-processing
   (``optim.step_cap``): the noisy mean is pulled into the ball of radius D that holds
   the mean, which never moves it farther from the mean (a projection onto a convex set
   holding it) and keeps b within D of b0 (at a small epsilon the noise alone could put
   b numerically off the space, 10^8 from b0 on the hyperboloid);
2. v_i = Log_b(y_i), projected onto the tangent space at b (``space.to_tangent``) and
   clipped to D in the metric at b (a non-finite v_i counts as zero),
   released as v_i + N_b(0, sigma^2), one tangent Gaussian draw per target: replacing y_j
   changes only v_j, by at most 2D in the metric at b (a fixed inner product), so the
   L2 sensitivity of the [n, d] block is 2D; the rest of mu^2.

Both are stages (``privacy.stages.noisy_stage``), adjacency "label_level", in the norm
of the metric at the base point (the block: the root of the sum of its rows' squared
norms).

Every prediction made from the released coordinates is post-processing: the cost does not
grow with the number of predictions.
"""

import functools
from dataclasses import dataclass
from typing import Any, ClassVar

import geomstats.backend as gs
import numpy as np

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.distributions import TangentGaussian
from geomstats_dp.learning._data import check_values
from geomstats_dp.learning.mechanisms.base import Mechanism
from geomstats_dp.optim import canonical_point, clip_tangent_vectors
from geomstats_dp.optim.clipping import clipped_sum_sensitivity
from geomstats_dp.optim.step_cap import cap_norm
from geomstats_dp.privacy import GaussianEvent, share_noise_multipliers
from geomstats_dp.privacy.stages import noisy_stage

BASE_SHARE = 0.1  # share of mu^2 spent on a private base point
ATOL = 1e-6  # tolerance of the check that targets lie on the space
BASE_LABEL = "PrivateStructuredPrediction: base point (tangent mean)"
LABELS_LABEL = "PrivateStructuredPrediction: targets' log-coordinates"


def block_norm(metric, base_point, tangent_vecs):
    """sqrt(sum_i |v_i|_b^2) of a block of tangent vectors at ``base_point``, a float."""
    return float(np.sqrt(np.sum(to_numpy(metric.squared_norm(tangent_vecs, base_point)))))


@dataclass(frozen=True)
class TangentLabelRelease(Mechanism):
    """Release the clipped log-coordinates of the targets once, with Gaussian noise.

    Parameters
    ----------
    space : Manifold
        Where the targets lie.
    n_samples : int
        n, the public number of targets.
    clip_norm : float
        D, the public bound the log-coordinates are clipped to.
    epsilon, delta : float
        The guarantee of the whole release (private base point included).
    base_point : array-like or None, shape=[*space.shape]
        b, public; None: a private coarse mean (module docstring).
    """

    adjacency: ClassVar[str] = "label_level"

    space: Any
    n_samples: int
    clip_norm: float
    epsilon: float
    delta: float
    base_point: Any = None

    @property
    def public_base(self):
        """Whether b is public (given) rather than released."""
        return self.base_point is not None

    @functools.cached_property
    def _multipliers(self):
        """(z of the base point or None, z of the coordinates): shares of mu^2."""
        if self.public_base:
            return (None, *share_noise_multipliers(self.epsilon, self.delta, (1.0,)))
        return tuple(share_noise_multipliers(self.epsilon, self.delta,
                                             (BASE_SHARE, 1 - BASE_SHARE)))

    @property
    def noise_multiplier(self):
        """z of the coordinates' release."""
        return self._multipliers[1]

    @property
    def sigma(self):
        """z 2D, the noise's standard deviation on every coordinate."""
        return clipped_sum_sensitivity(self.clip_norm, 1,
                                       multiplier=self.noise_multiplier)

    @property
    def regularization(self):
        """gamma = 3 d sigma^2 / D^2: the noise variance of a coordinate over D^2 / (3 d),
        the variance of a coordinate spread uniformly over [-D, D]."""
        return 3 * int(self.space.dim) * (self.sigma / self.clip_norm) ** 2

    def prediction_regularization(self, fitted):
        """gamma of the predictions: ``regularization`` (public)."""
        return self.regularization

    @property
    def base_sensitivity(self):
        """2D / n, the private base point's (a clipped tangent mean)."""
        return clipped_sum_sensitivity(self.clip_norm, self.n_samples)

    @property
    def base_sigma(self):
        """z_0 2D / n, the private base point's noise (None for a public one)."""
        if self.public_base:
            return None
        return clipped_sum_sensitivity(self.clip_norm, self.n_samples,
                                       multiplier=self._multipliers[0])

    def events(self):
        base_events = ()
        if not self.public_base:
            base_events = (GaussianEvent(
                self._multipliers[0], sensitivity=self.base_sensitivity,
                noise_std=self.base_sigma, label=BASE_LABEL),)
        return base_events + (GaussianEvent(
            self.noise_multiplier, sensitivity=clipped_sum_sensitivity(self.clip_norm, 1), noise_std=self.sigma,
            label=LABELS_LABEL),)

    def _clipped_logs(self, targets, base_point):
        space = self.space
        # made tangent before the norm is taken: a log with a normal part (a target off
        # the space by rounding) would pass the clip and release that part without noise
        logs = space.to_tangent(space.metric.log(to_backend(targets), base_point),
                                base_point)
        return clip_tangent_vectors(space.metric, logs, base_point, self.clip_norm)

    def release(self, targets, weights, rng):
        # as the per-row methods: finite targets on the space (indices named), checked
        # once the budget is, before any noise is drawn or charged
        space = self.space
        targets = to_numpy(targets)  # the estimator's shape-checked numpy, or a backend array
        check_values(space, targets, ATOL, "Y")
        metric, dim = space.metric, int(space.dim)
        # a public base point is checked; the private one is made here on the space
        sampler = TangentGaussian(space, validate=self.public_base)
        base_point = to_backend(to_numpy(
            self.base_point if self.public_base else canonical_point(space)))
        if not self.public_base:
            base_sigma = self.base_sigma
            mean = gs.mean(self._clipped_logs(targets, base_point), axis=0)
            noise = sampler.sample(base_point, sigma=base_sigma, random_state=rng)
            noisy = noisy_stage(
                mean, noise, label=BASE_LABEL, law="gaussian", scale=base_sigma,
                sensitivity=self.base_sensitivity, dim=dim,
                norm=functools.partial(block_norm, metric, base_point),
                adjacency="label_level")
            base_point = metric.exp(cap_norm(metric, noisy, base_point, self.clip_norm),
                                    base_point)
        clipped = self._clipped_logs(targets, base_point)
        noise = sampler.sample(base_point, n_samples=len(targets), sigma=self.sigma,
                               random_state=rng)
        labels = noisy_stage(
            clipped, gs.reshape(noise, clipped.shape), label=LABELS_LABEL, law="gaussian",
            scale=self.sigma, sensitivity=clipped_sum_sensitivity(self.clip_norm, 1), dim=len(targets) * dim,
            norm=functools.partial(block_norm, metric, base_point), adjacency="label_level")
        return {
            "labels_": labels,
            "base_point_": base_point,
            "noise_multiplier_": self.noise_multiplier,
        }
