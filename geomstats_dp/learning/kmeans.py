"""PrivateKMeans: k-means on a manifold by private Lloyd iterations."""

import warnings
from typing import ClassVar

import numpy as np
from sklearn.base import TransformerMixin
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import check_is_fitted

from geomstats_dp._backend import to_backend
from geomstats_dp.learning._data import check_points
from geomstats_dp.learning._manifold_params import (
    COMMON_CONSTRAINTS,
    POSITIVE,
    POSITIVE_INT,
    ManifoldEstimator,
)
from geomstats_dp.learning.mechanisms.base import run_release
from geomstats_dp.learning.mechanisms.lloyd import (
    ATOL,
    LloydRelease,
    lloyd_multipliers,
    nearest_centres,
)
from geomstats_dp.privacy import PrivacyLeakWarning

KMEANS_FITTED = ("cluster_centers_", "cluster_sizes_", "n_iter_", "noise_multipliers_",
                 "budget_", "events_", "n_features_in_")


class PrivateKMeans(TransformerMixin, ManifoldEstimator):
    """Differentially private k-means on a geomstats manifold (private Lloyd iterations).

    ``n_iter`` Lloyd iterations, each releasing per cluster a noisy count and a noisy sum
    of the log-maps of its records at its centre, clipped to ``clip_norm`` C in the
    Riemannian norm; each centre moves by the exponential map of the noisy tangent mean
    (``learning.mechanisms.lloyd``). The release ``cluster_centers_`` is
    (epsilon, delta)-DP under replace-one adjacency: sensitivities sqrt(2) (counts) and
    2C (tangent sums) per iteration, 2C/n for the private base point of
    ``init="private"``; exact Gaussian-DP composition, calibrated before any data value
    is read. The number of iterations and the initialisation are public.

    The labels of the training records are not released (no ``labels_``): a record's
    label is a function of the record itself, which no differentially private release
    can be. ``predict``, ``transform`` and ``score`` compute on the data they are given
    and their outputs are not covered by the guarantee.

    Parameters
    ----------
    space : Manifold
        A geomstats space with a metric.
    n_clusters : int
        k, the number of centres.
    epsilon : float
        Privacy parameter of this release, > 0.
    delta : float
        In (0, 1).
    clip_norm : float
        C, the public radius of a cluster around its centre: each record's log-map at its
        centre is clipped to it (which biases the centres of wider clusters, not the
        guarantee).
    n_iter : int
        The public number of Lloyd iterations.
    init : {"private", "random"} or array-like, shape=[n_clusters, *space.shape]
        "private" (default): k centres at distance C / 2 from a private base point (one
        noisy tangent-mean step from the canonical point, 1 / (n_iter + 1) of the
        budget), in random directions; "random": the same around the canonical point,
        spending nothing; an array: public initial centres (not derived from the data).
    noise_method : str
        ``TangentGaussian`` method of the tangent noise.
    budget : PrivacyBudget, optional
        Budget to charge; default the one active when the estimator was created or
        fitted, else a fresh PrivacyBudget(epsilon, delta).
    random_state : None, int or numpy.random.Generator
    secure : bool
        Draw the noise from the operating system's entropy (random_state must be None).

    Attributes
    ----------
    cluster_centers_ : array-like, shape=[n_clusters, *space.shape]
        The released centres.
    cluster_sizes_ : numpy.ndarray, shape=[n_clusters]
        The noisy counts of the last iteration (released).
    n_iter_ : int
        Iterations run (``n_iter``).
    noise_multipliers_ : dict
        Noise standard deviation over sensitivity of each release ("base point" None for
        public centres).
    budget_ : PrivacyBudget
        The budget charged.
    events_ : tuple
        The privacy events charged.
    n_features_in_ : int
        Coordinates of a point (prod(space.shape)).
    """

    _parameter_constraints: ClassVar[dict] = {
        **COMMON_CONSTRAINTS,
        "n_clusters": [POSITIVE_INT],
        "clip_norm": [POSITIVE],
        "n_iter": [POSITIVE_INT],
        "init": [StrOptions({"private", "random"}), "array-like"],
    }
    _FINITE = ("epsilon", "clip_norm")
    _FITTED = KMEANS_FITTED

    def __init__(self, space, n_clusters=2, epsilon=1.0, delta=1e-5, clip_norm=1.0,
                 n_iter=5, init="private", noise_method="transport", budget=None,
                 random_state=None, secure=False):
        self.space = space
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.delta = delta
        self.clip_norm = clip_norm
        self.n_iter = n_iter
        self.init = init
        self.noise_method = noise_method
        self.budget = budget
        self.random_state = random_state
        self.secure = secure
        self._remember_budget()

    def fit(self, X, y=None):
        """Release private cluster centres of ``X``.

        Parameters
        ----------
        X : array-like, shape=[n_samples, *space.shape]
            Points on the space (n_samples >= 2); values are checked once the budget is.
        y : None
            Ignored.

        Returns
        -------
        self : PrivateKMeans
        """
        budget, points = self._begin_fit(X)
        mechanism = LloydRelease(
            self.space, len(points), self.n_clusters, self.n_iter, float(self.clip_norm),
            self._public_init(), lloyd_multipliers(
                self.epsilon, self.delta, self.n_iter, int(self.space.dim),
                isinstance(self.init, str) and self.init == "private"),
            self.noise_method)
        fitted = run_release(mechanism, budget, points, None, self.random_state,
                             self.secure)
        return self._end_fit(fitted, budget)

    def _public_init(self):
        """``init``: "private", "random" or the public centres [k, *shape], checked."""
        if isinstance(self.init, str):
            return self.init
        centres = check_points(self.space, self.init, ATOL, min_samples=1, name="init")
        if len(centres) != self.n_clusters:
            raise ValueError(f"init must hold n_clusters={self.n_clusters} centres, got "
                             f"{len(centres)}")
        return centres

    def _distances(self, X):
        check_is_fitted(self, "cluster_centers_")
        points = to_backend(check_points(self.space, X, ATOL, min_samples=1))
        return nearest_centres(self.space, points, self.cluster_centers_)

    def predict(self, X):
        """The index of the nearest released centre of each point (geodesic distance).

        Parameters
        ----------
        X : array-like, shape=[n_samples, *space.shape]

        Returns
        -------
        labels : numpy.ndarray of int, shape=[n_samples]
        """
        return self._distances(X)[0]

    def transform(self, X):
        """The geodesic distances of each point to the released centres.

        Parameters
        ----------
        X : array-like, shape=[n_samples, *space.shape]

        Returns
        -------
        distances : numpy.ndarray, shape=[n_samples, n_clusters]
        """
        return self._distances(X)[1]

    def score(self, X, y=None):
        """Minus the sum of squared distances of ``X`` to their nearest centres (not private).

        Emits a PrivacyLeakWarning: a value computed on the data is not covered by the
        budget.

        Returns
        -------
        score : float
        """
        warnings.warn("score evaluates the inertia on the data; the value is not "
                      "differentially private", PrivacyLeakWarning, stacklevel=2)
        return -float(np.sum(np.min(self._distances(X)[1], axis=1) ** 2))
