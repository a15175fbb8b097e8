"""The targets on a sphere released in their ambient coordinates, with a private mean.

Label-level privacy for structured prediction on the unit sphere S^d in R^(d+1)
(features public, targets private). Adjacency: replace-one on the targets (y_j replaced
by any point of the sphere, the features fixed; targets off the sphere or not finite are
refused, their indices named). Every target is a unit vector of R^(d+1), so two targets
are at most 2 apart in the ambient norm: no clip bound is needed. Two Gaussian releases,
composed exactly in Gaussian DP (mu^2 = 1 / z^2 of the whole budget split into shares):

1. the constant private mean mu~ = mean_i y_i + N(0, sigma_0^2 I_(d+1)), sensitivity
   2 / n, share ``mean_share`` of mu^2;
2. the targets y~_i = y_i + N(0, sigma^2 I_(d+1)), one draw per target: replacing y_j
   changes only row j, by at most 2, so the L2 sensitivity of the [n, d + 1] block is 2;
   the rest of mu^2.

Rows are scaled to norm at most 1 before either release (a target within the tolerance
of the sphere has norm 1 up to rounding). Both are stages (``privacy.stages.noisy_stage``),
adjacency "label_level". A prediction made from (mu~, y~) is post-processing: Gaussian-
process regression of y~ with prior mean mu~ and prior variance the targets' spread read
from mu~, projected onto the sphere (an extrinsic average: no chart, so targets all
around the sphere do not wrap).

The share of the mean is a public rule (``mean_share``): the larger the labels' noise
against the n targets, the less they can add to the constant answer, and the more of the
budget the mean gets.
"""

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from geomstats.geometry.hypersphere import Hypersphere

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.learning._data import check_values
from geomstats_dp.learning.mechanisms.base import Mechanism
from geomstats_dp.optim import canonical_point
from geomstats_dp.optim.clipping import clipped_sum_sensitivity
from geomstats_dp.privacy import (
    GaussianEvent,
    calibrate_gaussian,
    share_noise_multipliers,
)
from geomstats_dp.privacy.stages import noisy_stage

ATOL = 1e-6  # tolerance of the check that targets lie on the sphere
MEAN_SHARES = (0.1, 0.9)  # the smallest and largest share of mu^2 the mean gets
MIN_SPREAD = 1e-3  # the smallest spread 1 - |mu~|^2 the prior's variance uses
MEAN_LABEL = "PrivateStructuredPrediction: targets' mean (extrinsic)"
TARGETS_LABEL = "PrivateStructuredPrediction: targets (extrinsic)"


def is_unit_sphere(space):
    """Whether ``space`` is geomstats' unit sphere in its ambient (extrinsic) coordinates."""
    return (isinstance(space, Hypersphere)
            and tuple(space.shape) == (int(space.dim) + 1,))


def labels_noise_ratio(n_samples, dim, epsilon, delta):
    """(d + 1) sigma^2 / n with sigma = 2 z, z of one (epsilon, delta) Gaussian release.

    The Gaussian-process regularization gamma = (d + 1) sigma^2 (below) over n, had all the
    budget gone to the targets: public.
    """
    sigma = clipped_sum_sensitivity(1.0, 1, multiplier=calibrate_gaussian(epsilon, delta, 1))
    return (dim + 1) * sigma**2 / n_samples


def mean_share(n_samples, dim, epsilon, delta):
    """The mean's share of mu^2: r within ``MEAN_SHARES``, r the labels' noise ratio
    (``labels_noise_ratio``): 0.1 while the targets carry information, up to 0.9 from
    r = 0.9 on, where their noise swamps them and the constant mean is the better answer
    (chosen against r / (1 + r) on synthetic data, checked on the baseline benchmark,
    docs/benchmarks/baselines.md)."""
    ratio = labels_noise_ratio(n_samples, dim, epsilon, delta)
    return float(np.clip(ratio, *MEAN_SHARES))


