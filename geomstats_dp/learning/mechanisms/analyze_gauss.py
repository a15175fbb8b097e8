"""Analyze Gauss: top-k eigenvectors of a noisy second-moment matrix (PrivatePCA).

Dwork, Talwar, Thakurta & Zhang 2014. Adjacency: replace-one on the rows. Each row is
mapped to norm <= B (``data_norm``; non-finite rows to zero) and, when the estimator
centres, has a private mean subtracted first (its own Gaussian event, sensitivity 2B / n).
The query is the upper triangle (diagonal included) of (1/n) sum z z^T, of L2 sensitivity
sqrt(2) B^2 / n (``_pca_rows.second_moment_sensitivity``); iid Gaussian noise on it,
mirrored, is one Gaussian release calibrated by ``calibrate_gaussian`` (exact Gaussian-DP
composition with the other events of the fit).

On a Dask array the row maps, the mean and the second-moment matrix are reductions over
chunks of rows computed by the workers (``geomstats_dp._dask``: trust model); the noise
is drawn on the client in the in-memory order, and only the p x p matrix and the mean
reach it.
"""

import math

import numpy as np

from geomstats_dp import _dask
from geomstats_dp._backend import to_backend
from geomstats_dp.learning._diagnostics import NoiseDominatesWarning
from geomstats_dp.learning._pca_rows import (
    noisy_second_moment,
    second_moment_sensitivity,
    stage_of,
)
from geomstats_dp.learning.mechanisms.base import ReleaseMechanism

LABEL = "second moment"


class AnalyzeGaussRelease(ReleaseMechanism):
    """One noisy second-moment matrix, its top-k eigenvectors and eigenvalues.

    Reads the estimator's ``_data_norm``, ``n_components``, ``_mean_events``,
    ``_release_event``, ``_private_rows`` and ``_explained`` (see ``PrivatePCA``).

    ``noise_ratio_``: the expected spectral norm of the noise matrix, about
    2 sigma sqrt(p), over the k-th released eigenvalue less that norm (post-processing
    of the release; infinite when not positive): above 1 the k-th component is expected
    to be noise.
    """

    reads_dask = True

    def __init__(self, estimator, n_samples, weights=None):
        super().__init__(estimator, n_samples, weights)
        self.mean_events = tuple(estimator._mean_events(n_samples))
        self.matrix_event = estimator._release_event(
            LABEL, second_moment_sensitivity(estimator._data_norm, n_samples))

    def events(self):
        return self.mean_events + (self.matrix_event,)

    def release(self, data, weights, rng):
        est = self.estimator
        k = est.n_components
        on_dask = _dask.is_dask_array(data)
        rows, mean = est._private_rows(_dask.numpy_or_dask(data), rng)
        noise_std = self.matrix_event.noise_std
        matrix = noisy_second_moment(rows, noise_std, rng, **stage_of(self.matrix_event))
        if on_dask:  # the noise is drawn; the workers reduce their chunks of rows
            (matrix,) = _dask.compute(matrix)
        eigenvalues, eigenvectors = np.linalg.eigh(matrix)
        eigenvalues, eigenvectors = eigenvalues[::-1], eigenvectors[:, ::-1]
        noise = 2 * noise_std * math.sqrt(rows.shape[1])
        signal = eigenvalues[k - 1] - noise
        ratio = noise / signal if signal > 0 else math.inf
        NoiseDominatesWarning.warn_if(ratio)
        basis = eigenvectors[:, 0] if k == 1 else eigenvectors[:, :k]
        multiplier = self.matrix_event.noise_multiplier
        return {
            "estimate_": to_backend(basis),
            "mean_": mean,
            **est._explained(eigenvalues[:k], eigenvalues[k:].sum()),
            "noise_multiplier_": multiplier,
            "noise_multipliers_": {LABEL: multiplier},
            "n_iter_": 1,
            "n_gradient_evaluations_": None,
            "clip_norm_": None,
            "noise_ratio_": ratio,
        }
