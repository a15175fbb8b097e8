"""Private principal components: PrivateERM on the sphere (k = 1) or the Stiefel manifold.

The loss of one record z (a row of X, scaled to norm <= ``data_norm``) at an orthonormal
basis W [p, k] is f(W; z) = -|W^T z|^2, minimised over the data by the leading
k-dimensional principal subspace (Han et al. 2024, principal eigenvector for k = 1).
Its Euclidean gradient is -2 z z^T W, and its Riemannian gradient

    grad f(W; z) = -2 (I - W W^T) z (W^T z)^T

is the same for the sphere's metric (k = 1) and for the Stiefel canonical metric (it is
horizontal, W^T grad = 0, where the canonical metric is Frobenius). Its norm is
2 |(I - W W^T) z| |W^T z| <= |z|^2 (the two factors are the legs of a right triangle
with hypotenuse |z|, and 2ab <= a^2 + b^2), attained when z makes an angle of 45 degrees
with span(W). So a public row-norm bound B gives the clip norm C = B^2, tighter by half
than the 2 B^2 of Han et al.
"""

import math
import warnings

import geomstats.backend as gs
import numpy as np
from geomstats.geometry.hypersphere import Hypersphere
from geomstats.geometry.stiefel import Stiefel
from sklearn.base import TransformerMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import check_is_fitted

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp._dask import backend_or_dask, numpy_or_dask
from geomstats_dp._validation import (
    check_finite_array,
    check_positive_finite,
    check_positive_int,
    check_probability,
)
from geomstats_dp.learning._data import check_array, check_sample_count
from geomstats_dp.learning._diagnostics import noise_ratio, user_stacklevel
from geomstats_dp.learning._pca_rows import (
    bounded_rows,
    noisy_mean,
    noisy_trace,
    stage_of,
)
from geomstats_dp.learning.erm import GRADIENT_FITTED, PrivateERM
from geomstats_dp.learning.mechanisms.analyze_gauss import AnalyzeGaussRelease
from geomstats_dp.learning.mechanisms.pca_gradient import LABEL as VARIANCE_LABEL
from geomstats_dp.learning.mechanisms.pca_gradient import PCAGradientRelease
from geomstats_dp.optim import ConstantStep, PerSampleLoss
from geomstats_dp.privacy import GaussianEvent, calibrate_gaussian, share_epsilon

# The Rayleigh quotient contracts at the rate of the eigengap, not at the unit rate of
# d^2 / 2: 6x the Frechet mean's steps (on digits and a spiked model, 4x and 8x were best)
PCA_ITER_FACTOR = 6
PCA_FITTED = GRADIENT_FITTED + ("components_", "mean_", "explained_variance_",
                                 "explained_variance_ratio_", "data_norm_",
                                 "n_features_in_")
# Shares of the Gaussian-DP budget mu^2 of the gradient methods' two small releases
SCALE_LABEL = "trace"
SCALE_SHARE = 0.02
VARIANCE_SHARE = 0.03
RGD_MAX_STEP = 0.5
# the default DP-RGD run must contract the model problem by exp(-3) at least
MIN_CONTRACTION = 3.0
# method="auto": "rgd" above this number of features (``auto_method``)
AUTO_MAX_FEATURES = 4096


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


