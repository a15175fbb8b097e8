"""Private structured prediction on a manifold (Han et al. 2024, after Rudi et al. 2018).

The prediction at a feature vector x is the minimiser over the manifold of
sum_i alpha_i(x) d(w, y_i)^2 / 2, with the kernel-ridge weights
alpha(x) = (K + gamma I)^(-1) K_x of an RBF kernel on the training features. By default
the targets' log-coordinates at a public point are released once and every prediction is
post-processing; per row, each prediction is one ``PrivateERM`` run, charged.
"""

import geomstats.backend as gs
import numpy as np
from sklearn.exceptions import NotFittedError

from geomstats_dp._backend import get_rng, to_backend, to_numpy
from geomstats_dp._validation import check_finite_array, check_positive_finite
from geomstats_dp.learning._base import PrivateEstimator
from geomstats_dp.learning._data import (
    check_array,
    check_points,
    check_sample_count,
    check_shape,
    check_values,
)
from geomstats_dp.learning._defaults import RGD_STEP_SIZE
from geomstats_dp.learning._diagnostics import NoiseDominatesWarning
from geomstats_dp.learning.erm import PrivateERM
from geomstats_dp.learning.mechanisms.base import run_release
from geomstats_dp.learning.mechanisms.tangent_labels import ATOL, TangentLabelRelease
from geomstats_dp.optim import (
    ConstantStep,
    FullBatch,
    PairedSamples,
    PerSampleLoss,
    clip_tangent_vectors,
    minimize,
)
from geomstats_dp.optim.initial_point import check_init_point
from geomstats_dp.privacy import resolve_budget

ROW_REGULARIZATION = 1e-3  # gamma of the per-row releases, floor of the label release's


def squared_distances(A, B):
    """|a - b|^2 for every row a of A and b of B, shape=[len(A), len(B)]."""
    return ((A[:, None, :] - B[None, :, :]) ** 2).sum(-1)


def rbf_kernel(A, B, bandwidth):
    """exp(-|a - b|^2 / (2 h^2)) for every row a of A and b of B, shape=[len(A), len(B)]."""
    return np.exp(-squared_distances(A, B) / (2 * bandwidth**2))


def regularized_gram(features, bandwidth, regularization):
    """K + gamma I of the RBF kernel on ``features``, shape=[n, n]."""
    return rbf_kernel(features, features, bandwidth) + regularization * np.eye(len(features))


def median_bandwidth(features, max_rows=1000):
    """The median distance between (the first ``max_rows``) rows of public features.

    Returns
    -------
    bandwidth : float
        > 0 (1.0 when every row is the same).
    """
    rows = features[:max_rows]
    distances = np.sqrt(squared_distances(rows, rows))
    positive = distances[np.triu_indices(len(rows), 1)]
    positive = positive[positive > 0]
    return float(np.median(positive)) if positive.size else 1.0


def kernel_weights(X_train, X_new, bandwidth, regularization):
    """Kernel-ridge weights alpha(x) = (K + gamma I)^(-1) K_x, one row per new point.

    Parameters
    ----------
    X_train : numpy.ndarray, shape=[n, p]
    X_new : numpy.ndarray, shape=[k, p]
    bandwidth : float
        h of the RBF kernel exp(-|x - x'|^2 / (2 h^2)).
    regularization : float
        gamma > 0.

    Returns
    -------
    alpha : numpy.ndarray, shape=[k, n]
    """
    gram = regularized_gram(X_train, bandwidth, regularization)
    return np.linalg.solve(gram, rbf_kernel(X_train, X_new, bandwidth)).T


