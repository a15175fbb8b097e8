"""Private tangent-space features and the private tangent-space classifier."""

from numbers import Integral, Real
from typing import ClassVar

import numpy as np
from scipy.special import softmax
from sklearn.base import ClassifierMixin, TransformerMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from geomstats_dp._backend import to_numpy
from geomstats_dp.learning._base import PrivateEstimator
from geomstats_dp.learning._classes import PRIVACY_CONSTRAINTS, class_codes
from geomstats_dp.learning._data import check_shape
from geomstats_dp.learning._tangent_frame import tangent_frame
from geomstats_dp.learning.mechanisms.base import run_release
from geomstats_dp.learning.mechanisms.class_means import (
    ATOL,
    pooled_mean,
    reference_release,
)
from geomstats_dp.learning.mechanisms.logistic import LogisticRelease
from geomstats_dp.learning.mechanisms.logistic_objective import LogisticObjectiveRelease
from geomstats_dp.learning.mechanisms.tangent_logistic import (
    TangentLogisticRelease,
    tangent_rows,
)
from geomstats_dp.optim.initial_point import canonical_point, check_init_point
from geomstats_dp.privacy import calibrate_gaussian, share_noise_multipliers


class PrivateToTangentSpace(TransformerMixin, PrivateEstimator):
    """Clipped tangent vectors at a private (or public) reference point.

    ``fit`` releases the reference point ``base_point_``, a private mean of all the
    records (``mechanisms.class_means.pooled_mean``: ``reference_n_iter`` noisy tangent
    steps from the canonical point with clip radius ``reference_clip_norm``; replace-one,
    sensitivity 2C' per round, exact Gaussian-DP composition), or takes the public
    ``base_point`` and charges nothing. ``transform`` maps each point x to the
    coordinates of Log_p(x) in an orthonormal basis of T_p M (``learning._tangent_frame``:
    the Riemannian norm is the Euclidean norm of the coordinates, for the
    affine-invariant, log-Euclidean or any other metric of ``space``), clipped to norm
    ``clip_norm``: rows of a public bound for any private model behind it
    (post-processing of the release and of each row, as geomstats' ``ToTangentSpace``).

    Parameters
    ----------
    space : Manifold
    epsilon : float
        Privacy parameter of the reference point, > 0.
    delta : float
        In (0, 1).
    base_point : array-like or None, shape=[*space.shape]
        A public reference point; None: released privately.
    clip_norm : float
        The rows' norm bound.
    reference_clip_norm : float
        The clip radius of the private reference point's tangent steps.
    reference_n_iter : int
        Its number of tangent steps (public).
    budget : PrivacyBudget or None
    random_state : None, int or numpy.random.Generator
    secure : bool

    Attributes
    ----------
    base_point_ : array-like, shape=[*space.shape]
    budget_ : PrivacyBudget
    events_ : tuple
        The events charged (empty with a public ``base_point``).
    method_ : str
        "pooled_mean", or "public" for a given ``base_point``.
    """

    _FITTED = ("base_point_", "budget_", "events_", "method_")
    _parameter_constraints: ClassVar[dict] = {
        "space": "no_validation",
        "base_point": ["array-like", None],
        "clip_norm": [Interval(Real, 0, None, closed="neither")],
        "reference_clip_norm": [Interval(Real, 0, None, closed="neither")],
        "reference_n_iter": [Interval(Integral, 1, None, closed="left")],
        **PRIVACY_CONSTRAINTS,
    }

    def __init__(self, space, epsilon=1.0, delta=1e-5, base_point=None, clip_norm=1.0,
                 reference_clip_norm=3.0, reference_n_iter=3, budget=None,
                 random_state=None, secure=False):
        self.space = space
        self.epsilon = epsilon
        self.delta = delta
        self.base_point = base_point
        self.clip_norm = clip_norm
        self.reference_clip_norm = reference_clip_norm
        self.reference_n_iter = reference_n_iter
        self.budget = budget
        self.random_state = random_state
        self.secure = secure
        self._remember_budget()

    def fit(self, X, y=None):
        """Release (or take) the reference point.

        Parameters
        ----------
        X : array-like, shape=[n_samples, *space.shape]
        y : None
            Ignored.

        Returns
        -------
        self : PrivateToTangentSpace
        """
        self._validate_params()
        budget = self._start_fit(self.epsilon, self.delta)
        points = check_shape(self.space, X)
        reference, base_point = self._reference(len(points), 1.0)
        if reference is None:
            fitted = {"base_point_": base_point, "events_": ()}
        else:
            released = run_release(reference, budget,
                                   (points, np.zeros(len(points), dtype=int)), None,
                                   self.random_state, self.secure)
            fitted = {"base_point_": to_numpy(released["centroids_"][0]),
                      "events_": released["events_"]}
        self._set_reference(fitted, budget)
        return self

    def _reference(self, n_samples, share):
        """(the reference point's release taking ``share`` of the budget's mu^2, None)
        or (None, the public base point as numpy)."""
        if self.base_point is not None:
            return None, to_numpy(check_init_point(self.space, self.base_point, ATOL,
                                                   "base_point"))
        start = to_numpy(canonical_point(self.space))
        return reference_release(self.space, start, n_samples, self.epsilon, self.delta,
                                 float(self.reference_clip_norm), self.reference_n_iter,
                                 share, f"{type(self).__name__}: reference point"), None

    def _set_reference(self, fitted, budget):
        """Set the fitted attributes and the frame at ``base_point_``."""
        self._set_fitted(fitted, budget_=budget, method_=(
            "public" if self.base_point is not None else "pooled_mean"))
        self._frame = tangent_frame(self.space, to_numpy(self.base_point_))

    def transform(self, X):
        """Clipped orthonormal tangent coordinates at ``base_point_``.

        Parameters
        ----------
        X : array-like, shape=[n_samples, *space.shape]

        Returns
        -------
        rows : numpy.ndarray, shape=[n_samples, space.dim]
        """
        check_is_fitted(self, "base_point_")
        points = check_shape(self.space, X, min_samples=1)
        return tangent_rows(self.space, self._frame, float(self.clip_norm), points)


