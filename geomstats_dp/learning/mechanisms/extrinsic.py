"""The projected extrinsic mean: one noisy mean in an embedding, projected back.

The records are mapped into a vector space by a closed-form embedding E (coordinates
orthonormal for the ambient norm), centred at the public start x0 and clipped to a
public radius C, averaged with the public weights, released once with Gaussian noise, and
mapped back by the embedding's closed-form projection:

- the hypersphere S^d in R^(d+1) (its metric the standard one): E(z) = z, a unit vector,
  so C = 1 around the origin and nothing is clipped; the release is the noisy mean
  normalised (the projected extrinsic mean, Bhattacharya and Patrangenaru 2003), and
  x0 when the noisy mean is 0 or not finite (a public fallback of post-processing);
- SPD(m) with the log-Euclidean or affine-invariant metric: E(z) = logm(z) - logm(x0) in
  the orthonormal coordinates of the symmetric matrices (Frobenius norm), clipped to C,
  projected by expm(logm(x0) + .) (the log-Euclidean mean of Arsigny et al. 2007, which
  is the Frechet mean of the log-Euclidean metric and an approximation of the
  affine-invariant one);
- SPD(m) with the Euclidean (Frobenius) metric: E(z) = z - x0, clipped to C, projected
  by flooring the eigenvalues of x0 + the noisy mean at the public floor
  ``FLOOR_FRACTION`` lambda_min(x0).

Privacy. Adjacency: replace-one. A record's clipped embedded vector has norm at most C,
(a record whose embedding is not finite counts as x0's, the zero vector),
so the weighted mean has L2 sensitivity 2 C max_i w_i (2C/n for uniform weights; 2/n on
the sphere). One Gaussian release, its multiplier calibrated by ``calibrate_gaussian``
from (epsilon, delta) before any data value is read (``clip_norm="auto"``: the quantile
of the distances to x0 is a pure-DP event composed with it, as in the tangent release).
The projection is post-processing.
"""

import math
from dataclasses import dataclass

import numpy as np
from geomstats.geometry.hypersphere import Hypersphere, HypersphereMetric
from geomstats.geometry.spd_matrices import (
    SPDAffineMetric,
    SPDEuclideanMetric,
    SPDLogEuclideanMetric,
    SPDMatrices,
)

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.distributions.registry import unwrap_metric
from geomstats_dp.learning._diagnostics import NoiseDominatesWarning, noise_ratio
from geomstats_dp.learning.mechanisms.clip_bound import (
    AutoClip,
    clip_events,
    resolve_clip_norm,
)
from geomstats_dp.learning.mechanisms.tangent import PointMeanFields, check_point_loss
from geomstats_dp.optim import SquaredDistanceLoss
from geomstats_dp.optim.clipping import clipped_sum_sensitivity
from geomstats_dp.optim.strategies import weight_factor
from geomstats_dp.optim.weights import normalize_sample_weight
from geomstats_dp.privacy import GaussianEvent, calibrate_gaussian
from geomstats_dp.privacy.stages import noisy_stage

FLOOR_FRACTION = 1e-3  # Euclidean SPD: eigenvalues floored at this times lambda_min(x0)


def _spd_function(matrices, function):
    """function applied to the eigenvalues of symmetric matrices [..., m, m] (numpy)."""
    values, vectors = np.linalg.eigh((matrices + np.swapaxes(matrices, -1, -2)) / 2)
    return (vectors * function(values)[..., None, :]) @ np.swapaxes(vectors, -1, -2)


def _symmetric_coordinates(m):
    """Index pairs of the upper triangle and the weights making the coordinates
    orthonormal for the Frobenius norm (1 on the diagonal, sqrt(2) off it)."""
    rows, cols = np.triu_indices(m)
    return rows, cols, np.where(rows == cols, 1.0, math.sqrt(2.0))


def to_coordinates(matrices):
    """Symmetric matrices [..., m, m] -> orthonormal coordinates [..., m (m + 1) / 2]."""
    rows, cols, weights = _symmetric_coordinates(matrices.shape[-1])
    return matrices[..., rows, cols] * weights


def from_coordinates(vector, m):
    """Orthonormal coordinates [m (m + 1) / 2] -> the symmetric matrix [m, m]."""
    rows, cols, weights = _symmetric_coordinates(m)
    matrix = np.zeros((m, m))
    matrix[rows, cols] = vector / weights
    matrix[cols, rows] = vector / weights
    return matrix


def extrinsic_embedding(space):
    """The name of ``space``'s embedding with a closed-form projection, or None.

    Parameters
    ----------
    space : Manifold

    Returns
    -------
    embedding : {"sphere", "log_euclidean", "euclidean"} or None
    """
    metric, _ = unwrap_metric(space.metric)
    if isinstance(space, Hypersphere) and type(metric) is HypersphereMetric:
        return "sphere"
    if isinstance(space, SPDMatrices):
        if type(metric) in (SPDAffineMetric, SPDLogEuclideanMetric):
            return "log_euclidean"
        if type(metric) is SPDEuclideanMetric and metric.metric_matrix_ is None:
            return "euclidean"
    return None


