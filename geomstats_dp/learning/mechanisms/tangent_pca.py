"""Private tangent PCA: Analyze Gauss on clipped log-maps at a private or public base point.

Dwork, Talwar, Thakurta & Zhang 2014 (Analyze Gauss) in the tangent space of a manifold
(Fletcher et al. 2004's tangent PCA). The base point b is public (``base_point``) or a
private mean: ``MEAN_STEPS`` noisy clipped tangent-mean steps from the canonical point
(``mechanisms.tangent_mean``). Each record is mapped to the coordinates of Log_b(z) in a
metric-orthonormal basis of T_b (Gram-Schmidt of the projected canonical basis,
``distributions.baselines.gram_schmidt.orthonormal_basis``; a function of b alone), so
that a coordinate vector's Euclidean norm is the Riemannian norm d(b, z); the vectors are
clipped to norm C (a non-finite one to zero), and the upper triangle of their second
moment (1/n) sum v v^T is released with iid Gaussian noise, mirrored. Its eigenvectors
give the components, tangent vectors at b orthonormal in the metric (post-processing).

Privacy. Adjacency: replace-one. Sensitivities: 2C/n for a mean step, sqrt(2) C^2 / n for
the second moment (``_pca_rows.second_moment_sensitivity``). Accountant: Gaussian
releases composed exactly in Gaussian DP (``share_noise_multipliers``; the mean steps
take ``mean_budget_fraction`` of mu^2), calibrated before any data value is read.
"""

from dataclasses import dataclass
from typing import Any

import numpy as np

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.distributions.baselines.gram_schmidt import orthonormal_basis
from geomstats_dp.learning._data import check_values
from geomstats_dp.learning._pca_rows import (
    bounded_rows,
    noisy_second_moment,
    second_moment_sensitivity,
    stage_of,
)
from geomstats_dp.learning.mechanisms.base import Mechanism
from geomstats_dp.learning.mechanisms.tangent_mean import (
    mean_steps_event,
    noisy_mean_steps,
)
from geomstats_dp.optim import canonical_point
from geomstats_dp.privacy import GaussianEvent

ATOL = 1e-6  # tolerance of the check that the records lie on the space
MEAN_STEPS = 3  # unit tangent-mean steps of the private base point


def tangent_coordinates(space, points, base_point, basis):
    """Coordinates of Log_b(z) in an orthonormal basis of T_b, numpy [n, d].

    Parameters
    ----------
    space : Manifold
    points : array-like, shape=[n, *space.shape]
    base_point : array-like, shape=[*space.shape]
    basis : numpy.ndarray, shape=[d, *space.shape]
        Metric-orthonormal at ``base_point``.

    Returns
    -------
    coordinates : numpy.ndarray, shape=[n, d]
    """
    logs = space.metric.log(points, base_point)
    return np.stack([np.atleast_1d(to_numpy(space.metric.inner_product(
        logs, to_backend(vector), base_point))) for vector in basis], axis=-1)


def combine(coordinates, basis):
    """sum_j c_j e_j for each row of coordinates [n, d], backend [n, *basis.shape[1:]]."""
    flat = np.asarray(coordinates) @ basis.reshape(basis.shape[0], -1)
    return to_backend(flat.reshape((flat.shape[0],) + basis.shape[1:]))


@dataclass(frozen=True, eq=False)
class TangentPCARelease(Mechanism):
    """Analyze Gauss on clipped log-map coordinates (module docstring): adjacency
    replace-one; sensitivities 2C/n (mean steps) and sqrt(2) C^2 / n (second moment);
    exact Gaussian-DP composition.

    Parameters
    ----------
    space : Manifold
    n_samples : int
    n_components : int
    clip_norm : float
        C.
    base_point : numpy.ndarray or None, shape=[*space.shape]
        Public base point; None: a private mean (``mean_multiplier``).
    mean_multiplier : float or None
        Noise multiplier of each of the ``MEAN_STEPS`` mean steps.
    matrix_multiplier : float
        Noise multiplier of the second moment.
    noise_method : str
    label : str
    """

    space: Any
    n_samples: int
    n_components: int
    clip_norm: float
    base_point: Any
    mean_multiplier: Any
    matrix_multiplier: float
    noise_method: str = "transport"
    label: str = "PrivateTangentPCA"

    @property
    def mean_event(self):
        if self.base_point is not None:
            return None
        return mean_steps_event(self.mean_multiplier, self.clip_norm, self.n_samples,
                                MEAN_STEPS, f"{self.label}: base point")

    @property
    def matrix_event(self):
        sensitivity = second_moment_sensitivity(self.clip_norm, self.n_samples)
        return GaussianEvent.from_noise(self.matrix_multiplier * sensitivity, sensitivity,
                                        label=f"{self.label}: second moment")

    def events(self):
        first = () if self.mean_event is None else (self.mean_event,)
        return (*first, self.matrix_event)

    def release(self, data, weights, rng):
        space = self.space
        check_values(space, data, ATOL, "X")
        points = to_backend(data)
        if self.base_point is None:
            base = noisy_mean_steps(space, points, canonical_point(space), self.mean_event,
                                    self.clip_norm, rng, self.noise_method)
        else:
            base = to_backend(self.base_point)
        basis = orthonormal_basis(space, space.metric, base)
        rows = bounded_rows(tangent_coordinates(space, points, base, basis), self.clip_norm)
        event = self.matrix_event
        matrix = noisy_second_moment(rows, event.noise_std, rng, **stage_of(event))
        eigenvalues, eigenvectors = np.linalg.eigh(matrix)
        eigenvalues, eigenvectors = eigenvalues[::-1], eigenvectors[:, ::-1]
        k = self.n_components
        total = np.sum(np.maximum(eigenvalues, 0.0))
        top = eigenvalues[:k]
        return {
            "base_point_": base,
            "components_": combine(eigenvectors[:, :k].T, basis),
            "explained_variance_": top,
            "explained_variance_ratio_": np.maximum(top, 0.0) / total if total > 0
            else np.zeros(k),
            "noise_multipliers_": {"base point": self.mean_multiplier,
                                   "second moment": self.matrix_multiplier},
        }