class PrivateTangentSpaceClassifier(ClassifierMixin, PrivateToTangentSpace):
    """Differentially private tangent-space classifier: a private reference point, clipped
    orthonormal tangent coordinates at it, a private multinomial logistic regression.

    One release (``mechanisms.tangent_logistic``): a reference point
    (``PrivateToTangentSpace``; none with a public ``base_point``), then a linear model on
    the rows scaled by 1 / ``clip_norm`` into the unit ball, by ``method``:

    - "noisy_gd" (``mechanisms.logistic``): noisy full-batch gradient descent with
      per-record gradient clipping; the reference point takes ``reference_fraction`` of
      the mu^2 of the fit's (epsilon, delta), the steps the rest, all composed exactly in
      Gaussian DP. Sensitivities: 2C' per reference round, 2G per gradient step.
    - "objective_perturbation" (``mechanisms.logistic_objective``, Chaudhuri, Monteleoni &
      Sarwate 2011; Kifer, Smith & Thakurta 2012): the exact minimiser of the penalised
      cross-entropy plus a random linear term; the reference point is
      (``reference_fraction`` epsilon, delta / 2)-DP (Gaussian rounds), the model
      ((1 - ``reference_fraction``) epsilon, delta / 2)-DP, composed by basic composition.

    Privacy. Adjacency: replace-one on whole records (point and label).

    Parameters
    ----------
    space : Manifold
    epsilon : float
        Privacy parameter of the whole fit, > 0.
    delta : float
        In (0, 1).
    classes : array-like or None
        The public classes; None: those of ``y`` (a PrivacyLeakWarning).
    base_point : array-like or None, shape=[*space.shape]
        A public reference point; None: released privately.
    reference_fraction : float
        Share of the budget's mu^2 spent on the private reference point, in (0, 1).
    clip_norm : float
        C: the tangent rows' norm bound.
    reference_clip_norm : float
        C': the clip radius of the reference point's tangent steps.
    reference_n_iter : int
        Its number of tangent steps.
    method : {"noisy_gd", "objective_perturbation"}
        The release of the linear model.
    gradient_clip : float
        G: per-record gradient clip ("noisy_gd").
    regularization : float
        lambda >= 0, the ridge penalty per record (on the coefficients only for
        "noisy_gd"; on the intercepts too, and raised to the Jacobian's minimum, for
        "objective_perturbation").
    n_iter : int
        Gradient steps (public; "noisy_gd").
    step_size : float
        eta ("noisy_gd").
    budget : PrivacyBudget or None
    random_state : None, int or numpy.random.Generator
    secure : bool

    Attributes
    ----------
    base_point_ : numpy.ndarray, shape=[*space.shape]
    coef_ : numpy.ndarray, shape=[n_classes, space.dim]
        Coefficients on the rows scaled by 1 / ``clip_norm``.
    intercept_ : numpy.ndarray, shape=[n_classes]
    classes_ : numpy.ndarray, shape=[n_classes]
    budget_ : PrivacyBudget
    events_ : tuple
        The reference point's events, then the gradient steps'.
    method_ : str
        ``method``.
    noise_multiplier_ : float
        z of a gradient step, or sigma / (2 zeta) of the objective's linear term.
    noise_multipliers_ : dict
        That z and the reference rounds' (private reference only).
    n_iter_ : int
        Gradient steps, or the solver's public number of steps.
    """

    _FITTED = ("base_point_", "coef_", "intercept_", "classes_", "budget_", "events_",
               "method_", "noise_multiplier_", "noise_multipliers_", "n_iter_")
    _parameter_constraints: ClassVar[dict] = {
        **PrivateToTangentSpace._parameter_constraints,
        "classes": ["array-like", None],
        "reference_fraction": [Interval(Real, 0, 1, closed="neither")],
        "method": [StrOptions({"noisy_gd", "objective_perturbation"})],
        "gradient_clip": [Interval(Real, 0, None, closed="neither")],
        "regularization": [Interval(Real, 0, None, closed="left")],
        "n_iter": [Interval(Integral, 1, None, closed="left")],
        "step_size": [Interval(Real, 0, None, closed="neither")],
    }

    def __init__(self, space, epsilon=1.0, delta=1e-5, classes=None, base_point=None,
                 reference_fraction=0.2, clip_norm=1.0, reference_clip_norm=3.0,
                 reference_n_iter=3, method="noisy_gd", gradient_clip=1.0,
                 regularization=1e-3, n_iter=100, step_size=5.0, budget=None,
                 random_state=None, secure=False):
        super().__init__(space, epsilon=epsilon, delta=delta, base_point=base_point,
                         clip_norm=clip_norm, reference_clip_norm=reference_clip_norm,
                         reference_n_iter=reference_n_iter, budget=budget,
                         random_state=random_state, secure=secure)
        self.classes = classes
        self.reference_fraction = reference_fraction
        self.method = method
        self.gradient_clip = gradient_clip
        self.regularization = regularization
        self.n_iter = n_iter
        self.step_size = step_size

    def fit(self, X, y):
        """Release the reference point and the linear model.

        Parameters
        ----------
        X : array-like, shape=[n_samples, *space.shape]
        y : array-like, shape=[n_samples]

        Returns
        -------
        self : PrivateTangentSpaceClassifier
        """
        self._validate_params()
        budget = self._start_fit(self.epsilon, self.delta)
        points = check_shape(self.space, X)
        classes, codes = class_codes(y, self.classes, len(points), private=True)
        share = 0.0 if self.base_point is not None else self.reference_fraction
        if self.method == "noisy_gd":
            reference, base_point = self._reference(len(points), share)
            logistic = self._noisy_gd(len(points), len(classes), share)
        else:
            reference, base_point = self._objective_reference(len(points), share)
            logistic = LogisticObjectiveRelease(
                len(points), len(classes), int(self.space.dim), float(self.regularization),
                (1 - share) * self.epsilon, self.delta / 2 if share else self.delta,
                label=type(self).__name__)
        mechanism = TangentLogisticRelease(self.space, float(self.clip_norm), logistic,
                                           reference, base_point)
        fitted = run_release(mechanism, budget, (points, codes), None, self.random_state,
                             self.secure)
        fitted.setdefault("noise_multipliers_", {"model": fitted["noise_multiplier_"]})
        self._set_reference(fitted, budget)
        self.__dict__.update(classes_=classes, method_=self.method)
        return self

    def _noisy_gd(self, n_samples, n_classes, share):
        """The noisy-GD release taking 1 - ``share`` of the budget's mu^2."""
        multiplier = share_noise_multipliers(self.epsilon, self.delta,
                                             [(1 - share) / self.n_iter])[0]
        return LogisticRelease(n_samples, n_classes, int(self.space.dim),
                               float(self.gradient_clip), float(self.regularization),
                               self.n_iter, float(self.step_size), multiplier,
                               label=type(self).__name__)

    def _objective_reference(self, n_samples, share):
        """The reference point's release at (``share`` epsilon, delta / 2), or the public
        base point (objective perturbation)."""
        if not share:
            return self._reference(n_samples, share)
        multiplier = calibrate_gaussian(share * self.epsilon, self.delta / 2,
                                        self.reference_n_iter)
        start = to_numpy(canonical_point(self.space))
        return pooled_mean(self.space, start, n_samples, float(self.reference_clip_norm),
                           self.reference_n_iter, multiplier,
                           f"{type(self).__name__}: reference point"), None

    def decision_function(self, X):
        """Scores of each class, shape=[n_samples, n_classes] (post-processing)."""
        check_is_fitted(self, "coef_")
        rows = self.transform(X) / float(self.clip_norm)
        return rows @ self.coef_.T + self.intercept_

    def predict(self, X):
        """The class of the largest score, shape=[n_samples]."""
        scores = self.decision_function(X)
        return self.classes_[np.argmax(scores, axis=1)]

    def predict_proba(self, X):
        """Softmax of the scores, shape=[n_samples, n_classes]."""
        return softmax(self.decision_function(X), axis=1)
