"""Private structured prediction on a manifold (Han et al. 2024, after Rudi et al. 2018).

The prediction at a feature vector x is the minimiser over the manifold of
sum_i alpha_i(x) d(w, y_i)^2 / 2, with the kernel-ridge weights
alpha(x) = (K + gamma I)^(-1) K_x of an RBF kernel on the training features
(``learning._kernel_ridge``). By default the targets are released once by ``fit`` (on
a sphere in their ambient coordinates, elsewhere as log-coordinates at a base point) and
every prediction is post-processing; per row, each prediction is one DP gradient release
made by ``predict``, charged.
"""

from typing import ClassVar

import geomstats.backend as gs
import numpy as np
from sklearn.exceptions import NotFittedError
from sklearn.utils._param_validation import StrOptions

from geomstats_dp._backend import get_rng, to_backend, to_numpy
from geomstats_dp._validation import HasMetric, PositiveFinite, check_finite_array
from geomstats_dp.learning._base import PrivateEstimator
from geomstats_dp.learning._data import (
    check_array,
    check_sample_count,
    check_shape,
    check_values,
)
from geomstats_dp.learning._defaults import RGD_STEP_SIZE
from geomstats_dp.learning._diagnostics import NoiseDominatesWarning
from geomstats_dp.learning._gradient_methods import GRADIENT_CONSTRAINTS
from geomstats_dp.learning._kernel_ridge import (
    kernel_ridge_coefficients,
    kernel_weights,
    median_bandwidth,
    normalized_weights,
    rbf_kernel,
)
from geomstats_dp.learning._weighted_distance import (
    WeightedSquaredDistanceLoss,
    nonprivate_prediction,
)
from geomstats_dp.learning.mechanisms.base import run_release
from geomstats_dp.learning.mechanisms.extrinsic_labels import (
    ExtrinsicLabelRelease,
    is_unit_sphere,
    project_to_sphere,
)
from geomstats_dp.learning.mechanisms.gradient import GradientRelease
from geomstats_dp.learning.mechanisms.tangent_labels import ATOL, TangentLabelRelease
from geomstats_dp.optim import ConstantStep, PairedSamples, clip_tangent_vectors
from geomstats_dp.optim.initial_point import check_init_point
from geomstats_dp.privacy import resolve_budget

__all__ = ["PrivateStructuredPrediction", "WeightedSquaredDistanceLoss", "kernel_weights",
           "nonprivate_prediction"]

ROW_REGULARIZATION = 1e-3  # gamma of the per-row releases, floor of the label release's
# method -> when it releases: "fit" (once, then post-processing) or "predict" (per row)
RELEASED_AT = {"extrinsic": "fit", "labels": "fit", "rgd": "predict", "rsgd": "predict",
               "rsvrg": "predict"}
ROW_LABEL = "PrivateStructuredPrediction (row)"


