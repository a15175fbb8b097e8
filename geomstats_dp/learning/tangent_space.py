"""Private tangent-space features and the private tangent-space classifier."""

import dataclasses
from functools import partial
from numbers import Integral, Real

import numpy as np
from scipy.special import softmax
from sklearn.base import ClassifierMixin, TransformerMixin
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted

from geomstats_dp._backend import get_rng, to_numpy
from geomstats_dp.learning._base import PrivateEstimator
from geomstats_dp.learning._classes import PRIVACY_CONSTRAINTS, class_codes
from geomstats_dp.learning._data import check_shape, check_values
from geomstats_dp.learning._tangent_frame import clip_rows, coordinates, tangent_frame
from geomstats_dp.learning.frechet_mean import PrivateFrechetMean
from geomstats_dp.learning.mechanisms.base import run_release
from geomstats_dp.learning.mechanisms.logistic import LogisticRelease
from geomstats_dp.optim.initial_point import check_init_point
from geomstats_dp.privacy import calibrate_gaussian

ATOL = 1e-6  # tolerance of the check that data points lie on the space


def tangent_rows(space, frame, clip_norm, X, check=False, scale=False):
    """Coordinates of Log_p(x) in the frame's orthonormal basis, clipped to ``clip_norm``.

    Parameters
    ----------
    space : Manifold
    frame : TangentFrame
    clip_norm : float
    X : array-like, shape=[n_samples, *space.shape]
    check : bool
        Check first that the points are finite and on the space (ValueError naming the
        indices).
    scale : bool
        Divide the rows by ``clip_norm`` (rows in the unit ball).

    Returns
    -------
    rows : numpy.ndarray, shape=[n_samples, space.dim]
    """
    points = check_shape(space, X, min_samples=1)
    if check:
        check_values(space, points, ATOL)
    rows = clip_rows(coordinates(space, frame, points), clip_norm)
    return rows / clip_norm if scale else rows


class PrivateToTangentSpace(TransformerMixin, PrivateEstimator):
    """Clipped tangent vectors at a private (or public) reference point.

    ``fit`` releases the reference point ``base_point_`` with ``PrivateFrechetMean``
    (its method chosen by its public rule, clip radius ``reference_clip_norm``; replace-one, its
    own accountant), or takes the public ``base_point`` and charges nothing.
    ``transform`` maps each point x to the coordinates of Log_p(x) in an orthonormal
    basis of T_p M (``learning._tangent_frame``: the Riemannian norm is the Euclidean
    norm of the coordinates, for the affine-invariant, log-Euclidean or any other metric
    of ``space``), clipped to norm ``clip_norm``: rows of a public bound for any private
    model behind it (post-processing of the release and of each row).

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
        The clip radius of the private reference point (``PrivateFrechetMean``).
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
        The reference point's release ("public" for a given ``base_point``).
    """

    _FITTED = ("base_point_", "budget_", "events_", "method_")
    _parameter_constraints = {
        "space": "no_validation",
        "base_point": ["array-like", None],
        "clip_norm": [Interval(Real, 0, None, closed="neither")],
        "reference_clip_norm": [Interval(Real, 0, None, closed="neither")],
        **PRIVACY_CONSTRAINTS,
    }

    def __init__(self, space, epsilon=1.0, delta=1e-5, base_point=None, clip_norm=1.0,
                 reference_clip_norm=3.0, budget=None, random_state=None, secure=False):
        self.space = space
        self.epsilon = epsilon
        self.delta = delta
        self.base_point = base_point
        self.clip_norm = clip_norm
        self.reference_clip_norm = reference_clip_norm
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
        self._fit_reference(X, budget, self.epsilon, self.delta,
                            get_rng(self.random_state, self.secure))
        return self

    def _fit_reference(self, X, budget, epsilon, delta, rng):
        """Set ``base_point_``, ``events_``, ``method_`` and ``budget_``."""
        if self.base_point is not None:
            point, events, method = check_init_point(self.space, self.base_point, ATOL,
                                                     "base_point"), (), "public"
        else:
            mean = PrivateFrechetMean(self.space, epsilon=epsilon, delta=delta,
                                      clip_norm=float(self.reference_clip_norm), budget=budget,
                                      random_state=rng, secure=self.secure).fit(X)
            point, events, method = mean.estimate_, mean.events_, mean.method_
        self._frame = tangent_frame(self.space, to_numpy(point))
        self.__dict__.update(base_point_=point, events_=tuple(events), method_=method,
                             budget_=budget)

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
        return tangent_rows(self.space, self._frame, float(self.clip_norm), X)


