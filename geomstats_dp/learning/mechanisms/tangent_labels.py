"""The targets' log-coordinates at a public point, clipped and perturbed once.

Label-level privacy for structured prediction (features public, targets private):
v_i = Log_b(y_i) at a public base point b, clipped to the public norm D in the metric at b
(a non-finite v_i counts as zero), and released as v_i + N_b(0, sigma^2), one tangent
Gaussian draw per target. Adjacency: replace-one on the targets (y_j replaced by any point
of the space, the features fixed). Sensitivity: replacing y_j changes only v_j, by at most
2D in the metric at b, a fixed inner product, so the L2 sensitivity of the released
[n, d] block is 2D. Accountant: one Gaussian release, sigma = z 2D with z from
``calibrate_gaussian`` (exact Gaussian-DP). Every prediction made from the released
coordinates is post-processing: the cost does not grow with the number of predictions.
"""

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.distributions import TangentGaussian
from geomstats_dp.learning.mechanisms.base import ReleaseMechanism
from geomstats_dp.optim import canonical_point, clip_tangent_vectors
from geomstats_dp.privacy import GaussianEvent, calibrate_gaussian


class TangentLabelRelease(ReleaseMechanism):
    """Release the clipped log-coordinates of the targets once, with Gaussian noise.

    Reads the estimator's ``space``, ``epsilon``, ``delta``, ``clip_norm`` (D, required)
    and ``base_point`` (b; default the canonical point of the space).
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
        self.base_point = to_backend(to_numpy(
            canonical_point(space) if estimator.base_point is None else estimator.base_point
        ))
        self.noise_multiplier = calibrate_gaussian(estimator.epsilon, estimator.delta, 1)
        self.sigma = self.noise_multiplier * 2 * self.clip_norm
        self.sampler = TangentGaussian(space)

    def events(self):
        return (GaussianEvent(self.noise_multiplier, sensitivity=2 * self.clip_norm,
                              noise_std=self.sigma,
                              label="PrivateStructuredPrediction: targets' log-coordinates"),)

    def release(self, targets, weights, rng):
        metric = self.estimator.space.metric
        logs = metric.log(to_backend(targets), self.base_point)
        clipped = clip_tangent_vectors(metric, logs, self.base_point, self.clip_norm)
        noise = self.sampler.sample(self.base_point, n_samples=len(targets),
                                    sigma=self.sigma, random_state=rng)
        noise = noise.reshape(clipped.shape)
        return {
            "labels_": clipped + noise,
            "base_point_": self.base_point,
            "noise_multiplier_": self.noise_multiplier,
        }
