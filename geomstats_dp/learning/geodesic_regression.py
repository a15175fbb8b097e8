"""PrivateGeodesicRegression: a geodesic y = Exp_p(x v) fitted to a scalar covariate and
manifold-valued responses by DP Riemannian gradient descent on (p, v)."""

import warnings
from typing import ClassVar

import numpy as np
from sklearn.utils.validation import check_is_fitted

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.learning._data import check_array, check_points, check_shape
from geomstats_dp.learning._geodesic_gradients import curvature_of, losses, predict
from geomstats_dp.learning._manifold_params import (
    COMMON_CONSTRAINTS,
    POSITIVE,
    POSITIVE_INT,
    ManifoldEstimator,
    check_common,
)
from geomstats_dp.learning.mechanisms.geodesic_regression import (
    ATOL,
    GeodesicRegressionRelease,
    default_n_iter,
)
from geomstats_dp.optim.initial_point import check_init_point
from geomstats_dp.privacy import PrivacyLeakWarning

GEODESIC_REGRESSION_FITTED = ("intercept_", "coef_", "noise_multiplier_", "n_iter_",
                              "clip_norm_", "budget_", "method_", "events_",
                              "n_features_in_")


class PrivateGeodesicRegression(ManifoldEstimator):
    """Differentially private geodesic regression (Fletcher 2013) on a space of constant
    curvature.

    Fits y = Exp_p(x v), x a scalar covariate and y a point of ``space``, by minimising
    (1/n) sum_i d(Exp_p(x_i v), y_i)^2 / 2 with DP Riemannian gradient descent on (p, v)
    (as in Kulkarni & Soto 2025): the per-record gradients, in closed form through
    adjoint Jacobi fields (``learning._geodesic_gradients``), are clipped jointly to
    ``clip_norm`` in the product norm, and each step adds Gaussian noise in
    T_p M x T_p M; p moves by the exponential map and v is parallel transported to the
    new p. The covariate is mapped to [-1, 1] by the public ``x_range`` (and clipped to
    it). The release (``intercept_``, ``coef_``) is (epsilon, delta)-DP under
    replace-one adjacency of the records (x_i, y_i): sensitivity 2C/n per step, the
    steps composed exactly in Gaussian DP
    (``learning.mechanisms.geodesic_regression``).

    Parameters
    ----------
    space : Manifold
        Euclidean, Hypersphere or Hyperboloid (extrinsic coordinates) with its default
        metric; another space (SPD matrices, ...) raises ValueError here.
    x_range : tuple of float
        Public (low, high) bounds of the covariate; values outside are clipped to them.
    epsilon : float
        Privacy parameter of this release, > 0.
    delta : float
        In (0, 1).
    clip_norm : float
        C, the bound of each record's joint gradient in (p, v).
    n_iter : int, optional
        Steps; default ``mechanisms.geodesic_regression.default_n_iter``.
    step_size : float, optional
        Constant step; default DP-RGD's, shrunk when the noise dominates.
    init_point : array-like, shape=[*space.shape], optional
        Data-independent start of p (v starts at 0); default the canonical point.
    noise_method : str
        ``TangentGaussian`` method of the noise.
    budget : PrivacyBudget, optional
        Budget to charge; default the one active when the estimator was created or
        fitted, else a fresh PrivacyBudget(epsilon, delta).
    random_state : None, int or numpy.random.Generator
    secure : bool
        Draw the noise from the operating system's entropy (random_state must be None).

    Attributes
    ----------
    intercept_ : array-like, shape=[*space.shape]
        p, the released point at the centre of ``x_range``.
    coef_ : array-like, shape=[*space.shape]
        v, the released tangent vector at ``intercept_`` per unit of x.
    noise_multiplier_ : float
    n_iter_ : int
    clip_norm_ : float
    budget_, method_, events_
        The budget charged, "rgd" and the events charged.
    n_features_in_ : int
        1.
    """

    _parameter_constraints: ClassVar[dict] = {
        **COMMON_CONSTRAINTS,
        "x_range": [tuple, list],
        "clip_norm": [POSITIVE],
        "n_iter": [None, POSITIVE_INT],
        "step_size": [None, POSITIVE],
        "init_point": [None, "array-like"],
    }
    _FINITE = ("epsilon", "clip_norm", "step_size")
    _FITTED = GEODESIC_REGRESSION_FITTED

    def __init__(self, space, x_range=(-1.0, 1.0), epsilon=1.0, delta=1e-5, clip_norm=1.0,
                 n_iter=None, step_size=None, init_point=None, noise_method="transport",
                 budget=None, random_state=None, secure=False):
        self.space = space
        self.x_range = x_range
        self.epsilon = epsilon
        self.delta = delta
        self.clip_norm = clip_norm
        self.n_iter = n_iter
        self.step_size = step_size
        self.init_point = init_point
        self.noise_method = noise_method
        self.budget = budget
        self.random_state = random_state
        self.secure = secure
        self._remember_budget()

    def _x_range(self):
        """``x_range`` as two finite floats low < high."""
        values = np.asarray(self.x_range, dtype=float).ravel()
        if values.shape != (2,) or not np.isfinite(values).all() or values[0] >= values[1]:
            raise ValueError(f"x_range must be two finite numbers (low, high) with "
                             f"low < high, got {self.x_range!r}")
        return float(values[0]), float(values[1])

    def fit(self, X, y):
        """Release a private geodesic fitted to (X, y).

        Parameters
        ----------
        X : array-like, shape=[n_samples, 1]
            The covariate; values are checked once the budget is.
        y : array-like, shape=[n_samples, *space.shape]
            Points on the space.

        Returns
        -------
        self : PrivateGeodesicRegression
        """
        budget = self._start_fit(self.epsilon, self.delta)
        self._validate_params()
        check_common(self, finite=self._FINITE)
        curvature = curvature_of(self.space)
        x_range = self._x_range()
        x = self._covariate(X)
        points = check_shape(self.space, y, name="y")
        if len(points) != len(x):
            raise ValueError(f"X and y must hold the same number of records, got "
                             f"{len(x)} and {len(points)}")
        n_samples, dim = len(x), int(self.space.dim)
        mechanism = GeodesicRegressionRelease(
            self.space, curvature, n_samples, float(self.epsilon), float(self.delta),
            self.n_iter or default_n_iter(n_samples, dim, self.epsilon, self.delta),
            float(self.clip_norm), x_range,
            np.asarray(check_init_point(self.space, self.init_point)),
            self.step_size, self.noise_method)
        self._fit_release(budget, "rgd", mechanism, (x, points), None)
        self.n_features_in_ = 1
        return self

    @staticmethod
    def _covariate(X, min_samples=2):
        """X [n, 1] as a float numpy vector [n] (shape checked, values not read)."""
        array = check_array(X, "X", min_ndim=2)
        if array.ndim != 2 or array.shape[1] != 1:
            raise ValueError(f"X must have shape [n_samples, 1], got {array.shape}")
        if len(array) < min_samples:
            raise ValueError(f"X must hold at least {min_samples} records, got "
                             f"{len(array)}")
        return array[:, 0]

    def predict(self, X):
        """The fitted points Exp_p((x - centre) v) for x clipped to ``x_range``.

        Parameters
        ----------
        X : array-like, shape=[n_samples, 1]

        Returns
        -------
        y_pred : array-like, shape=[n_samples, *space.shape]
        """
        check_is_fitted(self, "coef_")
        return predict(self.space, self.intercept_, self.coef_, self._centred(X))

    def _centred(self, X):
        """x clipped to ``x_range`` minus its centre, a backend vector [n]."""
        low, high = self._x_range()
        x = np.clip(self._covariate(X, min_samples=1), low, high) - (low + high) / 2
        return to_backend(x)

    def score(self, X, y):
        """Minus the mean squared-distance loss on (X, y) (not private).

        Emits a PrivacyLeakWarning: a loss value on the data is not covered by the budget.

        Returns
        -------
        score : float
        """
        warnings.warn("score evaluates the loss on the data; the value is not "
                      "differentially private", PrivacyLeakWarning, stacklevel=2)
        check_is_fitted(self, "coef_")
        points = to_backend(check_points(self.space, y, ATOL, min_samples=1, name="y"))
        values = losses(self.space, self.intercept_, self.coef_, self._centred(X), points)
        return -float(np.mean(to_numpy(values)))
