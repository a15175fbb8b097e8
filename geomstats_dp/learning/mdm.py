"""Private minimum distance to mean: one private Riemannian mean per class."""

from numbers import Integral, Real
from typing import ClassVar

import numpy as np
from scipy.special import softmax
from sklearn.base import ClassifierMixin, TransformerMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.learning._base import PrivateEstimator
from geomstats_dp.learning._classes import PRIVACY_CONSTRAINTS, class_codes
from geomstats_dp.learning._data import check_shape
from geomstats_dp.learning.mechanisms.base import run_release
from geomstats_dp.learning.mechanisms.class_means import (
    ATOL,
    ClassMeansRelease,
    class_mean_multipliers,
    reference_release,
)
from geomstats_dp.optim.initial_point import check_init_point


class PrivateMDM(ClassifierMixin, TransformerMixin, PrivateEstimator):
    """Differentially private minimum distance to mean (MDM) classifier.

    One private mean per class (``learning.mechanisms.class_means``: ``n_iter`` noisy
    full-batch tangent steps from a common start, the classes' clipped tangent sums one
    Gaussian query), then a point is given the class of the nearest centroid, as
    geomstats' ``RiemannianMinimumDistanceToMean`` and pyRiemann's ``MDM``. The common
    start is a private mean of all the records (``reference_fraction`` of the budget,
    ``reference_n_iter`` steps of clip radius ``reference_clip_norm`` from
    ``init_point``), or ``init_point`` itself with ``reference_fraction=0``.

    Privacy. ``labels="private"`` (default): replace-one on whole records (features and
    label); the class counts are released as noisy counts (5% of mu^2, l2 sensitivity
    sqrt(2)) and the class sums have l2 sensitivity 2C. ``labels="public"``: the labels
    are public and neighbours differ in one record's features; the public class sizes are
    used and the classes compose in parallel (the stacked sums, sensitivity 2C, pay the
    budget once). The reference start: replace-one, sensitivity 2C' per round. Accountant:
    Gaussian DP, exact composition of the rounds (reference, counts, class sums);
    ``epsilon``/``delta`` of the whole fit. ``predict``, ``predict_proba`` and
    ``transform`` are post-processing of the released centroids.

    Parameters
    ----------
    space : Manifold
        A geomstats space with a metric (SPDMatrices for covariance matrices).
    epsilon : float
        Privacy parameter of the fit, > 0.
    delta : float
        In (0, 1).
    labels : {"private", "public"}
        Whether the labels are private (replace-one on records) or public.
    classes : array-like or None
        The public classes; None: those of ``y`` (a PrivacyLeakWarning with private
        labels).
    clip_norm : float
        C: tangent vectors Log_m(x) are clipped to this Riemannian norm.
    n_iter : int
        Public number of rounds of tangent steps.
    init_point : array-like or None, shape=[*space.shape]
        The public start of the reference point (of every class with
        ``reference_fraction=0``); None: the canonical point (identity for SPD).
    reference_fraction : float
        Share of the budget's mu^2 spent on the private common start, in [0, 1).
    reference_clip_norm : float
        C': the clip radius of its tangent steps.
    reference_n_iter : int
        Its number of tangent steps.
    budget : PrivacyBudget or None
        Charged by ``fit``; None: the active budget, else a fresh one.
    random_state : None, int or numpy.random.Generator
    secure : bool
        Draw the noise from the operating system's entropy.

    Attributes
    ----------
    centroids_ : array-like, shape=[n_classes, *space.shape]
        The released class means.
    classes_ : numpy.ndarray, shape=[n_classes]
    budget_ : PrivacyBudget
    events_ : tuple of GaussianEvent
        The events charged.
    method_ : str
        "class_means".
    noise_multiplier_ : float
        z of one round of class sums.
    noise_multipliers_ : dict
        z of the class sums, of the counts (None with public labels) and of the
        reference rounds (None with ``reference_fraction=0``).
    n_iter_ : int
    """

    _FITTED = ("centroids_", "classes_", "budget_", "events_", "method_",
               "noise_multiplier_", "noise_multipliers_", "n_iter_")
    _parameter_constraints: ClassVar[dict] = {
        "space": "no_validation",
        "labels": [StrOptions({"private", "public"})],
        "classes": ["array-like", None],
        "clip_norm": [Interval(Real, 0, None, closed="neither")],
        "n_iter": [Interval(Integral, 1, None, closed="left")],
        "init_point": ["array-like", None],
        "reference_fraction": [Interval(Real, 0, 1, closed="left")],
        "reference_clip_norm": [Interval(Real, 0, None, closed="neither")],
        "reference_n_iter": [Interval(Integral, 1, None, closed="left")],
        **PRIVACY_CONSTRAINTS,
    }

    def __init__(self, space, epsilon=1.0, delta=1e-5, labels="private", classes=None,
                 clip_norm=1.0, n_iter=1, init_point=None, reference_fraction=0.2,
                 reference_clip_norm=3.0, reference_n_iter=3, budget=None,
                 random_state=None, secure=False):
        self.space = space
        self.epsilon = epsilon
        self.delta = delta
        self.labels = labels
        self.classes = classes
        self.clip_norm = clip_norm
        self.n_iter = n_iter
        self.init_point = init_point
        self.reference_fraction = reference_fraction
        self.reference_clip_norm = reference_clip_norm
        self.reference_n_iter = reference_n_iter
        self.budget = budget
        self.random_state = random_state
        self.secure = secure
        self._remember_budget()

    def fit(self, X, y):
        """Release the private class means of ``X``.

        Parameters
        ----------
        X : array-like, shape=[n_samples, *space.shape]
            Points on the space.
        y : array-like, shape=[n_samples]
            Labels, in ``classes`` when given.

        Returns
        -------
        self : PrivateMDM
        """
        self._validate_params()
        budget = self._start_fit(self.epsilon, self.delta)
        points = check_shape(self.space, X)
        private = self.labels == "private"
        classes, codes = class_codes(y, self.classes, len(points), private)
        start = to_numpy(check_init_point(self.space, self.init_point, ATOL))
        share = float(self.reference_fraction)
        reference = None if share == 0 else reference_release(
            self.space, start, len(points), self.epsilon, self.delta,
            float(self.reference_clip_norm), self.reference_n_iter, share,
            f"{type(self).__name__}: reference point")
        count_z, sum_z = class_mean_multipliers(self.epsilon, self.delta, self.n_iter,
                                                private, 1 - share)
        mechanism = ClassMeansRelease(
            self.space, start, len(classes), float(self.clip_norm), self.n_iter, sum_z,
            count_z, None if private else tuple(np.bincount(codes, minlength=len(classes))),
            label=type(self).__name__, reference=reference)
        fitted = run_release(mechanism, budget, (points, codes), None,
                             self.random_state, self.secure)
        return self._set_fitted(fitted, classes_=classes, budget_=budget,
                                method_="class_means")

    def transform(self, X):
        """Riemannian distances to the centroids (post-processing).

        Parameters
        ----------
        X : array-like, shape=[n_samples, *space.shape]

        Returns
        -------
        distances : numpy.ndarray, shape=[n_samples, n_classes]
        """
        check_is_fitted(self, "centroids_")
        points = to_backend(check_shape(self.space, X, min_samples=1))
        return np.stack([to_numpy(self.space.metric.dist(points, centroid))
                         for centroid in self.centroids_], axis=-1)

    def predict(self, X):
        """The class of the nearest centroid, shape=[n_samples]."""
        distances = self.transform(X)
        return self.classes_[np.argmin(distances, axis=1)]

    def predict_proba(self, X):
        """Softmax of minus the squared distances (as pyRiemann's MDM),
        shape=[n_samples, n_classes]."""
        return softmax(-self.transform(X) ** 2, axis=1)

