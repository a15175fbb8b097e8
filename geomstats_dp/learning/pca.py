"""Private principal components: Analyze Gauss or DP-RGD on the sphere (k = 1) or the
Stiefel manifold (``learning.mechanisms.analyze_gauss``, ``mechanisms.pca_gradient``).
"""

import math
import warnings
from numbers import Real
from typing import ClassVar

import geomstats.backend as gs
import numpy as np
from scipy import sparse
from sklearn.base import TransformerMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp._validation import (
    PROBABILITY,
    PositiveFinite,
    PositiveInt,
    check_finite_array,
)
from geomstats_dp.learning._base import PrivateEstimator
from geomstats_dp.learning._data import check_array, check_sample_count
from geomstats_dp.learning._gradient_methods import (
    GRADIENT_CONSTRAINTS,
    GRADIENT_FITTED,
)
from geomstats_dp.learning.mechanisms.analyze_gauss import AnalyzeGaussRelease
from geomstats_dp.learning.mechanisms.pca_gradient import (
    PCAGradientRelease,
    PCALoss,
    start_basis,
)
from geomstats_dp.privacy import PrivacyLeakWarning

__all__ = ["PCALoss", "PrivatePCA", "auto_method", "explained_variance_ratio",
           "start_basis"]

PCA_FITTED = GRADIENT_FITTED + ("components_", "mean_", "explained_variance_",
                                 "explained_variance_ratio_", "noise_variance_",
                                 "data_norm_",
                                 "n_features_in_")
# full-batch DP-RGD only: the budget shares compose exactly under Gaussian DP, which
# subsampled DP-RSGD / DP-RSVRG accounting does not
MECHANISMS = {"analyze_gauss": AnalyzeGaussRelease, "rgd": PCAGradientRelease}
# centering: a private mean subtracted first (scikit-learn's PCA), or the rows as they are
CENTERINGS = ("private_mean", "none")
# score: the noise variance is floored at this fraction of B^2 / p (a public scale), so
# that the likelihood stays finite when the released residual is not positive
NOISE_VARIANCE_FLOOR = 1e-6
# method="auto": "rgd" above this number of features (``auto_method``)
AUTO_MAX_FEATURES = 4096