def kernel_ridge_coefficients(features, values, bandwidth, regularization):
    """beta = (K + gamma I)^(-1) (v - m) and the shrunk mean m = sum_i v_i / (n + gamma).

    The Gaussian-process regression of ``values`` whose noise variance over prior
    variance is gamma, with a constant mean of the same prior (hence the shrinkage of m
    toward 0): its prediction at x is m + K_x^T beta.

    Parameters
    ----------
    features : numpy.ndarray, shape=[n, p]
    values : numpy.ndarray, shape=[n, ...]
    bandwidth, regularization : float

    Returns
    -------
    beta : numpy.ndarray, shape=[n, q]
        q the number of entries of a row of ``values``.
    mean : numpy.ndarray, shape=[q]
    """
    rows = values.reshape(len(values), -1)
    mean = rows.sum(axis=0) / (len(rows) + regularization)
    gram = regularized_gram(features, bandwidth, regularization)
    return np.linalg.solve(gram, rows - mean), mean


def normalized_weights(alpha):
    """alpha / sum(alpha) row by row; ValueError for a row whose weights do not sum > 0.

    The minimiser of sum_i alpha_i d(w, y_i)^2 does not change when alpha is scaled by a
    positive number; a row whose weights sum to <= 0 has no minimiser (a far-away x whose
    kernel values all underflow, for instance).
    """
    totals = alpha.sum(axis=1)
    bad = np.flatnonzero(~(totals > 0))
    if bad.size:
        raise ValueError(
            f"X row {int(bad[0])}: its kernel weights sum to {totals[bad[0]]:.3g}, expected "
            "> 0 (the point is too far from every training feature for this bandwidth)"
        )
    return alpha / totals[:, None]


class WeightedSquaredDistanceLoss(PerSampleLoss):
    """f(w; (c, y)) = c h_D(d(w, y)) with a public coefficient c of any sign.

    h_D is the squared distance d^2 / 2 up to ``radius`` D and its linear (Huber)
    continuation D d - D^2 / 2 beyond (D = None: d^2 / 2 everywhere). Its gradient is
    -c clip_D(Log_w(y)), of norm |c| min(d(w, y), D): targets farther than D pull with a
    bounded force, which keeps DP-RGD stable on hyperbolic data, where negative weights
    and far iterates would otherwise give gradients growing with the distance. Data are
    ``PairedSamples(coefficients [n], targets [n, *space.shape])``.

    Parameters
    ----------
    space : Manifold
    radius : float or None
        D.
    atol : float
        Tolerance of the check that targets lie on the space.
    """

    def __init__(self, space, radius=None, atol=ATOL):
        super().__init__(space)
        self.radius = radius
        self.atol = atol

    def check_data(self, data):
        """The pairs as backend arrays, the targets checked to lie on the space."""
        pairs = super().check_data(data)
        check_points(self.space, to_numpy(pairs.y), self.atol, min_samples=1, name="Y")
        return pairs

    def values(self, point, data):
        """c_i h_D(d(w, y_i)), shape=[k]."""
        dist = self.space.metric.dist(data.y, point)
        if self.radius is None:
            return data.X * dist**2 / 2
        radius = self.radius
        far = dist > radius
        huber = gs.where(far, radius * dist - radius**2 / 2, dist**2 / 2)
        return data.X * huber

    def gradients(self, point, data):
        """-c_i clip_D(Log_w(y_i)), shape=[k, *space.shape]."""
        logs = self.space.metric.log(data.y, point)
        if self.radius is not None:
            logs = clip_tangent_vectors(self.space.metric, logs, point, self.radius)
        return gs.einsum("k,k...->k...", -data.X, logs)


class PrivateStructuredPredictionRow(PrivateERM):
    """One prediction: PrivateERM on the weighted squared distance, data (c, Y)."""

    def _check_input(self, X, y, sample_weight):
        return PairedSamples(X, y), None