class PrivateTangentSpaceClassifier(ClassifierMixin, PrivateToTangentSpace):
    """Differentially private tangent-space classifier: a private reference point, clipped
    orthonormal tangent coordinates at it, a private multinomial logistic regression.

    The reference point takes ``reference_fraction`` of epsilon and delta
    (``PrivateToTangentSpace``; none with a public ``base_point``); the linear model
    (``learning.mechanisms.logistic``: noisy full-batch gradient descent with per-record
    gradient clipping, the rows scaled by 1 / ``clip_norm`` into the unit ball) the rest.
    Noisy gradient descent was chosen over objective perturbation (Chaudhuri, Monteleoni
    & Sarwate 2011; Kifer, Smith & Thakurta 2012) as the simpler release with an exact
    accountant; the latter was not measured.

    Privacy. Adjacency: replace-one on whole records (point and label). Sensitivities:
    the reference point's (``PrivateFrechetMean``, 2C/n per step) and 2G per gradient
    step. Accountant: the budget composes the reference point's events and the
    ``n_iter`` Gaussian steps (exact Gaussian DP), each calibrated to its share.

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
        Share of epsilon and delta spent on the private reference point, in (0, 1).
    clip_norm : float
        C: the tangent rows' norm bound.
    reference_clip_norm : float
        The clip radius of the private reference point.
    gradient_clip : float
        G: per-record gradient clip (the rows scaled into the unit ball).
    regularization : float
        lambda >= 0, on the coefficients (public).
    n_iter : int
        Gradient steps (public).
    step_size : float
        eta.
    budget : PrivacyBudget or None
    random_state : None, int or numpy.random.Generator
    secure : bool

    Attributes
    ----------
    base_point_ : array-like, shape=[*space.shape]
    coef_ : numpy.ndarray, shape=[n_classes, space.dim]
        Coefficients on the rows scaled by 1 / ``clip_norm``.
    intercept_ : numpy.ndarray, shape=[n_classes]
    classes_ : numpy.ndarray, shape=[n_classes]
    budget_ : PrivacyBudget
    events_ : tuple
        The reference point's events, then the gradient steps'.
    method_ : str
        "noisy_gd".
    noise_multiplier_ : float
        z of a gradient step.
    n_iter_ : int
    """

    _FITTED = ("base_point_", "coef_", "intercept_", "classes_", "budget_", "events_",
               "method_", "noise_multiplier_", "n_iter_")
    _parameter_constraints = {
        **PrivateToTangentSpace._parameter_constraints,
        "classes": ["array-like", None],
        "reference_fraction": [Interval(Real, 0, 1, closed="neither")],
        "gradient_clip": [Interval(Real, 0, None, closed="neither")],
        "regularization": [Interval(Real, 0, None, closed="left")],
        "n_iter": [Interval(Integral, 1, None, closed="left")],
        "step_size": [Interval(Real, 0, None, closed="neither")],
    }

    def __init__(self, space, epsilon=1.0, delta=1e-5, classes=None, base_point=None,
                 reference_fraction=0.2, clip_norm=1.0, reference_clip_norm=3.0,
                 gradient_clip=1.0, regularization=1e-3, n_iter=100, step_size=5.0,
                 budget=None, random_state=None, secure=False):
        super().__init__(space, epsilon=epsilon, delta=delta, base_point=base_point,
                         clip_norm=clip_norm, reference_clip_norm=reference_clip_norm,
                         budget=budget, random_state=random_state, secure=secure)
        self.classes = classes
        self.reference_fraction = reference_fraction
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
        epsilon, delta = self.epsilon * (1 - share), self.delta * (1 - share)
        multiplier = calibrate_gaussian(epsilon, delta, self.n_iter)
        mechanism = LogisticRelease(len(points), len(classes), int(self.space.dim),
                                    float(self.gradient_clip), float(self.regularization),
                                    self.n_iter, float(self.step_size), multiplier,
                                    label=type(self).__name__)
        budget.check(*mechanism.events())  # the model's room, before the reference point
        rng = get_rng(self.random_state, self.secure)
        self._fit_reference(points, budget, self.epsilon * share, self.delta * share, rng)
        features = partial(tangent_rows, self.space, self._frame, float(self.clip_norm),
                           check=True, scale=True)
        fitted = run_release(dataclasses.replace(mechanism, features=features), budget,
                             (points, codes), None, rng, self.secure)
        self.__dict__.update(fitted, classes_=classes, method_="noisy_gd",
                             events_=self.events_ + fitted["events_"])
        return self

    def decision_function(self, X):
        """Scores of each class, shape=[n_samples, n_classes] (post-processing)."""
        check_is_fitted(self, "coef_")
        rows = tangent_rows(self.space, self._frame, float(self.clip_norm), X, scale=True)
        return rows @ self.coef_.T + self.intercept_

    def predict(self, X):
        """The class of the largest score, shape=[n_samples]."""
        return self.classes_[np.argmax(self.decision_function(X), axis=1)]

    def predict_proba(self, X):
        """Softmax of the scores, shape=[n_samples, n_classes]."""
        return softmax(self.decision_function(X), axis=1)