class PrivatePCA(TransformerMixin, PrivateEstimator):
    """Differentially private principal components, a scikit-learn transformer.

    Privacy: replace-one adjacency on the rows of X; (epsilon, delta)-DP release of
    ``components_``, ``mean_``, ``explained_variance_`` and ``explained_variance_ratio_``.
    Each row is mapped to norm <= ``data_norm`` B (a non-finite row to zero, a longer
    row scaled down: a per-record map, so the guarantee holds for any data). Every release
    is Gaussian, calibrated by the library's accountant (``calibrate_gaussian``) on a
    share of the Gaussian-DP budget mu^2 (mu = ``gdp_mu(epsilon, delta)``), so that the
    events of a fit compose exactly to (epsilon, delta):

    - ``centering="private_mean"`` (default, as scikit-learn's PCA centres): a private
      mean first (sensitivity 2B / n, share ``mean_budget_fraction``), subtracted from
      every row, which is then mapped to norm <= B again; ``centering="none"``: the rows
      as they are (their uncentred second moment);
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
    - ``start_shrinkage`` c > 0 ("analyze_gauss" only): the top-k eigenvectors of the
      noisy matrix plus tau P0, P0 the projector on the public start ``start_basis`` and
      tau = c 2 sigma sqrt(p) the public scale of the noise matrix's spectral norm;
      post-processing of the same release (the same adjacency, sensitivity and events;
      ``AnalyzeGaussRelease``);
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
    centering : {"private_mean", "none"}
        "private_mean" (default): a private mean is released and subtracted first, as
        scikit-learn's PCA centres. "none": the rows are used as they are (an uncentred
        PCA, or data centred publicly), the whole budget on the components.
    mean_budget_fraction : float
        With ``centering="private_mean"``, the share of mu^2 spent on the mean, in (0, 1).
    method : {"auto", "analyze_gauss", "rgd"}
    start_shrinkage : float
        "analyze_gauss": c >= 0, the weight of the public start added to the noisy
        matrix in units of the noise's spectral norm; default 0 (Analyze Gauss's
        eigenvectors; measured in docs/benchmarks/pca.md, "Shrinking towards the public
        start").
    n_iter : int, optional
        "rgd": the number of steps; default ``PCA_ITER_FACTOR`` times the Frechet
        mean's (``mechanisms.pca_gradient``).
    step_size : float or callable, optional
        "rgd": constant or schedule ``t -> eta_t``; default a s^2 / T with T the
        private trace and a <= 1/2 shrunk by the noise (``pca_gradient.step_rule``):
        scale-free, whatever the looseness of B.
    output : {"last", "random", "average", "weighted_average"}, optional
        "rgd": which iterate is released; default "last".
    noise_method : str
        "rgd": the ``TangentGaussian`` method of the noise.
    budget : PrivacyBudget, optional
        Budget to charge; default the one active (``with budget:``) when the estimator
        was created or fitted, else a fresh PrivacyBudget(epsilon, delta) for this fit.
    random_state : None, int or numpy.random.Generator
    secure : bool
        Draw the noise from the operating system's entropy (random_state must be None).
    verbose : bool
        "rgd": show a progress bar.

    Attributes
    ----------
    components_ : array-like, shape=[n_components, n_features]
        Orthonormal rows spanning the released subspace, by decreasing released variance.
    explained_variance_ : array-like, shape=[n_components]
        Released variances along the components (floored at 0).
    explained_variance_ratio_ : array-like, shape=[n_components]
        Over the released total variance.
    noise_variance_ : float
        The released variance outside the components over the p - k other directions
        (floored at 0), as in scikit-learn's PCA: the noise of ``score``'s model.
    mean_ : array-like, shape=[n_features]
        The private mean (zeros with ``centering="none"``).
    method_ : str
        The method run ("auto" resolved).
    noise_ratio_ : float
        Expected noise against the largest signal any data could have, public (a
        function of n, p, epsilon, delta and the settings: the same on neighbouring
        datasets). Analyze Gauss: the noise matrix's expected spectral norm
        2 sigma sqrt(p) over B^2, the largest eigenvalue rows of norm <= B can have;
        DP-RGD: the noise ratio of ``PrivateERM`` in radians on the model problem of
        curvature and trace B^2. Above 1 a NoiseDominatesWarning says that no data can
        make the release better than the data-independent start.
    data_norm_ : float
    n_features_in_ : int
    estimate_ : array-like, shape=[n_features] or [n_features, n_components]
        W, the released basis (``components_`` transposed; [p] for one component).
    budget_ : PrivacyBudget
        The budget charged.
    events_ : tuple
        The privacy events this fit charged to ``budget_``.
    noise_multiplier_ : float
        Noise standard deviation over the sensitivity of the main release (the matrix,
        or a DP-RGD step); ``noise_multipliers_`` (dict) for every kind of query.
    n_iter_ : int
        Manifold steps taken (1 for analyze_gauss).
    n_gradient_evaluations_ : int or None
        Per-sample gradient evaluations (None for analyze_gauss).
    clip_norm_ : float or None
        B^2, the clip norm of the gradients (None for analyze_gauss).
    """

    _FITTED = PCA_FITTED
    _parameter_constraints: ClassVar[dict] = {
        **{name: GRADIENT_CONSTRAINTS[name] for name in (
            "epsilon", "delta", "n_iter", "step_size", "output", "noise_method", "budget",
            "random_state", "secure", "verbose")},
        "n_components": [PositiveInt()],
        "data_norm": [PositiveFinite(), None],  # None: refused with its own message
        "centering": [StrOptions(set(CENTERINGS))],
        "mean_budget_fraction": PROBABILITY,
        "method": [StrOptions({"auto", *MECHANISMS})],
        "start_shrinkage": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(self, n_components=1, epsilon=1.0, delta=1e-5, data_norm=None,
                 centering="private_mean", mean_budget_fraction=0.1, method="auto",
                 start_shrinkage=0.0, n_iter=None, step_size=None, output=None,
                 noise_method="transport", budget=None, random_state=None, secure=False,
                 verbose=False):
        self.n_components = n_components
        self.epsilon = epsilon
        self.delta = delta
        self.data_norm = data_norm
        self.centering = centering
        self.mean_budget_fraction = mean_budget_fraction
        self.method = method
        self.start_shrinkage = start_shrinkage
        self.n_iter = n_iter
        self.step_size = step_size
        self.output = output
        self.noise_method = noise_method
        self.budget = budget
        self.random_state = random_state
        self.secure = secure
        self.verbose = verbose
        self._remember_budget()

    def fit(self, X, y=None):
        """Release private principal components of ``X``.

        Parameters
        ----------
        X : array-like, shape=[n_samples, n_features]
            A ``dask.array.Array`` is reduced chunk by chunk on its workers (Analyze
            Gauss and DP-RGD), never gathered (``geomstats_dp._dask``).
        y : None
            Ignored.

        Returns
        -------
        self
        """
        self._check_params()
        budget = self._start_fit(self.epsilon, self.delta)
        data = self._check_input(X)
        n_samples, n_features = data.shape
        method = self.method if self.method != "auto" else auto_method(n_features)
        mechanism = MECHANISMS[method](
            n_samples=n_samples, n_components=self.n_components,
            data_norm=float(self.data_norm), epsilon=self.epsilon, delta=self.delta,
            mean_share=self.mean_budget_fraction if self.centering == "private_mean" else 0.0,
            label=type(self).__name__, **self._method_settings(method, n_features))
        return self._fit_release(budget, method, mechanism, data, None)

    def _finish(self, fitted):
        """The scikit-learn attributes of the released basis, mean and variances."""
        n_features = len(fitted["mean_"])
        fitted["components_"] = gs.transpose(
            gs.reshape(to_backend(to_numpy(fitted["estimate_"])), (n_features, -1)))
        for name in ("mean_", "explained_variance_", "explained_variance_ratio_"):
            fitted[name] = to_backend(fitted[name])
        fitted["noise_variance_"] = float(fitted["noise_variance_"])
        fitted.update(data_norm_=float(self.data_norm), n_features_in_=n_features)
        return fitted

    def _method_settings(self, method, n_features):
        """The settings only one method takes."""
        if method != "rgd":
            return {"start_shrinkage": float(self.start_shrinkage)}
        return {"n_features": n_features, "n_iter": self.n_iter,
                "step_size": self.step_size, "output": self.output,
                "noise_method": self.noise_method, "verbose": self.verbose}

    def _check_params(self):
        """The parameters, declaratively, then the rules across them (before the data)."""
        self._validate_params()
        if self.data_norm is None:
            raise ValueError(
                "data_norm must be given: a public bound on the row norms, from the "
                "measurement's range (features in [0, 1]^p: sqrt(p)), never from the data"
            )
        if self.secure and self.random_state is not None:
            raise ValueError(
                "secure=True draws from the operating system's entropy; "
                f"random_state must be None, got {self.random_state!r}"
            )

    def _check_input(self, X):
        """Shape-only checks of X (its values are mapped row by row by the release)."""
        _refuse_sparse(X, "X")
        data = check_array(X, "X", lazy=True)
        if data.ndim != 2:
            raise ValueError(f"X must have shape [n_samples, n_features], got {data.shape}")
        check_sample_count(len(data), "X")
        if data.shape[1] < 2:
            raise ValueError(f"X has {data.shape[1]} feature(s) (shape={data.shape}) while "
                             "a minimum of 2 is required (n_components < n_features)")
        if self.n_components >= data.shape[1]:
            raise ValueError(f"n_components must be < n_features = {data.shape[1]}, "
                             f"got {self.n_components}")
        return data

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
        data = to_backend(_finite_input(X, "X", self.n_features_in_))
        return gs.matmul(data - self.mean_, gs.transpose(self.components_))

    def score_samples(self, X):
        """Log-likelihood of each row under the probabilistic PCA model of the release.

        The model of Tipping & Bishop 1999, as scikit-learn's ``PCA.score_samples``:
        x ~ N(mean_, C) with C = sigma^2 I plus (lambda_i - sigma^2)_+ along each
        component, lambda_i = ``explained_variance_`` and sigma^2 = ``noise_variance_``
        floored at ``NOISE_VARIANCE_FLOOR`` B^2 / p. Post-processing of the release: it
        spends nothing; the values are computed on X, so a PrivacyLeakWarning says that
        they are not private.

        Parameters
        ----------
        X : array-like, shape=[n_samples, n_features]
            Finite values.

        Returns
        -------
        log_likelihood : array-like, shape=[n_samples]
        """
        _warn_not_private()
        return self._log_likelihood(X)

    def score(self, X, y=None):
        """The average log-likelihood of the rows of X (``score_samples``), so that
        ``cross_val_score`` and the searches can rank settings (post-processing; a
        PrivacyLeakWarning: the value is not private).

        Parameters
        ----------
        X : array-like, shape=[n_samples, n_features]
        y : None
            Ignored.

        Returns
        -------
        score : float
        """
        _warn_not_private()
        return float(gs.mean(self._log_likelihood(X)))

    def _log_likelihood(self, X):
        """``score_samples`` without its warning."""
        check_is_fitted(self, "components_")
        data = to_backend(_finite_input(X, "X", self.n_features_in_))
        n_features = self.n_features_in_
        noise = max(self.noise_variance_,
                    NOISE_VARIANCE_FLOOR * self.data_norm_**2 / n_features)
        variances = gs.maximum(self.explained_variance_, noise)
        centred = data - self.mean_
        projections = gs.matmul(centred, gs.transpose(self.components_))
        quadratic = (gs.sum(centred**2, axis=1) / noise
                     + gs.sum(projections**2 * (1 / variances - 1 / noise), axis=1))
        log_det = gs.sum(gs.log(variances)) + (n_features - len(variances)) * math.log(noise)
        return -0.5 * (quadratic + log_det + n_features * math.log(2 * math.pi))

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
        data = to_backend(_finite_input(X, "X", self.n_components))
        return gs.matmul(data, self.components_) + self.mean_


def _warn_not_private():
    """The PrivacyLeakWarning of a value computed on the user's data."""
    warnings.warn("score evaluates a log-likelihood on the data; the value is not "
                  "differentially private", PrivacyLeakWarning, stacklevel=3)


def _refuse_sparse(X, name):
    """Raise TypeError for a scipy sparse matrix or array (the rows are mapped densely)."""
    if sparse.issparse(X):
        raise TypeError(f"{name} must be a dense array: sparse input is not supported, "
                        f"got {type(X).__name__}")


def _finite_input(X, name, n_columns):
    """X as a finite numpy array of shape [n_samples, n_columns] (post-processing input)."""
    _refuse_sparse(X, name)
    data = check_array(X, name, min_ndim=1)
    if data.ndim != 2:
        raise ValueError(f"{name} must have shape [n_samples, {n_columns}], got "
                         f"{data.shape}: Reshape your data to one row per sample")
    if data.shape[1] != n_columns:
        raise ValueError(f"{name} must have shape [n_samples, {n_columns}], got "
                         f"{data.shape}: {name} has {data.shape[1]} features, but PrivatePCA "
                         f"is expecting {n_columns} features as input")
    check_finite_array(data, name)
    return data


def auto_method(n_features):
    """``method="auto"``: "analyze_gauss" up to ``AUTO_MAX_FEATURES`` features, else "rgd".

    A rule on a public quantity only. Analyze Gauss captured at least as much variance
    as DP-RGD wherever it was measured (docs/benchmarks/pca.md, "Measurements behind the
    defaults"); above ``AUTO_MAX_FEATURES`` its p x p matrix (p^2 floats) and
    eigendecomposition (p^3) cost more than DP-RGD's passes over the data.

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
