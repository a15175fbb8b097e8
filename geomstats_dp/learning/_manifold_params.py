"""Declarative parameter constraints shared by the manifold estimators of issue 32
(``PrivateKMeans``, ``PrivateTangentPCA``, ``PrivateGeometricMedian``), in scikit-learn's
``_parameter_constraints`` style, and the few checks a constraint cannot state."""

from numbers import Integral, Real

from sklearn.utils._param_validation import HasMethods, Interval, StrOptions

from geomstats_dp._validation import check_positive_finite
from geomstats_dp.distributions.tangent_gaussian import METHODS as NOISE_METHODS

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