class PrivateStructuredPrediction(PrivateEstimator):
    """Private structured prediction with manifold-valued targets (after Han et al. 2024).

    The non-private prediction at a feature vector x is the minimiser over the manifold of

        F_x(w) = sum_i a_i(x) d(w, y_i)^2 / 2,   a(x) = alpha(x) / sum_i alpha_i(x),
        alpha(x) = (K + gamma I)^(-1) K_x,   K_ij = exp(-|x_i - x_j|^2 / (2 h^2))

    (Rudi et al. 2018). Two releases, both label-level (the unit is one target y_i, the
    features X and X_new are public; adjacency replace-one: y_j replaced by any point of
    the space, X fixed). Feature changes are not covered: replacing one x_j changes every
    alpha_i(x) through (K + gamma I)^(-1).

    - ``method="labels"`` (default; ``learning.mechanisms.tangent_labels``): ``fit``
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
      2 max_i |a_i(x)| D; each row is (epsilon, delta)-DP and rows compose.

    Parameters
    ----------
    space : Manifold
        Where the targets and predictions lie (e.g. ``Hyperboloid(2)``).
    bandwidth : float or None
        h of the RBF kernel, > 0. None: the median distance between training features
        (public), computed by ``fit``.
    regularization : float or None
        gamma, > 0. None: 3 d sigma^2 / D^2 for "labels" (with a floor of 1e-3), 1e-3 per
        row.
    epsilon, delta : float
        The guarantee of the label release ("labels"), or of each predicted row.
    clip_norm : float or None
        D. "labels": the bound on d(b, y_i) (farther targets are pulled in to D; required).
        Per row: the Huber radius of the loss and the clip norm of the unweighted
        gradients; None infers C_x from the data with a PrivacyLeakWarning (not private).
    method : {"labels", "rgd", "rsgd", "rsvrg"}
    base_point : array-like, optional
        "labels": a public point b. None (default): b is released privately, the one-shot
        clipped tangent mean of the targets at the canonical point (sensitivity 2D / n,
        10% of the Gaussian-DP budget mu^2; ``learning.mechanisms.tangent_labels``).
    n_iter, step_size, batch_size, inner_steps, init_point, noise_method, verbose
        Per row: as in ``PrivateERM`` (its defaults), except the default DP-RGD step: the
        constant step 1/2 shrunk by 1 / sqrt(1 + d (2 z max_i |a_i(x)|)^2), z the noise
        multiplier, so that it is noise-aware against the scale D of the mean gradient.
    budget : PrivacyBudget, optional
        "labels": charged once by ``fit``. Per row: charged for every row; default the
        budget active (``with budget:``) at creation or prediction, else a fresh budget
        (k epsilon, k delta) for the k rows of one ``predict`` call.
    random_state : None, int or numpy.random.Generator
        The release's generator ("labels"), or one per ``predict`` call (per row).
    secure : bool
        Draw the noise from the operating system's entropy (random_state must be None).

    Attributes
    ----------
    n_features_in_ : int
        p, the number of features.
    method_ : str
    bandwidth_, regularization_ : float
        The kernel's h and gamma used.
    budget_ : PrivacyBudget
        The budget charged (by ``fit`` for "labels", by the last ``predict`` per row).
    events_ : tuple
        The privacy events charged (idem).
    noise_multiplier_ : float
        Noise standard deviation over the sensitivity (of the label release, or of a step
        of every row).
    labels_ : array-like, shape=[n_samples, *space.shape]
        "labels": the released noisy log-coordinates, tangent at ``base_point_``.
    base_point_ : array-like, shape=[*space.shape]
        "labels": b.
    noise_ratio_ : float
        "labels": gamma / n, public. Above 1 the released mean is shrunk more than half
        way to b by the noise, and a NoiseDominatesWarning says the predictions are
        expected to be little better than b.
    clip_norms_ : numpy.ndarray, shape=[k]
        Per row: C_x of each row of the last ``predict``.
    """

    _FITTED = ("n_features_in_", "method_", "bandwidth_", "regularization_", "budget_",
               "events_", "noise_multiplier_", "labels_", "base_point_", "noise_ratio_",
               "clip_norms_")
    _MECHANISMS = {"labels": TangentLabelRelease}
    _ROW_METHODS = ("rgd", "rsgd", "rsvrg")
    # fit releases nothing and checks the targets: a search planning it reads them
    _planning_reads_data = True

    def __init__(self, space, bandwidth=None, regularization=None, epsilon=1.0,
                 delta=1e-5, clip_norm=None, method="labels", base_point=None, n_iter=None,
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
        """Keep the training pairs; with "labels", release the targets once.

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
        budget = self._start_fit(self.epsilon, self.delta)
        methods = (*self._MECHANISMS, *self._ROW_METHODS)
        if self.method not in methods:
            raise ValueError(f"method must be one of {methods}, got {self.method!r}")
        if self.bandwidth is not None:
            check_positive_finite(self.bandwidth, "bandwidth")
        if self.regularization is not None:
            check_positive_finite(self.regularization, "regularization")
        if self.clip_norm is not None:
            check_positive_finite(self.clip_norm, "clip_norm")
        if self.init_point is not None:  # on the space, as every estimator checks it
            check_init_point(self.space, self.init_point)
        if self.method in self._ROW_METHODS:
            self._row_estimator(1.0)._check_params()
        features = _check_features(X, "X")
        check_sample_count(len(features), "X")
        targets = check_shape(self.space, Y, min_samples=1, name="Y")
        if len(targets) != len(features):
            raise ValueError(
                f"Y must hold one target per row of X ({len(features)}), got {len(targets)}"
            )
        bandwidth = self.bandwidth or median_bandwidth(features)
        if self.method in self._ROW_METHODS:
            check_values(self.space, targets, ATOL, "Y")
            self._features, self._targets = features, targets
            self._set(n_features_in_=features.shape[1], method_=self.method,
                      bandwidth_=bandwidth,
                      regularization_=self.regularization or ROW_REGULARIZATION)
            return self
        if self.clip_norm is None:
            raise ValueError(
                "method='labels' needs clip_norm, a public bound D on the targets' "
                "distance to base_point (farther targets are pulled in to D)"
            )
        mechanism = TangentLabelRelease(self.space, len(targets), float(self.clip_norm),
                                        self.epsilon, self.delta, self.base_point)
        fitted = run_release(mechanism, budget, targets, None, self.random_state,
                             self.secure)
        dim = int(self.space.dim)
        regularization = self.regularization or max(
            ROW_REGULARIZATION, 3 * dim * (mechanism.sigma / mechanism.clip_norm) ** 2)
        self._features = features
        self._coefficients, self._mean = kernel_ridge_coefficients(
            features, to_numpy(fitted["labels_"]), bandwidth, regularization)
        ratio = regularization / len(targets)
        NoiseDominatesWarning.warn_if(ratio)
        self._set(**fitted, budget_=budget, n_features_in_=features.shape[1],
                  method_=self.method, bandwidth_=bandwidth, regularization_=regularization,
                  noise_ratio_=ratio)
        return self

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

        "labels": post-processing of the released coordinates, nothing charged. Per row:
        one private release per row, the whole call checked against the budget before any
        prediction is computed.

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
        if self.method_ in self._ROW_METHODS:
            return self._predict_rows(features)
        tangent = self._mean + rbf_kernel(features, self._features,
                                          self.bandwidth_) @ self._coefficients
        tangent = to_backend(tangent.reshape((len(features),) + tuple(self.space.shape)))
        # every clipped target lies within D of b: so does a prediction (post-processing;
        # without it, noise amplified by a small regularization can overflow Exp)
        tangent = clip_tangent_vectors(self.space.metric, tangent, self.base_point_,
                                       self.clip_norm)
        return self.space.metric.exp(tangent, self.base_point_)

    def _predict_rows(self, features):
        """One PrivateERM release per row of ``features`` (per-row methods)."""
        weights = normalized_weights(kernel_weights(self._features, features,
                                                    self.bandwidth_, self.regularization_))
        n_rows, n_samples = weights.shape
        scales = n_samples * np.abs(weights).max(axis=1)
        clip_norms = None if self.clip_norm is None else scales * self.clip_norm
        rows = [self._row_estimator(None if clip_norms is None else clip_norms[i])
                for i in range(n_rows)]
        budget = resolve_budget(
            self.budget or self.__dict__.get("_creation_budget"),
            n_rows * self.epsilon, min(n_rows * self.delta, 0.5),
        )
        row_events = _row_events(self._row_estimator(1.0), n_samples)
        budget.check(*(row_events * n_rows))
        if self.step_size is None and self.method == "rgd" and self.clip_norm is not None:
            for estimator, scale in zip(rows, scales):
                estimator.set_params(step_size=_rgd_step(
                    row_events[0].noise_multiplier, scale / n_samples, int(self.space.dim)))
        rng = get_rng(self.random_state, secure=self.secure)
        predictions, events = [], ()
        for row, estimator in zip(weights, rows):
            estimator.set_params(budget=budget, random_state=rng)
            estimator.fit(n_samples * row, self._targets)
            predictions.append(estimator.estimate_)
            events += estimator.events_
        self.budget_, self.events_ = budget, events
        self.noise_multiplier_ = row_events[0].noise_multiplier
        self.clip_norms_ = np.array([row.clip_norm_ for row in rows])
        return gs.stack(predictions)

    def _row_estimator(self, clip_norm):
        """The PrivateERM of one row (budget and generator are set when it runs)."""
        return PrivateStructuredPredictionRow(
            self.space, WeightedSquaredDistanceLoss(self.space, self.clip_norm),
            epsilon=self.epsilon,
            delta=self.delta, method=self.method, clip_norm=clip_norm, n_iter=self.n_iter,
            step_size=self.step_size, batch_size=self.batch_size,
            inner_steps=self.inner_steps, init_point=self.init_point,
            noise_method=self.noise_method, verbose=self.verbose,
        )

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


def _row_events(estimator, n_samples):
    """The privacy events of one row's run, from public quantities only."""
    estimator._check_params()
    clip_norm = estimator.clip_norm or 1.0  # the events do not depend on C
    spec = estimator._gradient_spec(estimator.method, n_samples, None)
    return spec.plan_for(clip_norm).events


def _rgd_step(noise_multiplier, max_weight, dim):
    """DP-RGD's noise-aware constant step, with the noise measured against D.

    ``PrivateERM``'s default shrinks the step 1/2 by C / sqrt(C^2 + d sigma^2), C its clip
    norm. Here C_x = n max|a_i| D bounds one weighted gradient, while the mean gradient
    of F_x is of order D: against D, the noise sigma = z 2 max|a_i| D of a step gives
    the factor 1 / sqrt(1 + d (2 z max|a_i|)^2) (public: z, a(x) and d only).
    """
    shrink = 1 / np.sqrt(1 + dim * (2 * noise_multiplier * max_weight) ** 2)
    return ConstantStep(RGD_STEP_SIZE * shrink)


def nonprivate_prediction(space, weights, targets, n_iter=100, step_size=0.5,
                          init_point=None, radius=None):
    """The non-private minimiser of sum_i a_i h_D(d(w, y_i)) by Riemannian gradient descent.

    h_D as in ``WeightedSquaredDistanceLoss``; ``radius=None`` (default) minimises
    sum_i a_i d(w, y_i)^2 / 2, the weighted Frechet mean.

    Parameters
    ----------
    space : Manifold
    weights : array-like, shape=[n]
        a_i, any sign, summing to 1.
    targets : array-like, shape=[n, *space.shape]
    n_iter : int
    step_size : float
    init_point : array-like, optional
        Default the canonical point of the space.
    radius : float or None
        D of the Huber continuation (``clip_norm`` of the estimator).

    Returns
    -------
    point : array-like, shape=[*space.shape]
    """
    n_samples = len(targets)
    loss = WeightedSquaredDistanceLoss(space, radius)
    data = PairedSamples(n_samples * to_numpy(weights), to_numpy(targets))
    return minimize(loss, data, FullBatch(1e300, 0.0), n_iter,
                    step_size, init_point).point
