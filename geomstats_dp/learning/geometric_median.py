"""PrivateGeometricMedian: DP-RGD on the sum of geodesic distances, whose per-record
gradients are unit vectors."""

import warnings
from typing import ClassVar

import geomstats.backend as gs
from sklearn.utils.validation import check_is_fitted

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.distributions.membership import check_on_space
from geomstats_dp.learning._data import check_points
from geomstats_dp.learning._defaults import default_n_iter
from geomstats_dp.learning._manifold_params import (
    COMMON_CONSTRAINTS,
    POSITIVE,
    POSITIVE_INT,
    ManifoldEstimator,
)
from geomstats_dp.learning.erm import GRADIENT_FITTED, PrivateERM
from geomstats_dp.optim import InverseSqrtStep, PerSampleLoss, normalize_sample_weight
from geomstats_dp.privacy import PrivacyLeakWarning

ATOL = 1e-6  # tolerance of the check that the records lie on the space
# Default schedule eta_t = STEP_SCALE / sqrt(t + 1) (in units of distance: the loss is
# 1-Lipschitz), and at least MIN_ITER steps: the steps then add up to about 2 STEP_SCALE
# sqrt(T) >= 20 STEP_SCALE, enough to travel from the start to data several units away,
# and the last ones (STEP_SCALE / 10) are short enough to settle where the data's spread
# is a fraction of a unit (docs/manifold_estimators.md).
STEP_SCALE = 1.0
MIN_ITER = 100
GEOMETRIC_MEDIAN_FITTED = (*GRADIENT_FITTED, "n_features_in_")


class DistanceLoss(PerSampleLoss):
    """f(x; z) = d(x, z), minimised over a sample by its geometric median.

    Its Riemannian gradient -Log_x(z) / d(x, z) is a unit vector wherever z != x; at
    z = x (no gradient) the record counts as zero, record by record. Every per-record
    gradient thus has norm at most 1: a clip norm of 1 changes nothing, and replacing a
    record moves the mean gradient by at most 2/n.

    Parameters
    ----------
    space : Manifold
    atol : float
        Tolerance of the check that data points lie on the space, and the distance below
        which a record counts as at the point.
    """

    def __init__(self, space, atol=ATOL):
        super().__init__(space)
        self.atol = atol

    def check_data(self, data):
        """Return the data points [n, *space.shape] after checking they lie on the space."""
        points = super().check_data(data)
        check_on_space(self.space, to_numpy(points), self.atol, "X")
        return points

    def values(self, point, data):
        """d(x, z_i) for each sample, shape=[k]."""
        return self.space.metric.dist(data, point)

    def gradients(self, point, data):
        """-Log_x(z_i) / d(x, z_i), zero where d(x, z_i) <= atol; shape=[k, *space.shape]."""
        logs = self.space.metric.log(data, point)
        norms = self.space.metric.norm(logs, point)
        scale = gs.where(norms > self.atol, -1.0 / gs.maximum(norms, self.atol), 0.0)
        return gs.einsum("k,k...->k...", scale, logs)


class PrivateGeometricMedian(ManifoldEstimator):
    """Differentially private geometric median on a geomstats manifold.

    Minimises (1/n) sum_i d(x, z_i) by DP Riemannian gradient descent (``PrivateERM``,
    method "rgd", on ``DistanceLoss``): the per-record gradients are unit vectors (zero
    for a record at the iterate), so no clip bound is needed and each full-batch query
    has replace-one sensitivity 2/n, whatever the data's spread. The release
    ``estimate_`` is (epsilon, delta)-DP under replace-one adjacency; the steps are
    composed exactly in Gaussian DP (``PrivateERM``'s accountant). The start, the number
    of steps and the schedule are public.

    Parameters
    ----------
    space : Manifold
        A geomstats space with a metric.
    epsilon : float
        Privacy parameter of this release, > 0.
    delta : float
        In (0, 1).
    n_iter : int, optional
        Steps; default the larger of ``MIN_ITER`` and PrivateERM's default for n, the
        dimension, epsilon and delta.
    step_size : float, optional
        eta_0 of the schedule eta_t = eta_0 / sqrt(t + 1), in units of distance; default
        ``STEP_SCALE``.
    init_point : array-like, shape=[*space.shape], optional
        Data-independent start; default the canonical point of the space.
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
    estimate_ : array-like, shape=[*space.shape]
        The released private median.
    budget_, method_, noise_multiplier_, noise_multipliers_, n_iter_,
    n_gradient_evaluations_, clip_norm_, events_, noise_ratio_
        As in ``PrivateERM`` (``clip_norm_`` is 1).
    n_features_in_ : int
        Coordinates of a point (prod(space.shape)).
    """

    _parameter_constraints: ClassVar[dict] = {
        **COMMON_CONSTRAINTS,
        "n_iter": [None, POSITIVE_INT],
        "step_size": [None, POSITIVE],
        "init_point": [None, "array-like"],
    }
    _FINITE = ("epsilon", "step_size")
    _FITTED = GEOMETRIC_MEDIAN_FITTED

    def __init__(self, space, epsilon=1.0, delta=1e-5, n_iter=None, step_size=None,
                 init_point=None, noise_method="transport", budget=None,
                 random_state=None, secure=False):
        self.space = space
        self.epsilon = epsilon
        self.delta = delta
        self.n_iter = n_iter
        self.step_size = step_size
        self.init_point = init_point
        self.noise_method = noise_method
        self.budget = budget
        self.random_state = random_state
        self.secure = secure
        self._remember_budget()

    def fit(self, X, y=None, sample_weight=None):
        """Release a private geometric median of ``X``.

        Parameters
        ----------
        X : array-like, shape=[n_samples, *space.shape]
            Points on the space (n_samples >= 2); values are checked once the budget is.
        y : None
            Ignored.
        sample_weight : array-like, shape=[n_samples], optional
            Public non-negative weights; the sensitivity grows with n max_i w_i.

        Returns
        -------
        self : PrivateGeometricMedian
        """
        budget, points = self._begin_fit(X)
        erm = PrivateERM(
            self.space, DistanceLoss(self.space), epsilon=self.epsilon, delta=self.delta,
            method="rgd", clip_norm=1.0, n_iter=self._n_iter(len(points)),
            step_size=InverseSqrtStep(self.step_size or STEP_SCALE), output="last",
            init_point=self.init_point, noise_method=self.noise_method, budget=budget,
            random_state=self.random_state, secure=self.secure)
        erm.fit(points, sample_weight=sample_weight)
        return self._end_fit({name: getattr(erm, name) for name in GRADIENT_FITTED
                              if name != "budget_"}, budget)

    def _n_iter(self, n_samples):
        """``n_iter``, else max(MIN_ITER, PrivateERM's default) from public quantities."""
        if self.n_iter is not None:
            return self.n_iter
        return max(MIN_ITER, default_n_iter("rgd", n_samples, int(self.space.dim),
                                            self.epsilon, self.delta))

    def score(self, X, y=None, sample_weight=None):
        """Minus the mean distance of ``X`` to the estimate (not private).

        Emits a PrivacyLeakWarning: a loss value on the data is not covered by the budget.

        Returns
        -------
        score : float
        """
        warnings.warn("score evaluates the loss on the data; the value is not "
                      "differentially private", PrivacyLeakWarning, stacklevel=2)
        check_is_fitted(self, "estimate_")
        points = to_backend(check_points(self.space, X, ATOL, min_samples=1))
        weights = to_backend(normalize_sample_weight(sample_weight, len(points)))
        return -float(gs.sum(weights * self.space.metric.dist(points, self.estimate_)))