@dataclass(frozen=True)
class ExtrinsicRelease(PointMeanFields):
    """The projected extrinsic mean (method "extrinsic"; module docstring).

    Adjacency replace-one; L2 sensitivity 2 C max_i w_i of the embedded clipped mean
    (C = 1 on the sphere); one Gaussian release, z = calibrate_gaussian(epsilon, delta,
    1); the projection back is post-processing. Every field is public.

    Parameters
    ----------
    space : Manifold
        A hypersphere or SPD space (``extrinsic_embedding`` is not None).
    loss : SquaredDistanceLoss
        A loss whose samples are points of the space (its records' checks are used; a
        Huber loss's release is the same extrinsic mean).
    n_samples : int
        The public n.
    epsilon, delta : float
        The whole release's.
    steps_epsilon : float
        Epsilon of the Gaussian release on SPD (``epsilon`` less the clip norm's share;
        the sphere's release spends ``epsilon``).
    clip_norm : float, AutoClip or None
        C of SPD's embedded records around E(x0) (``mechanisms.clip_bound``, read as a
        bound on the distances to x0); ignored on the sphere.
    init_point : array-like, shape=[*space.shape]
        The public x0: the centre of the embedding and the sphere's fallback.
    weights : numpy.ndarray, shape=[n_samples], optional
        Public normalised weights (None: uniform).
    label : str
        Prefix of the event labels.
    """

    label: str = ""

    def __post_init__(self):
        check_point_loss(self.loss, "extrinsic")
        if self.embedding is None:
            raise ValueError(
                "method='extrinsic' needs a space embedded with a closed-form projection: "
                "a Hypersphere with its standard metric, or SPDMatrices with the "
                "affine-invariant, log-Euclidean or Euclidean metric; got "
                f"{type(self.space).__name__} with {type(self.space.metric).__name__}"
            )

    @property
    def embedding(self):
        return extrinsic_embedding(self.space)

    @property
    def on_sphere(self):
        return self.embedding == "sphere"

    @property
    def clip(self):
        """C as the release takes it: 1 on the sphere, else ``clip_norm``."""
        return 1.0 if self.on_sphere else self.clip_norm

    @property
    def ambient_dim(self):
        """The number of orthonormal coordinates of the embedding."""
        if self.on_sphere:
            return int(self.space.dim) + 1
        m = int(self.space.n)
        return m * (m + 1) // 2

    @property
    def multiplier(self):
        """z of the Gaussian release at its epsilon: the whole ``epsilon`` on the sphere,
        where no clip norm is resolved (no share is paid for ``clip_norm="auto"``), else
        ``steps_epsilon``."""
        epsilon = self.epsilon if self.on_sphere else self.steps_epsilon
        return calibrate_gaussian(epsilon, self.delta, 1)

    @property
    def factor(self):
        return weight_factor(self.weights, self.n_samples)

    @property
    def noise_ratio(self):
        """The noise's expected norm over C (public: it does not depend on C)."""
        sigma = clipped_sum_sensitivity(1.0, self.n_samples, self.factor,
                                        multiplier=self.multiplier)
        return noise_ratio(np.ones(1), (sigma,), self.ambient_dim, 1.0, "last")

    def _label(self):
        return f"{self.label} extrinsic: mean"

    def events(self):
        clip = self.clip
        if clip is None or isinstance(clip, AutoClip):  # only the multiplier is public
            return (*clip_events(clip, self.label),
                    GaussianEvent(self.multiplier, label=self._label()))
        sensitivity = clipped_sum_sensitivity(clip, self.n_samples, self.factor)
        return (GaussianEvent.from_noise(self.multiplier * sensitivity, sensitivity,
                                         label=self._label()),)

    def _embed(self, points, start):
        """The records' embedded vectors centred at E(x0), [n, D] (numpy)."""
        if self.on_sphere:
            return points
        if self.embedding == "euclidean":
            return to_coordinates(points - start)
        return to_coordinates(_spd_function(points, np.log) - _spd_function(start, np.log))

    def _project(self, vector, start):
        """The point of the space nearest to x0's embedding plus ``vector``."""
        if self.on_sphere:
            norm = float(np.linalg.norm(vector))
            return vector / norm if 0 < norm < math.inf else start
        m = int(self.space.n)
        if self.embedding == "euclidean":
            floor = FLOOR_FRACTION * float(np.linalg.eigvalsh(start)[0])
            return _spd_function(start + from_coordinates(vector, m),
                                 lambda values: np.maximum(values, floor))
        return _spd_function(_spd_function(start, np.log) + from_coordinates(vector, m),
                             np.exp)

    def release(self, data, weights, rng):
        NoiseDominatesWarning.warn_if(self.noise_ratio)
        data = self.loss.check_data(data)
        start = to_numpy(self.init_point)
        clip = self.clip
        if not self.on_sphere:
            clip = resolve_clip_norm(clip, SquaredDistanceLoss(self.space), data,
                                     to_backend(start), rng, self.label)
        rows = self._embed(to_numpy(data), start)
        rows = np.where(np.isfinite(rows).all(axis=1, keepdims=True), rows, 0.0)
        norms = np.linalg.norm(rows, axis=1)
        rows = rows * np.minimum(1.0, clip / np.maximum(norms, 1e-300))[:, None]
        mean = normalize_sample_weight(weights, len(rows)) @ rows
        sensitivity = clipped_sum_sensitivity(clip, self.n_samples, self.factor)
        sigma = self.multiplier * sensitivity
        noise = sigma * rng.standard_normal(self.ambient_dim)
        noisy = noisy_stage(mean, noise, label=self._label(), law="gaussian", scale=sigma,
                            sensitivity=sensitivity, dim=self.ambient_dim)
        return {
            "estimate_": to_backend(self._project(np.asarray(noisy), start)),
            "noise_multiplier_": self.multiplier,
            "noise_multipliers_": {"extrinsic": self.multiplier},
            "n_iter_": 1,
            "n_gradient_evaluations_": len(rows),
            "clip_norm_": clip,
            "noise_ratio_": self.noise_ratio,
        }
