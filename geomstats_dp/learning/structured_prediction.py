"""Private structured prediction on a manifold (Han et al. 2024, after Rudi et al. 2018).

The prediction at a feature vector x is the minimiser over the manifold of
sum_i alpha_i(x) d(w, y_i)^2 / 2, with the kernel-ridge weights
alpha(x) = (K + gamma I)^(-1) K_x of an RBF kernel on the training features. Each row of
``predict`` is one ``PrivateERM`` run on that loss, charged to the budget.
"""

import geomstats.backend as gs
import numpy as np

from geomstats_dp._backend import get_rng, to_numpy
from geomstats_dp._validation import check_finite_array, check_positive_finite
from geomstats_dp.learning._base import PrivateEstimator
from geomstats_dp.learning._data import check_array, check_points, check_sample_count
from geomstats_dp.learning.erm import PrivateERM
from geomstats_dp.learning._defaults import RGD_STEP_SIZE
from geomstats_dp.optim import (
    ConstantStep,
    FullBatch,
    PairedSamples,
    PerSampleLoss,
    clip_tangent_vectors,
    minimize,
)
from geomstats_dp.privacy import resolve_budget

ATOL = 1e-6  # tolerance of the check that targets lie on the space


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
    def rbf(A, B):
        squared = ((A[:, None, :] - B[None, :, :]) ** 2).sum(-1)
        return np.exp(-squared / (2 * bandwidth**2))

    gram = rbf(X_train, X_train) + regularization * np.eye(len(X_train))
    return np.linalg.solve(gram, rbf(X_train, X_new)).T


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
    """Private structured prediction with manifold-valued targets (Han et al. 2024).

    ``fit(X, Y)`` keeps the training pairs (public features X, private targets Y on the
    space) and releases nothing. ``predict(X_new)`` releases, for each row x, a private
    minimiser over the space of

        F_x(w) = sum_i a_i(x) d(w, y_i)^2 / 2,   a(x) = alpha(x) / sum_i alpha_i(x),
        alpha(x) = (K + gamma I)^(-1) K_x,   K_ij = exp(-|x_i - x_j|^2 / (2 h^2)),

    by one ``PrivateERM`` run (DP-RGD by default) on the per-sample losses
    f_i(w) = n a_i h_D(d(w, y_i)), whose mean is F_x with d^2 / 2 replaced by its Huber
    version h_D (d^2 / 2 up to D = ``clip_norm``, linear beyond: each target pulls with a
    force at most D; D above the distances between iterates and targets gives F_x
    itself). Weights may be negative.

    Privacy. Unit: one target y_i, the features being public (label-level DP). Adjacency:
    replace-one (y_j replaced by any point of the space, X fixed). The weighted per-sample
    gradients -n a_i clip_D(Log_w(y_i)), of norm n |a_i| min(d(w, y_i), D), are also
    clipped by the core in the Riemannian norm at C_x = n max_i |a_i(x)| D, D =
    ``clip_norm`` (so the bound holds whatever the loss); replacing y_j moves the mean of
    the clipped gradients by at most 2 C_x / n = 2 max_i |a_i(x)| D, the sensitivity the
    noise of each step is calibrated to (see ``PrivateERM``). Each predicted row is an
    (epsilon, delta)-DP release, charged to the budget; rows compose (numerical
    accountant). Feature changes are not covered: replacing one x_j changes every
    alpha_i(x) through (K + gamma I)^(-1), so the per-record bound with alpha held fixed
    does not hold; X and X_new must be public.

    Parameters
    ----------
    space : Manifold
        Where the targets and predictions lie (e.g. ``Hyperboloid(2)``).
    bandwidth : float
        h of the RBF kernel, > 0.
    regularization : float
        gamma, > 0.
    epsilon : float
        Privacy parameter of each predicted row, > 0.
    delta : float
        Of each predicted row, in (0, 1).
    clip_norm : float or None
        D: the Huber radius of the loss and the clip norm of the unweighted gradients
        (weighted ones are clipped at n max_i |a_i(x)| D). A D above the distances between
        the iterates and the targets minimises F_x exactly; a smaller D gives less noise
        (sigma is proportional to D) and a robust (Huber) version of F_x. None: squared
        distance, C_x inferred from the data (largest weighted gradient norm at the start)
        with a PrivacyLeakWarning: not private.
    method : {"rgd", "rsgd", "rsvrg"}
    n_iter, step_size, batch_size, inner_steps, init_point, noise_method, verbose
        As in ``PrivateERM`` (its defaults), except the default DP-RGD step: the constant
        step 1/2 shrunk by 1 / sqrt(1 + d (2 z max_i |a_i(x)|)^2), z the noise multiplier,
        so that it is noise-aware against the scale D of the mean gradient rather than
        against C_x.
    budget : PrivacyBudget, optional
        Charged for every row. Default: the budget active (``with budget:``) at creation
        or prediction; else a fresh budget (k epsilon, k delta) for the k rows of one
        ``predict`` call, recorded in the default ledger.
    random_state : None, int or numpy.random.Generator
        One generator per ``predict`` call, shared by its rows in order.
    secure : bool
        Draw the noise from the operating system's entropy (random_state must be None).

    Attributes
    ----------
    n_features_in_ : int
        p, the number of features.
    budget_ : PrivacyBudget
        The budget charged by the last ``predict``.
    events_ : tuple
        The privacy events of the last ``predict`` (all rows).
    noise_multiplier_ : float
        Noise standard deviation of a step over its sensitivity (every row alike).
    clip_norms_ : numpy.ndarray, shape=[k]
        C_x of each row of the last ``predict``.
    """

    _FITTED = ("n_features_in_", "budget_", "events_", "noise_multiplier_", "clip_norms_")

    def __init__(self, space, bandwidth=1.0, regularization=1e-3, epsilon=1.0, delta=1e-5,
                 clip_norm=None, method="rgd", n_iter=None, step_size=None,
                 batch_size=None, inner_steps=None, init_point=None,
                 noise_method="transport", budget=None, random_state=None, secure=False,
                 verbose=False):
        self.space = space
        self.bandwidth = bandwidth
        self.regularization = regularization
        self.epsilon = epsilon
        self.delta = delta
        self.clip_norm = clip_norm
        self.method = method
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
        """Keep the training pairs; nothing is released or charged.

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
        for name in self._FITTED:
            self.__dict__.pop(name, None)
        check_positive_finite(self.bandwidth, "bandwidth")
        check_positive_finite(self.regularization, "regularization")
        if self.clip_norm is not None:
            check_positive_finite(self.clip_norm, "clip_norm")
        self._row_estimator(1.0)._check_params()
        features = _check_features(X, "X")
        check_sample_count(len(features), "X")
        targets = check_points(self.space, Y, ATOL, min_samples=1, name="Y")
        if len(targets) != len(features):
            raise ValueError(
                f"Y must hold one target per row of X ({len(features)}), got {len(targets)}"
            )
        self._features, self._targets = features, targets
        self.n_features_in_ = features.shape[1]
        return self

    def weights(self, X):
        """The normalised public weights a(x) of each row of X, shape=[k, n_samples]."""
        self._check_fitted()
        features = _check_features(X, "X", self.n_features_in_)
        return normalized_weights(kernel_weights(self._features, features, self.bandwidth,
                                                 self.regularization))

    def predict(self, X):
        """Release one private prediction per row of X, each charged to the budget.

        The whole call is checked against the budget before any prediction is computed.

        Parameters
        ----------
        X : array-like, shape=[k, n_features]
            Public features.

        Returns
        -------
        predictions : array-like, shape=[k, *space.shape]
        """
        weights = self.weights(X)
        n_rows, n_samples = weights.shape
        scales = n_samples * np.abs(weights).max(axis=1)
        clip_norms = None if self.clip_norm is None else scales * self.clip_norm
        rows = [self._row_estimator(None if clip_norms is None else clip_norms[i])
                for i in range(n_rows)]
        budget = resolve_budget(
            self.budget or self.__dict__.get("_creation_budget"),
            n_rows * self.epsilon, min(n_rows * self.delta, 0.5),
        )
        row_events = _row_events(rows[0], n_samples)
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
        self.noise_multiplier_ = rows[0].noise_multiplier_
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
        if not hasattr(self, "n_features_in_"):
            raise ValueError("this PrivateStructuredPrediction is not fitted; call fit(X, Y)")


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
    n_iter, batch_size, inner_steps, _ = estimator._settings(n_samples)
    clip_norm = estimator.clip_norm or 1.0  # the events do not depend on C
    return estimator._plan(n_samples, None, n_iter, batch_size, inner_steps, clip_norm).events


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
