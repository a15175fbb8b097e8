"""DP-RGD for PrivatePCA, then a private release of the variances along the components.

The optimisation is ``GradientRelease`` (adjacency replace-one, per-sample Riemannian
gradients of norm <= B^2, sensitivity 2 B^2 / n per step, exact Gaussian-DP
composition), run with PrivatePCA's scale-free steps (normalised by a private trace, its
own event). Then one Gaussian release of the second moment of the projections on the
released subspace and of the residual variance (L2 sensitivity sqrt(2) B^2 / n:
``_pca_rows.noisy_projected_moments``), calibrated by ``calibrate_gaussian`` with the
other events of the fit. The loss is invariant under rotations within the subspace;
the released k x k moment matrix is diagonalised to give the components and their
variances, by decreasing variance (post-processing).
"""

import numpy as np

from geomstats_dp import _dask
from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.learning._pca_rows import (
    noisy_projected_moments,
    second_moment_sensitivity,
    stage_of,
)
from geomstats_dp.learning.mechanisms.base import ReleaseMechanism

LABEL = "variances"


class PCAGradientRelease(ReleaseMechanism):
    """``GradientRelease`` on PCA's loss plus the released ``explained_variance_``.

    Warns (public quantities only) when the default schedule cannot converge
    (``PrivatePCA._warn_if_cannot_converge``)."""

    reads_dask = True  # as its GradientRelease

    def __init__(self, estimator, n_samples, weights=None):
        super().__init__(estimator, n_samples, weights)
        self.gradient = estimator._gradient_spec("rgd", n_samples, weights)
        self.variance_event = estimator._release_event(
            LABEL, second_moment_sensitivity(estimator._data_norm, n_samples))
        estimator._warn_if_cannot_converge(self.gradient.resolved_n_iter,
                                           self.gradient.plan.strategy.noise_stds)

    def events(self):
        return self.gradient.events() + (self.variance_event,)

    def release(self, data, weights, rng):
        est = self.estimator
        fitted = self.gradient.release(data, weights, rng)
        basis = to_numpy(fitted["estimate_"]).reshape(est._n_features, -1)
        rows = est._rows(_dask.numpy_or_dask(data), fitted["mean_"])
        event = self.variance_event
        moments, residual = noisy_projected_moments(rows, basis, event.noise_std, rng,
                                                    **stage_of(event))
        variances, rotation = np.linalg.eigh(moments)
        basis = basis @ rotation[:, ::-1]
        fitted.update(est._explained(variances[::-1], residual))
        fitted["estimate_"] = to_backend(basis[:, 0] if basis.shape[1] == 1 else basis)
        fitted["events_"] = tuple(fitted["events_"]) + (self.variance_event,)
        return fitted