class PrivateStructuredPrediction(PrivateEstimator):
    """Private structured prediction with manifold-valued targets (after Han et al. 2024).

    The non-private prediction at a feature vector x is the minimiser over the manifold of

        F_x(w) = sum_i a_i(x) d(w, y_i)^2 / 2,   a(x) = alpha(x) / sum_i alpha_i(x),
        alpha(x) = (K + gamma I)^(-1) K_x,   K_ij = exp(-|x_i - x_j|^2 / (2 h^2))

    (Rudi et al. 2018). Every release is label-level (the unit is one target y_i, the
    features X and X_new are public; adjacency replace-one: y_j replaced by any point of
    the space, X fixed). Feature changes are not covered: replacing one x_j changes every
    alpha_i(x) through (K + gamma I)^(-1).

    - ``method="auto"`` (default): "extrinsic" on geomstats' unit sphere (extrinsic
      coordinates), "labels" on every other space (public: the space's class).
    - ``method="extrinsic"`` (``learning.mechanisms.extrinsic_labels``): ``fit`` releases
      a private mean mu~ of the targets (sensitivity 2 / n) and the targets y~_i + noise
      in R^(d+1) (sensitivity 2; ``clip_norm`` unused), composed exactly, the mean's share
      a public rule. ``predict`` (post-processing): mu~ + sum_i beta_i(x) (y~_i - mu~),
      gamma = (d + 1) sigma^2 / (1 - |mu~|^2), projected onto the sphere: an extrinsic
      average (no chart to wrap), shrunk toward the private mean as the noise grows.
    - ``method="labels"`` (``learning.mechanisms.tangent_labels``): ``fit``
      releases the targets' log-coordinates v_i = Log_b(y_i) at the public point b,
      clipped to D = ``clip_norm``, plus tangent Gaussian noise of standard deviation
      sigma = z 2D (sensitivity 2D, one Gaussian release), and charges the budget once.
      b is public (``base_point``) or, by default, a private coarse mean of the targets
      (a second Gaussian release, composed exactly).
      ``predict`` is post-processing, free whatever the number of rows: Gaussian-process
      (kernel ridge) regression of the released coordinates, Exp_b(m + sum_i beta_i(x)
      (v~_i - m)) with m = sum_i v~_i / (n + gamma) and beta(x) = (K + gamma I)^(-1) K_x,
      gamma = 3 d sigma^2 / D^2 by default: the noise variance of a coordinate over
      D^2 / (3 d), the variance of a coordinate spread uniformly over [-D, D] (public).
      The predicted coordinates are clipped to D, like the targets. It is a tangent-space
      estimator at b: exact on flat spaces, approximate when the targets spread over the
      curvature scale.
    - ``method="rgd" | "rsgd" | "rsvrg"`` (per row): ``fit`` releases nothing; each row of
      ``predict`` is one ``PrivateERM`` run on f_i(w) = n a_i h_D(d(w, y_i)) (h_D the
      Huber version of d^2 / 2 at D), its weighted per-sample gradients clipped at
      C_x = n max_i |a_i(x)| D, so replacing y_j moves their mean by at most
      2 max_i |a_i(x)| D; each row is (epsilon, delta)-DP and rows compose. Every row
      is one ``GradientRelease`` run by ``run_release``; the whole call is checked
      against the budget before any row is computed. ``fit``'s attributes are left as
      they are: a ``predict`` call records its own releases in ``predict_budget_`` and
      ``predict_events_``.

    Parameters
    ----------
    space : Manifold
        Where the targets and predictions lie (e.g. ``Hyperboloid(2)``).
    bandwidth : float or None
        h of the RBF kernel, > 0. None: the median distance between training features
        (public), computed by ``fit``.
    regularization : float or None
        gamma, > 0. None: 3 d sigma^2 / D^2 for "labels", (d + 1) sigma^2 / s for
        "extrinsic" (both with a floor of 1e-3), 1e-3 per row.
    epsilon, delta : float
        The guarantee of the label release ("labels"), or of each predicted row.
    clip_norm : float or None
        D. "labels": the bound on d(b, y_i) (farther targets are pulled in to D; required).
        "extrinsic": unused (the sphere bounds the targets).
        Per row: the Huber radius of the loss and the clip norm of the unweighted
        gradients; None infers C_x from the data with a PrivacyLeakWarning (not private).
    method : {"auto", "extrinsic", "labels", "rgd", "rsgd", "rsvrg"}
    base_point : array-like, optional
        "labels": a public point b. None (default): b is released privately, the one-shot
        clipped tangent mean of the targets at the canonical point (sensitivity 2D / n,
        10% of the Gaussian-DP budget mu^2; ``learning.mechanisms.tangent_labels``).
    n_iter : int, optional
        Per row: steps (rgd, rsgd) or epochs (rsvrg), as in ``PrivateERM``.
    step_size : float or callable, optional
        Per row: constant or schedule ``t -> eta_t``. Default for "rgd" (with a
        ``clip_norm``): the constant step 1/2 shrunk by 1 / sqrt(1 + d (2 z
        max_i |a_i(x)|)^2), z the noise multiplier, so that it is noise-aware against the
        scale D of the mean gradient; else ``PrivateERM``'s default.
    batch_size : int, optional
        Per row, "rsgd": the batch size; default about sqrt(n).
    inner_steps : int, optional
        Per row, "rsvrg": inner steps per epoch; default n / 10.
    init_point : array-like, optional
        Per row: the data-independent start; default the canonical point of the space.
    noise_method : str
        Per row: the ``TangentGaussian`` method of the noise.
    budget : PrivacyBudget, optional
        "labels": charged once by ``fit``. Per row: charged by every ``predict`` call for
        its rows; default the budget active (``with budget:``) at creation or prediction,
        else a fresh budget (k epsilon, k delta) for the k rows of one ``predict`` call.
    random_state : None, int or numpy.random.Generator
        The release's generator ("labels"), or one per ``predict`` call (per row).
    secure : bool
        Draw the noise from the operating system's entropy (random_state must be None).
    verbose : bool
        Per row: show a progress bar for each row.

    Attributes
    ----------
    n_features_in_ : int
        p, the number of features.
    method_ : str
    bandwidth_, regularization_ : float
        The kernel's h and gamma ("extrinsic" by default: the public (d + 1) sigma^2).
    budget_ : PrivacyBudget
        "labels", "extrinsic": the budget ``fit`` charged (per row ``fit`` charges nothing and sets
        neither this nor ``events_``).
    events_ : tuple
        "labels", "extrinsic": the privacy events ``fit`` charged.
    noise_multiplier_ : float
        Noise standard deviation over the sensitivity: of the label release ("labels",
        set by ``fit``), or of a step of every row (set by ``predict``).
    predict_budget_ : PrivacyBudget
        Per row: the budget the last ``predict`` call charged.
    predict_events_ : tuple
        Per row: the privacy events the last ``predict`` call charged, one run per row.
    labels_ : array-like, shape=[n_samples, *space.shape]
        "labels": the released noisy log-coordinates, tangent at ``base_point_``;
        "extrinsic": the released noisy targets in R^(d+1).
    mean_ : array-like, shape=[d + 1]
        "extrinsic": the released noisy mean of the targets in R^(d+1).
    base_point_ : array-like, shape=[*space.shape]
        "labels": b. "extrinsic": ``mean_`` projected onto the sphere, the constant
        private prediction.
    noise_ratio_ : float
        "labels", "extrinsic": gamma / n, public. Above 1 the released mean is shrunk
        more than half way to b by the noise, and a NoiseDominatesWarning says the
        predictions are expected to be little better than the constant prediction b
        (threshold checked on docs/benchmarks/baselines.md).
    clip_norms_ : numpy.ndarray, shape=[k]
        Per row: C_x of each row of the last ``predict``.
    """

    _FITTED = ("n_features_in_", "method_", "bandwidth_", "regularization_", "budget_",
               "events_", "noise_multiplier_", "labels_", "mean_", "base_point_",
               "noise_ratio_",
               "clip_norms_", "predict_budget_", "predict_events_")
    _parameter_constraints: ClassVar[dict] = {
        **{name: GRADIENT_CONSTRAINTS[name] for name in (
            "epsilon", "delta", "n_iter", "step_size", "batch_size", "inner_steps",
            "init_point", "noise_method", "budget", "random_state", "secure", "verbose")},
        "space": [HasMetric()],
        "bandwidth": [PositiveFinite(), None],
        "regularization": [PositiveFinite(), None],
        "clip_norm": [PositiveFinite(), None],
        "method": [StrOptions({"auto", *RELEASED_AT})],
        "base_point": ["array-like", None],
    }
    # fit releases nothing and checks the targets: a search planning it reads them
    _planning_reads_data = True

    def __init__(self, space, bandwidth=None, regularization=None, epsilon=1.0,
                 delta=1e-5, clip_norm=None, method="auto", base_point=None, n_iter=None,
                 step_size=None, batch_size=None, inner_steps=None, init_point=None,
                 noise_method="transport", budget=None, random_state=None, secure=False,
                 verbose=False):
        self.space = space
        self.bandwidth = bandwidth
        self.regularization = regularization
        self.epsilon = epsilon
        self.delta = delta
        self.clip_norm = clip_norm
        self.method = method
        self.base_point = base_point
        self.n_iter = n_iter
        self.step_size = step_size
        self.batch_size = batch_size
        self.inner_steps = inner_steps
        self.init_point = init_point
        self.noise_method = noise_method
        self.budget = budget
        self.random_state = random_state
        self.secure = secure
        self.verbose = verbose
        self._remember_budget()

    def fit(self, X, Y):
        """Keep the training pairs; with "labels" or "extrinsic", release the targets once.

        Parameters
        ----------
        X : array-like, shape=[n_samples, n_features]
            Public features (n_samples >= 2).
        Y : array-like, shape=[n_samples, *space.shape]
            Private targets on the space.

        Returns
        -------
        self
        """
        self._check_params()
        budget = self._start_fit(self.epsilon, self.delta)
        features, targets = self._check_input(X, Y)
        bandwidth = self.bandwidth or median_bandwidth(features)
        method = self._method()
        if RELEASED_AT[method] == "predict":
            check_values(self.space, targets, ATOL, "Y")
            self._features, self._targets = features, targets
            self._set(n_features_in_=features.shape[1], method_=method,
                      bandwidth_=bandwidth,
                      regularization_=self.regularization or ROW_REGULARIZATION)
            return self
        mechanism = self._label_mechanism(method, len(targets))
        fitted = run_release(mechanism, budget, targets, None, self.random_state,
                             self.secure)
        regularization = self.regularization or max(ROW_REGULARIZATION,
                                                    mechanism.regularization)
        prior_mean = to_numpy(fitted["mean_"]) if "mean_" in fitted else None
        self._features = features
        self._coefficients, self._mean = kernel_ridge_coefficients(
            features, to_numpy(fitted["labels_"]), bandwidth,
            self.regularization or max(ROW_REGULARIZATION,
                                       mechanism.prediction_regularization(fitted)),
            prior_mean)
        ratio = regularization / len(targets)
        NoiseDominatesWarning.warn_if(
            ratio, "the label noise's regularization is {ratio} times n",
            "the constant private mean (base_point_)")
        self._set(**fitted, budget_=budget, n_features_in_=features.shape[1],
                  method_=method, bandwidth_=bandwidth, regularization_=regularization,
                  noise_ratio_=ratio)
        return self

    def _method(self):
        """``method``; "auto": "extrinsic" on the unit sphere, else "labels" (public)."""
        if self.method != "auto":
            return self.method
        return "extrinsic" if is_unit_sphere(self.space) else "labels"

    def _check_params(self):
        """The parameters, declaratively, then the rules across them (before the data)."""
        self._validate_params()
        if self.secure and self.random_state is not None:
            raise ValueError(
                "secure=True draws from the operating system's entropy; "
                f"random_state must be None, got {self.random_state!r}"
            )
        if self.method == "extrinsic" and not is_unit_sphere(self.space):
            raise ValueError(
                "method='extrinsic' needs geomstats' unit sphere (Hypersphere, extrinsic "
                f"coordinates) as space, got {type(self.space).__name__}"
            )
        if self._method() == "labels" and self.clip_norm is None:
            raise ValueError(
                "method='labels' needs clip_norm, a public bound D on the targets' "
                "distance to base_point (farther targets are pulled in to D)"
            )
        if self.init_point is not None:  # on the space, as every estimator checks it
            check_init_point(self.space, self.init_point)

    def _check_input(self, X, Y):
        """Shape checks of (X, Y): finite public features, one target per row."""
        features = _check_features(X, "X")
        check_sample_count(len(features), "X")
        targets = check_shape(self.space, Y, min_samples=1, name="Y")
        if len(targets) != len(features):
            raise ValueError(
                f"Y must hold one target per row of X ({len(features)}), got {len(targets)}"
            )
        return features, targets

    def _label_mechanism(self, method, n_samples):
        """The release of ``fit`` (method "labels" or "extrinsic")."""
        if method == "extrinsic":
            return ExtrinsicLabelRelease(self.space, n_samples, self.epsilon, self.delta)
        return TangentLabelRelease(self.space, n_samples, float(self.clip_norm),
                                   self.epsilon, self.delta, self.base_point)

    def _row_mechanism(self, n_samples, clip_norm, step_size):
        """The gradient release of one predicted row (public quantities only)."""
        return GradientRelease(
            self.space, WeightedSquaredDistanceLoss(self.space, self.clip_norm), n_samples,
            self.epsilon, self.delta, method=self.method, n_iter=self.n_iter,
            clip_norm=clip_norm, init_point=check_init_point(self.space, self.init_point),
            step_size=step_size, batch_size=self.batch_size, inner_steps=self.inner_steps,
            noise_method=self.noise_method, label=ROW_LABEL, verbose=self.verbose)

    def _check_data(self, X, Y):
        """Check every pair of (X, Y) as ``fit`` does (an error names the index in X or Y);
        the private search checks its whole data with it before any run."""
        _check_features(X, "X")
        check_values(self.space, check_shape(self.space, Y, min_samples=1, name="Y"), ATOL,
                     "Y")

    def _set(self, **fitted):
        for name, value in fitted.items():
            setattr(self, name, value)

    def weights(self, X):
        """The normalised public weights a(x) of each row of X, shape=[k, n_samples]."""
        self._check_fitted()
        features = _check_features(X, "X", self.n_features_in_)
        return normalized_weights(kernel_weights(self._features, features, self.bandwidth_,
                                                 self.regularization_))

    def predict(self, X):
        """Predict one point per row of X.

        "labels", "extrinsic": post-processing of the released targets, nothing charged.
        Per row:
        one private release per row, the whole call checked against the budget before any
        prediction is computed; ``predict_budget_`` and ``predict_events_`` record it.

        Parameters
        ----------
        X : array-like, shape=[k, n_features]
            Public features.

        Returns
        -------
        predictions : array-like, shape=[k, *space.shape]
        """
        self._check_fitted()
        features = _check_features(X, "X", self.n_features_in_)
        if not len(features):
            return to_backend(np.zeros((0,) + tuple(self.space.shape)))
        if RELEASED_AT[self.method_] == "predict":
            return self._predict_rows(features)
        tangent = self._mean + rbf_kernel(features, self._features,
                                          self.bandwidth_) @ self._coefficients
        if self.method_ == "extrinsic":
            return project_to_sphere(self.space, tangent)
        tangent = to_backend(tangent.reshape((len(features),) + tuple(self.space.shape)))
        # every clipped target lies within D of b: so does a prediction (post-processing;
        # without it, noise amplified by a small regularization can overflow Exp)
        tangent = clip_tangent_vectors(self.space.metric, tangent, self.base_point_,
                                       self.clip_norm)
        return self.space.metric.exp(tangent, self.base_point_)

    def _predict_rows(self, features):
        """One gradient release per row of ``features``, each through ``run_release``."""
        weights = normalized_weights(kernel_weights(self._features, features,
                                                    self.bandwidth_, self.regularization_))
        n_rows, n_samples = weights.shape
        scales = n_samples * np.abs(weights).max(axis=1)
        # the events do not depend on C: those of C = 1 give the public multiplier
        multiplier = self._row_mechanism(n_samples, 1.0, None).events()[0].noise_multiplier
        mechanisms = [self._row_mechanism(
            n_samples, None if self.clip_norm is None else scale * self.clip_norm,
            self._row_step(multiplier, scale / n_samples)) for scale in scales]
        for name in ("predict_budget_", "predict_events_", "clip_norms_"):
            self.__dict__.pop(name, None)
        budget = resolve_budget(
            self.budget or self.__dict__.get("_creation_budget"),
            n_rows * self.epsilon, min(n_rows * self.delta, 0.5),
        )
        budget.check(*(event for mechanism in mechanisms for event in mechanism.events()))
        rng = get_rng(self.random_state, secure=self.secure)
        predictions, events, clip_norms = [], (), []
        for row, mechanism in zip(weights, mechanisms):
            fitted = run_release(mechanism, budget,
                                 PairedSamples(n_samples * row, self._targets), None, rng)
            predictions.append(fitted["estimate_"])
            events += fitted["events_"]
            clip_norms.append(fitted["clip_norm_"])
        self._set(predict_budget_=budget, predict_events_=events,
                  noise_multiplier_=multiplier, clip_norms_=np.array(clip_norms))
        return gs.stack(predictions)

    def _row_step(self, noise_multiplier, max_weight):
        """The step of a row: ``step_size``, else for "rgd" with a public D ``_rgd_step``,
        else None (the release's default)."""
        if self.step_size is not None or self.method != "rgd" or self.clip_norm is None:
            return self.step_size
        return _rgd_step(noise_multiplier, max_weight, int(self.space.dim))

    def _check_fitted(self):
        if not hasattr(self, "method_"):
            raise NotFittedError(
                "this PrivateStructuredPrediction is not fitted; call fit(X, Y)"
            )


def _check_features(X, name, n_features=None):
    """Public features as float64 numpy [n, p], finite (with p = n_features if given)."""
    features = check_array(X, name)
    if features.ndim != 2:
        raise ValueError(f"{name} must have shape [n_samples, n_features], got {features.shape}")
    if n_features is not None and features.shape[1] != n_features:
        raise ValueError(
            f"{name} must have {n_features} features (as in fit), got {features.shape[1]}"
        )
    check_finite_array(features, name)
    return features


def _rgd_step(noise_multiplier, max_weight, dim):
    """DP-RGD's noise-aware constant step, with the noise measured against D.

    ``PrivateERM``'s default shrinks the step 1/2 by C / sqrt(C^2 + d sigma^2), C its clip
    norm. Here C_x = n max|a_i| D bounds one weighted gradient, while the mean gradient
    of F_x is of order D: against D, the noise sigma = z 2 max|a_i| D of a step gives
    the factor 1 / sqrt(1 + d (2 z max|a_i|)^2) (public: z, a(x) and d only).
    """
    shrink = 1 / np.sqrt(1 + dim * (2 * noise_multiplier * max_weight) ** 2)
    return ConstantStep(RGD_STEP_SIZE * shrink)
