"""DP-RGD for PrivatePCA, then a private release of the variances along the components.

The loss of one record z (a row mapped to norm <= B) at an orthonormal basis W [p, k] is
f(W; z) = -|W^T z|^2, minimised over the data by the leading k-dimensional principal
subspace (Han et al. 2024, principal eigenvector for k = 1). Its Euclidean gradient is
-2 z z^T W, and its Riemannian gradient

    grad f(W; z) = -2 (I - W W^T) z (W^T z)^T

is the same for the sphere's metric (k = 1) and for the Stiefel canonical metric (it is
horizontal, W^T grad = 0, where the canonical metric is Frobenius). Its norm is
2 |(I - W W^T) z| |W^T z| <= |z|^2 (the two factors are the legs of a right triangle
with hypotenuse |z|, and 2ab <= a^2 + b^2), attained when z makes an angle of 45 degrees
with span(W). So a public row-norm bound B gives the clip norm C = B^2, tighter by half
than the 2 B^2 of Han et al.

The optimisation is ``GradientRelease`` (adjacency replace-one, per-sample Riemannian
gradients of norm <= B^2, sensitivity 2 B^2 / n per step, exact Gaussian-DP
composition), full-batch only: the budget shares compose exactly under Gaussian DP,
which subsampled accounting does not. Its steps are scale-free, normalised by a private
trace (1/n) sum |z|^2 (sensitivity B^2 / n, its own event, share ``SCALE_SHARE`` of
mu^2). Then one Gaussian release of the second moment of the projections on the
released subspace and of the residual variance (L2 sensitivity sqrt(2) B^2 / n:
``_pca_rows.noisy_projected_moments``, share ``VARIANCE_SHARE``), calibrated by
``calibrate_gaussian`` with the other events of the fit. The loss is invariant under
rotations within the subspace; the released k x k moment matrix is diagonalised to give
the components and their variances, by decreasing variance (post-processing).
"""

import functools
import warnings
from dataclasses import dataclass

import geomstats.backend as gs
import numpy as np
from geomstats.geometry.hypersphere import Hypersphere
from geomstats.geometry.stiefel import Stiefel
from sklearn.exceptions import ConvergenceWarning

from geomstats_dp import _dask
from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.learning import _defaults
from geomstats_dp.learning._diagnostics import noise_ratio, user_stacklevel
from geomstats_dp.learning._pca_rows import (
    bounded_rows,
    noisy_projected_moments,
    noisy_trace,
    second_moment_sensitivity,
    stage_of,
)
from geomstats_dp.learning.mechanisms.analyze_gauss import (
    MEAN_LABEL,
    SIGNAL_FRACTION,
    centred_rows,
    explained,
    pca_event,
    private_rows,
    start_basis,
)
from geomstats_dp.learning.mechanisms.base import Mechanism
from geomstats_dp.learning.mechanisms.gradient import GradientRelease, Preliminary
from geomstats_dp.optim import ConstantStep, PerSampleLoss
from geomstats_dp.privacy.gaussian_dp import share_target

LABEL = "variances"
SCALE_LABEL = "trace"
# Shares of the Gaussian-DP budget mu^2 (less the mean's) of the two small releases
SCALE_SHARE = 0.02
VARIANCE_SHARE = 0.03
# The Rayleigh quotient contracts at the rate of the eigengap, not at the unit rate of
# d^2 / 2: PCA_ITER_FACTOR times the Frechet mean's default number of steps
# (docs/benchmarks/pca.md)
PCA_ITER_FACTOR = 6
RGD_MAX_STEP = 0.5
# the default DP-RGD run must contract the model problem by exp(-3) at least
MIN_CONTRACTION = 3.0


def pca_space(n_features, n_components):
    """The sphere S^(p-1) (k = 1) or Stiefel(p, k): where the basis W lies."""
    if n_components == 1:
        return Hypersphere(n_features - 1)
    return Stiefel(n_features, n_components)