class PrivatePCA(TransformerMixin, PrivateERM):
    """Differentially private principal components, a scikit-learn transformer.

    Privacy: replace-one adjacency on the rows of X; (epsilon, delta)-DP release of
    ``components_``, ``mean_``, ``explained_variance_`` and ``explained_variance_ratio_``.
    Each row is mapped to norm <= ``data_norm`` B (a non-finite row to zero, a longer
    row scaled down: a per-record map, so the guarantee holds for any data). Every release
    is Gaussian, calibrated by the library's accountant (``calibrate_gaussian``) on a
    share of the Gaussian-DP budget mu^2 (mu = ``gdp_mu(epsilon, delta)``), so that the
    events of a fit compose exactly to (epsilon, delta):

    - ``centered=False``: a private mean first (sensitivity 2B / n, share
      ``mean_budget_fraction``), subtracted from every row, which is then mapped to
      norm <= B again;
    - ``method="analyze_gauss"``: the second-moment matrix (1/n) sum z z^T plus a
      symmetric Gaussian matrix (sensitivity sqrt(2) B^2 / n for its upper triangle),
      top-k eigenvectors (Dwork, Talwar, Thakurta & Zhang 2014;
      ``mechanisms.analyze_gauss``);
    - ``method="rgd"``: a private trace (1/n) sum |z|^2
      (sensitivity B^2 / n, share ``SCALE_SHARE``) that scales the steps, DP Riemannian
      gradient descent of f(W; z) = -|W^T z|^2 on the sphere (k = 1) or the Stiefel
      manifold (gradients of norm <= B^2: the module docstring; sensitivity 2 B^2 / n
      per step), then the variances along the components (sensitivity sqrt(2) B^2 / n,
      share ``VARIANCE_SHARE``; ``mechanisms.pca_gradient``);
    - ``method="auto"`` (default): "analyze_gauss" up to ``AUTO_MAX_FEATURES``
      features, "rgd" above (``auto_method``: a public rule, measured in the baseline
      benchmark); ``method_`` records the choice.

    Parameters
    ----------
    n_components : int
        k, between 1 and n_features - 1.
    epsilon, delta : float
    data_norm : float
        B, a public bound on the row norms (from the measurement's range, never from the
        data; features in [0, 1]^p give B = sqrt(p)). Required.
    centered : bool
        True: the rows are used as they are (their second moment; data centred publicly,
        or uncentred PCA). False: a private mean is subtracted first (scikit-learn's PCA).
    mean_budget_fraction : float
        With ``centered=False``, the share of mu^2 spent on the mean, in (0, 1).
    method : {"auto", "analyze_gauss", "rgd"}
    n_iter, step_size, output, noise_method, budget, random_state, secure, verbose
        As in ``PrivateERM`` (DP-RGD). Default DP-RGD steps a / T with T the
        private trace and a <= 1/2 shrunk by the noise (``_default_step_size``):
        scale-free, whatever the looseness of B; 6x the Frechet mean's number of steps
        (``PCA_ITER_FACTOR``).

    Attributes
    ----------
    components_ : array-like, shape=[n_components, n_features]
        Orthonormal rows spanning the released subspace, by decreasing released variance.
    explained_variance_ : array-like, shape=[n_components]
        Released variances along the components (floored at 0).
    explained_variance_ratio_ : array-like, shape=[n_components]
        Over the released total variance.
    mean_ : array-like, shape=[n_features]
        The private mean (zeros when ``centered=True``).
    method_ : str
        The method run ("auto" resolved).
    noise_ratio_ : float
        Expected noise displacement against the signal, from released quantities
        (analyze_gauss: noise spectral norm over the k-th released eigenvalue less that
        norm; gradient methods: the noise ratio of ``PrivateERM`` in radians, with the
        curvature set to the private trace less twice its noise, an optimistic eigengap). Above 1 a NoiseDominatesWarning is
        emitted. Derived from the release, it differs between neighbouring datasets as
        the release does.
    data_norm_ : float
    n_features_in_ : int
    estimate_, budget_, noise_multiplier_, noise_multipliers_, n_iter_,
    n_gradient_evaluations_, clip_norm_, events_
        As in ``PrivateERM`` (``estimate_`` is W, [p] or [p, k]; ``n_iter_`` is 1 and
        ``clip_norm_`` None for analyze_gauss).
    """

    _MECHANISMS = {"auto": None, "analyze_gauss": AnalyzeGaussRelease,
                   "rgd": PCAGradientRelease}  # "auto": resolved by _choose_method
    _parameter_constraints = {**PrivateERM._parameter_constraints,
                              "method": [StrOptions(set(_MECHANISMS))]}
    _FITTED = PCA_FITTED

    def __init__(self, n_components=1, epsilon=1.0, delta=1e-5, data_norm=None,
                 centered=True, mean_budget_fraction=0.1, method="auto", n_iter=None,
                 step_size=None, output=None, noise_method="transport", budget=None,
                 random_state=None, secure=False, verbose=False):
        self.n_components = n_components
        self.epsilon = epsilon
        self.delta = delta
        self.data_norm = data_norm
        self.centered = centered
        self.mean_budget_fraction = mean_budget_fraction
        self.method = method
        self.n_iter = n_iter
        self.step_size = step_size
        self.output = output
        self.noise_method = noise_method
        self.budget = budget
        self.random_state = random_state
        self.secure = secure
        self.verbose = verbose
        self._remember_budget()

    # PrivateERM reads these; PCA fixes them from its own parameters.
    @property
    def space(self):
        """The sphere S^(p-1) (k = 1) or Stiefel(p, k), set by ``fit``."""
        return self._space

    @property
    def clip_norm(self):
        """B^2, the bound on the per-sample gradient norms."""
        return self._data_norm**2

    clip_norm_single = None
    clip_quantile = clip_budget_fraction = None
    # full-batch DP-RGD only: the budget shares compose exactly under Gaussian DP, which
    # subsampled DP-RSGD / DP-RSVRG accounting does not (it overshot epsilon by 0.5-1.3%)
    batch_size = inner_steps = dataset_size = None
    sampling = "without_replacement"
    gradient = None
    gradient_kind = "riemannian"

    @property
    def init_point(self):
        """``start_basis``: data-independent."""
        return start_basis(self._n_features, self.n_components)

    def fit(self, X, y=None):
        """Release private principal components of ``X``.

        Parameters
        ----------
        X : array-like, shape=[n_samples, n_features]
            A ``dask.array.Array`` is reduced chunk by chunk on its workers (Analyze
            Gauss and DP-RGD), as in ``PrivateERM.fit``.
        y : None
            Ignored.

        Returns
        -------
        self
        """
        return super().fit(X)

    def transform(self, X):
        """Project X on the released components (post-processing).

        Parameters
        ----------
        X : array-like, shape=[n_samples, n_features]
            Finite values.

        Returns
        -------
        X_new : array-like, shape=[n_samples, n_components]
        """
        check_is_fitted(self, "components_")
        data = to_backend(self._finite_input(X, "X", self.n_features_in_))
        return gs.matmul(data - self.mean_, gs.transpose(self.components_))

    def inverse_transform(self, X):
        """Map projections back to the feature space (post-processing).

        Parameters
        ----------
        X : array-like, shape=[n_samples, n_components]
            Finite values.

        Returns
        -------
        X_original : array-like, shape=[n_samples, n_features]
        """
        check_is_fitted(self, "components_")
        data = to_backend(self._finite_input(X, "X", self.n_components))
        return gs.matmul(data, self.components_) + self.mean_

    @staticmethod
    def _finite_input(X, name, n_columns):
        data = check_array(X, name)
        if data.ndim != 2 or data.shape[1] != n_columns:
            raise ValueError(
                f"{name} must have shape [n_samples, {n_columns}], got {data.shape}"
            )
        check_finite_array(data, name)
        return data

    # -- the pipeline's hooks ----------------------------------------------------------

    def _check_input(self, X, y, sample_weight):
        data = check_array(X, "X", lazy=True)
        if data.ndim != 2:
            raise ValueError(f"X must have shape [n_samples, n_features], got {data.shape}")
        check_sample_count(len(data), "X")
        n_features = data.shape[1]
        k = check_positive_int(self.n_components, "n_components")
        if k >= n_features:
            raise ValueError(
                f"n_components must be < n_features = {n_features}, got {k}"
            )
        if self.data_norm is None:
            raise ValueError(
                "data_norm must be given: a public bound on the row norms, from the "
                "measurement's range (features in [0, 1]^p: sqrt(p)), never from the data"
            )
        self._data_norm = check_positive_finite(self.data_norm, "data_norm")
        if not isinstance(self.centered, (bool, np.bool_)):
            raise TypeError(f"centered must be a bool, got {self.centered!r}")
        if not self.centered:
            check_probability(self.mean_budget_fraction, "mean_budget_fraction")
        self._n_features = n_features
        self._space = Hypersphere(n_features - 1) if k == 1 else Stiefel(n_features, k)
        return data, None

    def _choose_method(self, n_samples):
        if self.method != "auto":
            return self.method
        return auto_method(self._n_features)

    @property
    def _mean_share(self):
        return 0.0 if self.centered else self.mean_budget_fraction

    def _share(self, part):
        """The share of mu^2 of each release of this fit (they sum to 1)."""
        rest = 1.0 - self._mean_share
        if part == "mean":
            return self._mean_share
        if self._method == "analyze_gauss":
            return rest
        shares = {SCALE_LABEL: SCALE_SHARE, VARIANCE_LABEL: VARIANCE_SHARE}
        return rest * shares.get(part, 1.0 - SCALE_SHARE - VARIANCE_SHARE)

    def _share_epsilon(self, part):
        """Epsilon at ``delta`` of a Gaussian release spending ``part``'s share of mu^2."""
        return share_epsilon(self.epsilon, self.delta, self._share(part))

    def _release_event(self, part, sensitivity):
        """The calibrated one-shot Gaussian event of ``part`` (its label names it)."""
        multiplier = calibrate_gaussian(self._share_epsilon(part), self.delta, 1)
        return GaussianEvent.from_noise(multiplier * sensitivity, sensitivity,
                                        label=f"PrivatePCA: {part}")

    def _mean_events(self, n_samples):
        if self.centered:
            return ()
        return (self._release_event("mean", 2 * self._data_norm / n_samples),)

    @property
    def _optimisation_epsilon(self):
        return self._share_epsilon("optimisation")

    def _preliminary_events(self, n_samples):
        return self._mean_events(n_samples) + (
            self._release_event(SCALE_LABEL, self._data_norm**2 / n_samples),)

    def _rows(self, X, mean):
        """Rows mapped to norm <= B, centred on ``mean`` (when centring) and mapped again."""
        rows = bounded_rows(X, self._data_norm)
        return rows if self.centered else bounded_rows(rows - mean, self._data_norm)

    def _private_rows(self, X, rng):
        """The rows the main release reads, and the private mean (zeros if none)."""
        mean = np.zeros(X.shape[1])
        if not self.centered:
            (event,) = self._mean_events(len(X))
            # computed now (on a Dask array: one pass of the workers), read by every row
            mean = np.asarray(noisy_mean(bounded_rows(X, self._data_norm), event.noise_std,
                                         rng, **stage_of(event)))
        return self._rows(X, mean), mean

    def _prepare(self, data, rng):
        rows, mean = self._private_rows(numpy_or_dask(data), rng)
        scale_event = self._preliminary_events(len(rows))[-1]
        trace = noisy_trace(rows, scale_event.noise_std, rng, **stage_of(scale_event))
        # the steps' scale, floored at twice its noise; the noise ratio's, a lower bound
        self._trace = max(trace, 2 * scale_event.noise_std)
        self._trace_lower = trace - 2 * scale_event.noise_std
        return backend_or_dask(rows), {"mean_": mean}

    def _make_loss(self):
        return PCALoss(self.space, self._data_norm)

    def _default_step_size(self, inner_steps, clip_norm, noise_stds):
        """DP-RGD steps a s^2 / T, scaled by 1 / T (T the private trace: the loss's
        Hessian has norm <= 2 lambda_1 <= 2 T) whatever the looseness of B, with a = ``RGD_MAX_STEP`` (larger steps left the Stiefel
        manifold in geomstats' exponential map) and s = T / sqrt(T^2 + d sigma^2) the
        noise-aware shrink measured against T (squared, as DP-RSGD's offset 1 / s^2).
        On 32,000 16 x 16 image patches at epsilon = 0.1, k = 1, 2 seeds, the share of
        the top variance captured: a s^2 / T 0.92 (centred: 0.80), a s / T 0.88, the
        former 0.75 s / B^2 0.95 (centred: 0.18), a bias-noise balance 0.41.
        """
        noise = int(self.space.dim) * sum(std**2 for std in noise_stds)
        shrink2 = self._trace**2 / (self._trace**2 + noise)
        return ConstantStep(RGD_MAX_STEP * shrink2 / self._trace)

    def _warn_if_cannot_converge(self, n_iter, noise_stds):
        """ConvergenceWarning when even the best case cannot converge (public).

        The default DP-RGD steps a s^2 / T contract the model problem with curvature T by
        exp(-n_iter a s^2); s = T / sqrt(T^2 + d sigma^2) grows with T <= B^2, so its
        value at T = B^2 bounds the contraction from public quantities only.
        """
        if self.step_size is not None:
            return
        scale = self._data_norm**4
        shrink2 = scale / (scale + int(self.space.dim) * sum(s**2 for s in noise_stds))
        contraction = n_iter * RGD_MAX_STEP * shrink2
        if contraction < MIN_CONTRACTION:
            warnings.warn(
                f"the default DP-RGD schedule ({n_iter} steps, at most {contraction:.2g} "
                f"contraction units against the {MIN_CONTRACTION:g} needed) cannot "
                "converge at this n, epsilon and data_norm, whatever the data: more data, "
                "a larger epsilon, a tighter data_norm or method='analyze_gauss' help",
                ConvergenceWarning, stacklevel=user_stacklevel())

    def _noise_ratio(self, step_sizes, noise_stds, clip_norm, output):
        """PrivateERM's noise ratio in radians, with curvature h the private trace less
        twice its noise (infinite when h <= 0: the noise hides the data's scale)."""
        curvature = self._trace_lower
        if curvature <= 0:
            return math.inf
        steps = np.asarray(step_sizes) * curvature
        stds = tuple(std / curvature for std in noise_stds)
        return noise_ratio(steps, stds, int(self.space.dim), 1.0, output)

    def _settings(self, n_samples):
        n_iter, batch_size, inner_steps, output = super()._settings(n_samples)
        return (self.n_iter or PCA_ITER_FACTOR * n_iter), batch_size, inner_steps, output

    def _finish(self, fitted):
        fitted["components_"] = gs.transpose(
            gs.reshape(to_backend(to_numpy(fitted["estimate_"])), (self._n_features, -1)))
        for name in ("mean_", "explained_variance_", "explained_variance_ratio_"):
            fitted[name] = to_backend(fitted[name])
        fitted["data_norm_"] = self._data_norm
        fitted["n_features_in_"] = self._n_features
        return fitted

    @staticmethod
    def _explained(top, rest):
        """explained_variance_ and _ratio_ from released variances (negatives floored)."""
        top = np.maximum(np.asarray(top, dtype=np.float64), 0.0)
        total = top.sum() + max(float(rest), 0.0)
        ratio = top / total if total > 0 else np.zeros_like(top)
        return {"explained_variance_": top, "explained_variance_ratio_": ratio}