@dataclass(frozen=True)
class ExtrinsicLabelRelease(Mechanism):
    """Release a private mean of the targets and the targets, in ambient coordinates.

    Parameters
    ----------
    space : Hypersphere
        The unit sphere S^d, extrinsic coordinates.
    n_samples : int
        n, the public number of targets.
    epsilon, delta : float
        The guarantee of both releases together.
    share : float or None
        The mean's share of mu^2 in (0, 1); None: ``mean_share`` (public).
    """

    adjacency: ClassVar[str] = "label_level"

    space: Any
    n_samples: int
    epsilon: float
    delta: float
    share: float | None = None

    @property
    def mean_share(self):
        """The mean's share of mu^2."""
        if self.share is not None:
            return self.share
        return mean_share(self.n_samples, int(self.space.dim), self.epsilon, self.delta)

    @property
    def _multipliers(self):
        """(z of the mean, z of the targets)."""
        share = self.mean_share
        return share_noise_multipliers(self.epsilon, self.delta, (share, 1 - share))

    @property
    def noise_multiplier(self):
        """z of the targets' release."""
        return self._multipliers[1]

    @property
    def sigma(self):
        """2 z, the noise's standard deviation on every ambient coordinate of a target."""
        return clipped_sum_sensitivity(1.0, 1, multiplier=self.noise_multiplier)

    @property
    def regularization(self):
        """gamma_0 = (d + 1) sigma^2 (public): the noise variance of a coordinate over
        1 / (d + 1), the variance of a coordinate of a uniform point of the sphere."""
        return (int(self.space.dim) + 1) * self.sigma**2

    def prediction_regularization(self, fitted):
        """gamma = gamma_0 / s, s = 1 - |mu~|^2 within [``MIN_SPREAD``, 1]: the prior
        variance of a coordinate is the targets' spread about their mean, (1 - |E y|^2) /
        (d + 1), read from the released mean (post-processing). Concentrated targets
        give less room to the features, so the noise is shrunk harder toward mu~."""
        mean = to_numpy(fitted["mean_"])
        spread = float(np.clip(1 - np.dot(mean, mean), MIN_SPREAD, 1.0))
        return self.regularization / spread

    def events(self):
        mean_z, z = self._multipliers
        mean_sensitivity = clipped_sum_sensitivity(1.0, self.n_samples)
        sensitivity = clipped_sum_sensitivity(1.0, 1)
        return (GaussianEvent(mean_z, sensitivity=mean_sensitivity,
                              noise_std=mean_z * mean_sensitivity, label=MEAN_LABEL),
                GaussianEvent(z, sensitivity=sensitivity, noise_std=z * sensitivity,
                              label=TARGETS_LABEL))

    def release(self, targets, weights, rng):
        targets = to_numpy(targets)
        check_values(self.space, targets, ATOL, "Y")
        norms = np.linalg.norm(targets, axis=1, keepdims=True)
        rows = targets / np.maximum(norms, 1.0)  # norm <= 1: the sensitivities hold
        mean_event, event = self.events()
        mean = noisy_stage(
            rows.mean(axis=0), mean_event.noise_std * rng.standard_normal(rows.shape[1]),
            label=MEAN_LABEL, law="gaussian", scale=mean_event.noise_std,
            sensitivity=mean_event.sensitivity, dim=rows.shape[1], adjacency="label_level")
        labels = noisy_stage(
            rows, event.noise_std * rng.standard_normal(rows.shape), label=TARGETS_LABEL,
            law="gaussian", scale=event.noise_std, sensitivity=event.sensitivity,
            dim=rows.size, adjacency="label_level")
        return {
            "labels_": to_backend(labels),
            "mean_": to_backend(mean),
            "base_point_": project_to_sphere(self.space, mean[None])[0],
            "noise_multiplier_": event.noise_multiplier,
        }


def project_to_sphere(space, vectors):
    """v / |v| row by row (post-processing); a zero row goes to the canonical point.

    Parameters
    ----------
    space : Hypersphere
    vectors : numpy.ndarray, shape=[k, d + 1]

    Returns
    -------
    points : array-like, shape=[k, d + 1]
    """
    vectors = np.asarray(to_numpy(vectors), dtype=np.float64)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    pole = to_numpy(canonical_point(space))
    points = np.where(norms > 0, vectors / np.where(norms > 0, norms, 1.0), pole)
    return to_backend(points)
