"""Analyze Gauss: top-k eigenvectors of a noisy second-moment matrix (PrivatePCA).

Dwork, Talwar, Thakurta & Zhang 2014. Adjacency: replace-one on the rows. Each row is
mapped to norm <= B (``data_norm``; non-finite rows to zero) and, when the estimator
centres, has a private mean subtracted first (its own Gaussian event, sensitivity 2B / n).
The query is the upper triangle (diagonal included) of (1/n) sum z z^T, of L2 sensitivity
sqrt(2) B^2 / n (``_pca_rows.second_moment_sensitivity``); iid Gaussian noise on it,
mirrored, is one Gaussian release calibrated by ``calibrate_gaussian`` (exact Gaussian-DP
composition with the other events of the fit).

In memory, the mean and the matrix are read from X in blocks of rows, with no copy of X
and the same operations whatever the values (``private_moment``). On a Dask array the
row maps, the mean and the second-moment matrix are reductions over chunks of rows
computed by the workers (``geomstats_dp._dask``: trust model); the noise is drawn on
the client in the in-memory order, and only the p x p matrix and the mean reach it.
"""

import functools
import math
from dataclasses import dataclass

import numpy as np

from geomstats_dp import _dask
from geomstats_dp._backend import to_backend
from geomstats_dp.learning._diagnostics import NoiseDominatesWarning
from geomstats_dp.learning._pca_rows import (
    bounded_mean,
    bounded_rows,
    bounded_second_moment,
    noisy_matrix,
    noisy_mean,
    noisy_vector,
    second_moment_sensitivity,
    stage_of,
)
from geomstats_dp.learning.mechanisms.base import Mechanism
from geomstats_dp.privacy import GaussianEvent, share_noise_multipliers

LABEL = "second moment"
MEAN_LABEL = "mean"
# PrivatePCA's noise ratio compares the noise with SIGNAL_FRACTION B^2, a public stand-in
# for the data's top eigenvalue: above every real dataset's of the baseline benchmark
# under the loose bound B = sqrt(p) (0.25% to 9% of B^2), and set there so that the
# warning fires where the default does not beat the public start and nowhere it does
# (docs/benchmarks/baselines.md, "PrivatePCA")
SIGNAL_FRACTION = 0.15


def pca_event(epsilon, delta, share, part, sensitivity, label="PrivatePCA"):
    """The calibrated one-shot Gaussian event of ``part``, spending ``share`` of the
    Gaussian-DP budget mu^2 of (epsilon, delta) (its label names it): noise multiplier
    1 / (sqrt(share) mu), whatever delta."""
    (multiplier,) = share_noise_multipliers(epsilon, delta, (share,))
    return GaussianEvent.from_noise(multiplier * sensitivity, sensitivity,
                                    label=f"{label}: {part}")


def centred_rows(X, data_norm, mean):
    """Rows mapped to norm <= B; with a released ``mean`` (None: not centred), minus it
    and mapped again (per-record maps: ``_pca_rows``)."""
    rows = bounded_rows(X, data_norm)
    return rows if mean is None else bounded_rows(rows - mean, data_norm)


def private_rows(X, data_norm, mean_event, rng):
    """The rows the main release reads, and the private mean (zeros without
    ``mean_event``, the rows then used as they are).

    Parameters
    ----------
    X : numpy.ndarray or dask.array.Array, shape=[n_samples, n_features]
    data_norm : float
    mean_event : GaussianEvent or None
        The mean's event (its noise and sensitivity 2B / n).
    rng : numpy.random.Generator

    Returns
    -------
    rows : numpy.ndarray or dask.array.Array, shape=[n_samples, n_features]
    mean : numpy.ndarray, shape=[n_features]
    """
    if mean_event is None:
        return centred_rows(X, data_norm, None), np.zeros(X.shape[1])
    # computed now (on a Dask array: one pass of the workers), read by every row
    mean = np.asarray(noisy_mean(bounded_rows(X, data_norm), mean_event.noise_std, rng,
                                 **stage_of(mean_event)))
    return centred_rows(X, data_norm, mean), mean