class PCALoss(PerSampleLoss):
    """f(W; z) = -|W^T z|^2 on the sphere (W [p]) or the Stiefel manifold (W [p, k]).

    Parameters
    ----------
    space : Hypersphere or Stiefel
    data_norm : float or None
        ``check_data`` sets non-finite rows to zero and scales the others down to this
        norm (None: not scaled).
    """

    def __init__(self, space, data_norm=None):
        super().__init__(space)
        self.data_norm = data_norm

    def check_data(self, data):
        """Rows [n, p]: non-finite ones zeroed, the others scaled to norm <= data_norm."""
        bound = np.inf if self.data_norm is None else self.data_norm
        return to_backend(bounded_rows(to_numpy(data), bound))

    def _projections(self, point, data):
        """W^T z_i: [k] for the sphere ([n] per point), [n, k] for Stiefel."""
        if point.ndim == 1:
            return gs.einsum("np,p->n", data, point)
        return gs.einsum("np,pk->nk", data, point)

    def values(self, point, data):
        """-|W^T z_i|^2, shape=[n]."""
        projections = self._projections(point, data)
        if point.ndim == 1:
            return -(projections**2)
        return -gs.sum(projections**2, axis=-1)

    def gradients(self, point, data):
        """-2 (I - W W^T) z_i (W^T z_i)^T, shape=[n, *space.shape]."""
        projections = self._projections(point, data)
        if point.ndim == 1:
            residuals = data - gs.einsum("n,p->np", projections, point)
            return -2 * gs.einsum("np,n->np", residuals, projections)
        residuals = data - gs.einsum("nk,pk->np", projections, point)
        return -2 * gs.einsum("np,nk->npk", residuals, projections)


def prepare_rows(data_norm, mean_event, trace_event, data, rng):
    """The preliminary releases: the private mean (with ``mean_event``) and trace.

    Returns
    -------
    rows : numpy.ndarray or dask.array.Array, shape=[n_samples, n_features]
        The rows the run reads (mapped, centred on the private mean).
    fitted : dict
        ``mean_``.
    trace : tuple of one float
        The private trace floored at twice its noise (the steps' scale).
    """
    rows, mean = private_rows(_dask.numpy_or_dask(data), data_norm, mean_event, rng)
    noise_std = trace_event.noise_std
    trace = noisy_trace(rows, noise_std, rng, **stage_of(trace_event))
    context = (max(trace, 2 * noise_std),)
    return _dask.backend_or_dask(rows), {"mean_": mean}, context


def step_rule(dim, inner_steps, clip_norm, noise_stds, context):
    """DP-RGD steps a s^2 / T, scaled by 1 / T (T the private trace: the loss's Hessian
    has norm <= 2 lambda_1 <= 2 T) whatever the looseness of B, with a = ``RGD_MAX_STEP``
    (larger steps left the Stiefel manifold in geomstats' exponential map) and
    s = T / sqrt(T^2 + d sigma^2) the noise-aware shrink measured against T (squared, as
    DP-RSGD's offset 1 / s^2); compared with other schedules in docs/benchmarks/pca.md.
    """
    trace = context[0]
    noise = dim * sum(std**2 for std in noise_stds)
    shrink2 = trace**2 / (trace**2 + noise)
    return ConstantStep(RGD_MAX_STEP * shrink2 / trace)


def ratio_rule(dim, signal, default_steps, step_sizes, noise_stds, clip_norm, output,
               context):
    """``_diagnostics.noise_ratio`` in radians on the model problem whose curvature and
    trace are ``signal`` (``SIGNAL_FRACTION`` B^2), public: the default steps are those
    ``step_rule`` gives at that trace (not the private one), a user's steps are used as
    given; the same on neighbouring datasets."""
    if default_steps:
        step = step_rule(dim, None, clip_norm, noise_stds, (signal,))(0)
        step_sizes = np.full(len(step_sizes), step)
    steps = np.asarray(step_sizes) * signal
    stds = tuple(std / signal for std in noise_stds)
    return noise_ratio(steps, stds, dim, 1.0, output)


