"""What the manifold estimators of issue 32 (``PrivateKMeans``, ``PrivateTangentPCA``,
``PrivateGeometricMedian``) share: declarative parameter constraints in scikit-learn's
``_parameter_constraints`` style, the few checks a constraint cannot state, and the
start and end of their ``fit``."""

from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions

from geomstats_dp._validation import check_positive_finite
from geomstats_dp.distributions.tangent_gaussian import METHODS as NOISE_METHODS
from geomstats_dp.learning._base import PrivateEstimator
from geomstats_dp.learning._data import check_shape

POSITIVE = Interval(Real, 0, None, closed="neither")
COMMON_CONSTRAINTS = {
    "space": [HasMethods(["belongs"])],
    "epsilon": [POSITIVE],
    "delta": [Interval(Real, 0, 1, closed="neither")],
    "noise_method": [StrOptions(set(NOISE_METHODS))],
    "budget": [None, HasMethods(["reserve"])],
    "random_state": "no_validation",  # None, int or Generator: ``_backend.get_rng``
    "secure": ["boolean"],
}
POSITIVE_INT = Interval(Integral, 1, None, closed="left")


def check_common(estimator, finite=("epsilon",)):
    """What the constraints cannot state: a metric, finite positive values, and
    ``secure=True`` with ``random_state=None`` (errors name the argument).

    Parameters
    ----------
    estimator : estimator
        Validated by ``_validate_params`` already.
    finite : tuple of str
        Parameters that must be finite (``inf`` passes the interval constraints).
    """
    if not hasattr(estimator.space, "metric"):
        raise TypeError(f"space {type(estimator.space).__name__} has no metric")
    for name in finite:
        value = getattr(estimator, name)
        if value is not None:
            check_positive_finite(value, name)
    if estimator.secure and estimator.random_state is not None:
        raise ValueError(
            "secure=True draws from the operating system's entropy; "
            f"random_state must be None, got {estimator.random_state!r}"
        )


class ManifoldEstimator(PrivateEstimator):
    """Base of the manifold estimators: ``_begin_fit`` (budget, parameters, shapes; no
    data value read) and ``_end_fit`` (the fitted attributes)."""

    _FINITE = ("epsilon",)  # parameters that must be finite

    def _begin_fit(self, X):
        """Clear the fitted state, validate the parameters, check the shape of ``X``.

        Returns
        -------
        budget : PrivacyBudget
        points : numpy.ndarray, shape=[n_samples, *space.shape]
        """
        budget = self._start_fit(self.epsilon, self.delta)
        self._validate_params()
        check_common(self, finite=self._FINITE)
        return budget, check_shape(self.space, X)

    def _end_fit(self, fitted, budget):
        """Set the released attributes, ``budget_`` and ``n_features_in_``."""
        return self._set_fitted(fitted, budget_=budget,
                                n_features_in_=int(np.prod(self.space.shape)))