def auto_method(n_features):
    """``method="auto"``: "analyze_gauss" up to ``AUTO_MAX_FEATURES`` features, else "rgd".

    A rule on a public quantity only. In the baseline benchmark (five real datasets,
    p = 16 to 256, epsilon = 0.1 to 10, k = 1 and 5: docs/benchmarks/baselines.md) and
    in one-off runs on image patches with p = 1,024 (epsilon 0.1 to 1), Analyze Gauss
    captured at least as much variance as DP-RGD, within two standard errors: the noise
    crossover expected for large p did not appear. Above ``AUTO_MAX_FEATURES`` its p x p matrix (p^2
    floats) and eigendecomposition (p^3) cost more than DP-RGD's passes over the data.

    Returns
    -------
    method : {"analyze_gauss", "rgd"}
    """
    return "rgd" if n_features > AUTO_MAX_FEATURES else "analyze_gauss"


def explained_variance_ratio(components, X):
    """w^T C w / lambda_1 summed over components: the share of the top-k variance captured.

    Parameters
    ----------
    components : array-like, shape=[k, p]
    X : numpy.ndarray, shape=[n, p]
        Centred data (not private: a utility measurement).

    Returns
    -------
    ratio : float
    """
    components, X = to_numpy(components), to_numpy(X)
    covariance = X.T @ X / len(X)
    eigenvalues = np.linalg.eigvalsh(covariance)[::-1]
    captured = np.trace(components @ covariance @ components.T)
    return float(captured / eigenvalues[: len(components)].sum())