@dataclass(frozen=True)
class PCAGradientRelease(Mechanism):
    """``GradientRelease`` on PCA's loss plus the released ``explained_variance_``.

    Warns (a ConvergenceWarning, public quantities only) when it is built with the
    default schedule and that schedule cannot converge whatever the data: its steps
    a s^2 / T contract the model problem with curvature T by exp(-n_iter a s^2), and s
    grows with T <= B^2, so its value at T = B^2 bounds the contraction.

    Parameters
    ----------
    n_samples, n_features, n_components : int
        n, p and k.
    data_norm : float
        B, the public bound the rows are mapped to; the clip norm is B^2.
    epsilon, delta : float
        The guarantee of the whole release (mean, trace, run and variances).
    mean_share : float
        The share of mu^2 of a private mean subtracted first (0: none).
    n_iter : int, optional
        Steps; default ``PCA_ITER_FACTOR`` times ``_defaults.default_n_iter`` at the
        whole epsilon.
    step_size : float or callable, optional
        Default ``step_rule``.
    output : str, optional
        As in ``GradientRelease``.
    noise_method : str
        ``TangentGaussian`` method of the noise.
    label : str
        The estimator's name, the start of the events' labels.
    verbose : bool
    """

    reads_dask = True

    n_samples: int
    n_features: int
    n_components: int
    data_norm: float
    epsilon: float
    delta: float
    mean_share: float = 0.0
    n_iter: int | None = None
    step_size: object = None
    output: str | None = None
    noise_method: str = "transport"
    label: str = "PrivatePCA"
    verbose: bool = False

    def __post_init__(self):
        if self.step_size is None:
            self._warn_if_cannot_converge()

    def _event(self, part, share, sensitivity):
        return pca_event(self.epsilon, self.delta, share, part, sensitivity, self.label)

    @property
    def _rest(self):
        return 1.0 - self.mean_share

    @functools.cached_property
    def mean_event(self):
        """The private mean's event (sensitivity 2B / n), or None."""
        if not self.mean_share:
            return None
        return self._event(MEAN_LABEL, self.mean_share, 2 * self.data_norm / self.n_samples)

    @functools.cached_property
    def trace_event(self):
        """The private trace's event (sensitivity B^2 / n)."""
        return self._event(SCALE_LABEL, self._rest * SCALE_SHARE,
                           self.data_norm**2 / self.n_samples)

    @functools.cached_property
    def variance_event(self):
        """The projected moments' event (sensitivity sqrt(2) B^2 / n)."""
        return self._event(LABEL, self._rest * VARIANCE_SHARE,
                           second_moment_sensitivity(self.data_norm, self.n_samples))

    @functools.cached_property
    def gradient(self):
        """The DP-RGD run, on the rest of mu^2."""
        space = pca_space(self.n_features, self.n_components)
        dim = int(space.dim)
        n_iter = self.n_iter or PCA_ITER_FACTOR * _defaults.default_n_iter(
            "rgd", self.n_samples, dim, self.epsilon, self.delta)
        preliminary = (() if self.mean_event is None else (self.mean_event,)) + (
            self.trace_event,)
        # the run's target: its share of mu^2, as a point of its own privacy curve
        epsilon, delta = share_target(self.epsilon, self.delta,
                                      self._rest * (1.0 - SCALE_SHARE - VARIANCE_SHARE))
        return GradientRelease(
            space=space, loss=PCALoss(space, self.data_norm), n_samples=self.n_samples,
            epsilon=epsilon, delta=delta, method="rgd", n_iter=n_iter, clip_norm=self.data_norm**2,
            init_point=start_basis(self.n_features, self.n_components),
            step_size=self.step_size, output=self.output, noise_method=self.noise_method,
            label=self.label, verbose=self.verbose,
            preliminary=Preliminary(preliminary, functools.partial(
                prepare_rows, self.data_norm, self.mean_event, self.trace_event)),
            step_rule=functools.partial(step_rule, dim),
            ratio_rule=functools.partial(ratio_rule, dim,
                                         SIGNAL_FRACTION * self.data_norm**2,
                                         self.step_size is None))

    def _warn_if_cannot_converge(self):
        gradient = self.gradient
        scale = self.data_norm**4
        noise = gradient.dim * sum(s**2 for s in gradient.plan.strategy.noise_stds)
        shrink2 = scale / (scale + noise)
        contraction = gradient.resolved_n_iter * RGD_MAX_STEP * shrink2
        if contraction < MIN_CONTRACTION:
            warnings.warn(
                f"the default DP-RGD schedule ({gradient.resolved_n_iter} steps, at most "
                f"{contraction:.2g} contraction units against the {MIN_CONTRACTION:g} "
                "needed) cannot converge at this n, epsilon and data_norm, whatever the "
                "data: more data, a larger epsilon, a tighter data_norm or "
                "method='analyze_gauss' help",
                ConvergenceWarning, stacklevel=user_stacklevel())

    def events(self):
        return self.gradient.events() + (self.variance_event,)

    def release(self, data, weights, rng):
        fitted = self.gradient.release(data, weights, rng)
        basis = to_numpy(fitted["estimate_"]).reshape(self.n_features, -1)
        mean = fitted["mean_"] if self.mean_event is not None else None
        rows = centred_rows(_dask.numpy_or_dask(data), self.data_norm, mean)
        event = self.variance_event
        moments, residual = noisy_projected_moments(rows, basis, event.noise_std, rng,
                                                    **stage_of(event))
        variances, rotation = np.linalg.eigh(moments)
        basis = basis @ rotation[:, ::-1]
        fitted.update(explained(variances[::-1], residual, self.n_features))
        fitted["estimate_"] = to_backend(basis[:, 0] if basis.shape[1] == 1 else basis)
        fitted["events_"] = tuple(fitted["events_"]) + (self.variance_event,)
        return fitted