def private_moment(X, data_norm, mean_event, rng):
    """The second moment (1/n) sum z z^T of the rows of ``private_rows`` (before noise),
    and the private mean (zeros without ``mean_event``).

    On a numpy array: blocked passes over X (``_pca_rows.bounded_mean`` and
    ``bounded_second_moment``), no copy of it; on a Dask array: the mapped rows' product,
    lazy (the workers reduce their chunks).

    Returns
    -------
    moment : numpy.ndarray or dask.array.Array, shape=[n_features, n_features]
    mean : numpy.ndarray, shape=[n_features]
    """
    if _dask.is_dask_array(X):
        rows, mean = private_rows(X, data_norm, mean_event, rng)
        return rows.T @ rows / len(rows), mean
    if mean_event is None:
        return bounded_second_moment(X, data_norm), np.zeros(X.shape[1])
    statistic, squared = bounded_mean(X, data_norm)
    mean = np.asarray(noisy_vector(statistic, mean_event.noise_std, rng,
                                   **stage_of(mean_event)))
    return bounded_second_moment(X, data_norm, mean, squared), mean


def start_basis(n_features, n_components):
    """The fixed, data-independent start: an orthonormal basis drawn once with seed 0.

    Not a coordinate basis: on images, coordinate directions are often constant pixels,
    where every record's gradient vanishes (a saddle point the run never leaves).

    Returns
    -------
    basis : numpy.ndarray, shape=[n_features] (one component) or [n_features, k]
    """
    rng = np.random.default_rng(0)
    basis = np.linalg.qr(rng.standard_normal((n_features, n_components)))[0]
    return basis[:, 0] if n_components == 1 else basis


def start_shrunk_eigh(matrix, start, weight):
    """Eigenvectors u_i of M + tau W0 W0^T by decreasing eigenvalue, with the variances
    u_i^T M u_i they have in M (post-processing of M; tau = 0: M's own eigenpairs).

    Parameters
    ----------
    matrix : numpy.ndarray, shape=[n_features, n_features]
        M, the released symmetric matrix.
    start : numpy.ndarray, shape=[n_features] or [n_features, k]
        W0, orthonormal columns (``start_basis``).
    weight : float
        tau >= 0.

    Returns
    -------
    variances : numpy.ndarray, shape=[n_features]
    eigenvectors : numpy.ndarray, shape=[n_features, n_features]
    """
    if weight == 0:  # M's own eigenpairs, without forming M + 0 W0 W0^T
        values, vectors = np.linalg.eigh(matrix)
    else:
        start = np.reshape(start, (len(matrix), -1))
        values, vectors = np.linalg.eigh(matrix + weight * (start @ start.T))
        values = values - weight * np.sum((start.T @ vectors) ** 2, axis=0)
    return values[::-1], vectors[:, ::-1]


def explained(top, rest, n_features):
    """explained_variance_, _ratio_ and noise_variance_ (the rest over the p - k other
    directions, as scikit-learn's PCA) from released variances (negatives floored)."""
    top = np.maximum(np.asarray(top, dtype=np.float64), 0.0)
    rest = max(float(rest), 0.0)
    total = top.sum() + rest
    ratio = top / total if total > 0 else np.zeros_like(top)
    return {"explained_variance_": top, "explained_variance_ratio_": ratio,
            "noise_variance_": rest / (n_features - len(top))}


