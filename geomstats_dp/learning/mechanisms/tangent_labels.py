"""The targets' log-coordinates at a base point, clipped and perturbed once.

Label-level privacy for structured prediction (features public, targets private).
Adjacency: replace-one on the targets (y_j replaced by any point of the space, the
features fixed). Two Gaussian releases, composed exactly in Gaussian DP (the squared
Gaussian-DP parameter mu^2 = 1 / z^2 of the whole budget split into shares):

1. the base point b, unless a public one is given: the one-shot clipped tangent mean at
   the canonical point b0, Exp_b0(clip_D(mean_i clip_D(Log_b0 y_i) + N_b0(0, sigma_0^2))),
   sensitivity 2D / n, share ``BASE_SHARE`` of mu^2. The outer clip is post-processing
   (``optim.step_cap``): the noisy mean is pulled into the ball of radius D that holds
   the mean, which never moves it farther from the mean (a projection onto a convex set
   holding it) and keeps b within D of b0 (at a small epsilon the noise alone could put
   b numerically off the space, 10^8 from b0 on the hyperboloid);
2. v_i = Log_b(y_i), clipped to D in the metric at b (a non-finite v_i counts as zero),
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

import geomstats.backend as gs
import numpy as np

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.distributions import TangentGaussian
from geomstats_dp.learning.mechanisms.base import ReleaseMechanism
from geomstats_dp.optim import canonical_point, clip_tangent_vectors
from geomstats_dp.optim.step_cap import cap_norm
from geomstats_dp.privacy import GaussianEvent, share_noise_multipliers
from geomstats_dp.privacy.stages import noisy_stage

BASE_SHARE = 0.1  # share of mu^2 spent on a private base point
BASE_LABEL = "PrivateStructuredPrediction: base point (tangent mean)"
LABELS_LABEL = "PrivateStructuredPrediction: targets' log-coordinates"


def block_norm(metric, base_point, tangent_vecs):
    """sqrt(sum_i |v_i|_b^2) of a block of tangent vectors at ``base_point``, a float."""
    return float(np.sqrt(np.sum(to_numpy(metric.squared_norm(tangent_vecs, base_point)))))


class TangentLabelRelease(ReleaseMechanism):
    """Release the clipped log-coordinates of the targets once, with Gaussian noise.

    Reads the estimator's ``space``, ``epsilon``, ``delta``, ``clip_norm`` (D, required)
    and ``base_point`` (b, public; None: a private coarse mean, module docstring).
    """

    def __init__(self, estimator, n_samples, weights=None):
        super().__init__(estimator, n_samples, weights)
        if estimator.clip_norm is None:
            raise ValueError(
                "method='labels' needs clip_norm, a public bound D on the targets' "
                "distance to base_point (farther targets are pulled in to D)"
            )
        self.clip_norm = float(estimator.clip_norm)
        space = estimator.space
        self.public_base = estimator.base_point is not None
        self.start = to_backend(to_numpy(
            estimator.base_point if self.public_base else canonical_point(space)))
        epsilon, delta = estimator.epsilon, estimator.delta
        self.base_events = ()
        if self.public_base:
            (self.noise_multiplier,) = share_noise_multipliers(epsilon, delta, (1.0,))
        else:
            base_multiplier, self.noise_multiplier = share_noise_multipliers(
                epsilon, delta, (BASE_SHARE, 1 - BASE_SHARE))
            self.base_sigma = base_multiplier * 2 * self.clip_norm / n_samples
            self.base_events = (GaussianEvent(
                base_multiplier, sensitivity=2 * self.clip_norm / n_samples,
                noise_std=self.base_sigma,
                label=BASE_LABEL),)
        self.sigma = self.noise_multiplier * 2 * self.clip_norm
        # a public base point is checked; the private one is made here on the space
        self.sampler = TangentGaussian(space, validate=self.public_base)

    def events(self):
        return self.base_events + (GaussianEvent(
            self.noise_multiplier, sensitivity=2 * self.clip_norm, noise_std=self.sigma,
            label=LABELS_LABEL),)

    def _clipped_logs(self, targets, base_point):
        metric = self.estimator.space.metric
        logs = metric.log(to_backend(targets), base_point)
        return clip_tangent_vectors(metric, logs, base_point, self.clip_norm)

    def release(self, targets, weights, rng):
        space = self.estimator.space
        metric, dim = space.metric, int(space.dim)
        base_point = self.start
        if not self.public_base:
            mean = gs.mean(self._clipped_logs(targets, base_point), axis=0)
            noise = self.sampler.sample(base_point, sigma=self.base_sigma, random_state=rng)
            noisy = noisy_stage(
                mean, noise, label=BASE_LABEL, law="gaussian", scale=self.base_sigma,
                sensitivity=2 * self.clip_norm / self.n_samples, dim=dim,
                norm=functools.partial(block_norm, metric, base_point),
                adjacency="label_level")
            base_point = metric.exp(cap_norm(metric, noisy, base_point, self.clip_norm),
                                    base_point)
        clipped = self._clipped_logs(targets, base_point)
        noise = self.sampler.sample(base_point, n_samples=len(targets), sigma=self.sigma,
                                    random_state=rng)
        labels = noisy_stage(
            clipped, gs.reshape(noise, clipped.shape), label=LABELS_LABEL, law="gaussian",
            scale=self.sigma, sensitivity=2 * self.clip_norm, dim=len(targets) * dim,
            norm=functools.partial(block_norm, metric, base_point), adjacency="label_level")
        return {
            "labels_": labels,
            "base_point_": base_point,
            "noise_multiplier_": self.noise_multiplier,
        }