@dataclass(frozen=True)
class AnalyzeGaussRelease(Mechanism):
    """One noisy second-moment matrix, its top-k eigenvectors and eigenvalues.

    With ``start_shrinkage`` c > 0, the top-k eigenvectors of M + tau P0 are released
    instead (``start_shrunk_eigh``): M the noisy matrix, P0 the projector on the public
    start ``start_basis(p, k)``, tau = c 2 sigma sqrt(p) the public scale of
    the noise matrix's spectral norm (``noise_scale``). Post-processing of M: the
    adjacency, the sensitivity and the events are those of c = 0. With no signal above
    the noise and c large the release is the start; with a gap far above tau it is
    Analyze Gauss's. The variances released are u^T M u along the components.

    ``noise_ratio_`` (``noise_ratio``): the expected spectral norm of the noise matrix,
    about 2 sigma sqrt(p), over ``SIGNAL_FRACTION`` B^2, public (a function of n, p,
    epsilon and delta only, the same on neighbouring datasets); above 1 a
    NoiseDominatesWarning says the release is expected no better than the public start.

    Parameters
    ----------
    n_samples : int
        n, public.
    n_components : int
        k.
    data_norm : float
        B, the public bound the rows are mapped to.
    epsilon, delta : float
        The guarantee of the whole release (mean included).
    mean_share : float
        The share of mu^2 spent on a private mean subtracted first (0: none, the rows
        used as they are).
    start_shrinkage : float
        c >= 0 (0: Analyze Gauss's eigenvectors).
    label : str
        The estimator's name, the start of the events' labels.
    """

    reads_dask = True

    n_samples: int
    n_components: int
    data_norm: float
    epsilon: float
    delta: float
    mean_share: float = 0.0
    start_shrinkage: float = 0.0
    label: str = "PrivatePCA"

    @functools.cached_property
    def mean_event(self):
        """The private mean's event (sensitivity 2B / n), or None."""
        if not self.mean_share:
            return None
        return pca_event(self.epsilon, self.delta, self.mean_share, MEAN_LABEL,
                         2 * self.data_norm / self.n_samples, self.label)

    @functools.cached_property
    def matrix_event(self):
        """The second moment's event (sensitivity sqrt(2) B^2 / n), the rest of mu^2."""
        return pca_event(self.epsilon, self.delta, 1.0 - self.mean_share, LABEL,
                         second_moment_sensitivity(self.data_norm, self.n_samples),
                         self.label)

    def events(self):
        return (() if self.mean_event is None else (self.mean_event,)) + (
            self.matrix_event,)

    def noise_scale(self, n_features):
        """2 sigma sqrt(p), the noise matrix's expected spectral norm: public."""
        return 2 * self.matrix_event.noise_std * math.sqrt(n_features)

    def noise_ratio(self, n_features):
        """2 sigma sqrt(p) / (SIGNAL_FRACTION B^2) = 2 sqrt(2) z sqrt(p) / (n SIGNAL_FRACTION):
        scale-free, public."""
        return self.noise_scale(n_features) / (SIGNAL_FRACTION * self.data_norm**2)

    def release(self, data, weights, rng):
        k = self.n_components
        on_dask = _dask.is_dask_array(data)
        moment, mean = private_moment(_dask.numpy_or_dask(data, copy=False),
                                      self.data_norm, self.mean_event, rng)
        noise_std = self.matrix_event.noise_std
        matrix = noisy_matrix(moment, noise_std, rng, **stage_of(self.matrix_event))
        if on_dask:  # the noise is drawn; the workers reduce their chunks of rows
            (matrix,) = _dask.compute(matrix)
        n_features = len(mean)
        eigenvalues, eigenvectors = start_shrunk_eigh(
            matrix, start_basis(n_features, k),
            self.start_shrinkage * self.noise_scale(n_features))
        ratio = self.noise_ratio(len(mean))
        NoiseDominatesWarning.warn_if(ratio, (
            "the noise matrix's expected spectral norm is {ratio} times "
            f"{SIGNAL_FRACTION:g} data_norm^2, more than a real dataset's top eigenvalue "
            "under a loose public bound"))
        basis = eigenvectors[:, 0] if k == 1 else eigenvectors[:, :k]
        multiplier = self.matrix_event.noise_multiplier
        return {
            "estimate_": to_backend(basis),
            "mean_": mean,
            **explained(eigenvalues[:k], eigenvalues[k:].sum(), len(mean)),
            "noise_multiplier_": multiplier,
            "noise_multipliers_": {LABEL: multiplier},
            "n_iter_": 1,
            "n_gradient_evaluations_": None,
            "clip_norm_": None,
            "noise_ratio_": ratio,
        }
