"""Argument checks shared by the whole package; each error names the argument.

Two kinds: the check functions (``check_positive_finite`` ...) for arguments of functions
and mechanisms, and the declarative constraints of the estimators' parameters
(scikit-learn's ``_parameter_constraints``, checked by ``self._validate_params()`` at the
start of ``fit``; its ``InvalidParameterError`` is a ValueError and a TypeError naming the
parameter). The constraints this package adds are below: ``PositiveFinite``,
``PositiveInt``, ``HasMetric``, ``IsBudget``, ``RandomStates``, ``RatingRange``, and the lists
``CLIP_NORM``, ``PROBABILITY``, ``BUDGET``, ``RANDOM_STATE`` to use as entries.
"""

import math
import numbers

import numpy as np
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions

from geomstats_dp._backend import BufferedNormals, SecureGenerator

MAX_LISTED = 10


def check_positive_finite(value, name):
    """Return ``value`` as a float after checking that it is finite and > 0."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    value = float(value)
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be finite and > 0, got {value}")
    return value


def check_probability(value, name, allow_zero=False):
    """Return ``value`` as a float after checking it lies in (0, 1) ([0, 1) if allowed)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    value = float(value)
    low_ok = value >= 0 if allow_zero else value > 0
    if not (low_ok and value < 1):
        interval = "[0, 1)" if allow_zero else "(0, 1)"
        raise ValueError(f"{name} must lie in {interval}, got {value}")
    return value


def check_positive_int(value, name, minimum=1):
    """Return ``value`` as an int after checking it is an integer >= ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return int(value)


def check_finite_array(array, name):
    """Raise ValueError naming the first index of ``array`` holding NaN or inf.

    A finite sum proves every entry finite (NaN and inf propagate), in one pass with no
    temporary array; only a non-finite sum (or an overflow) needs the entrywise test.
    """
    if math.isfinite(np.sum(array)):
        return
    bad = ~np.isfinite(array)
    if bad.any():
        index = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(f"{name} holds a non-finite value at index {index}")


# -- declarative constraints of the estimators' parameters ---------------------------------


class _Constraint(HasMethods):
    """Base of this package's constraints (scikit-learn accepts its own constraint types
    only, ``HasMethods`` among them; ``is_satisfied_by`` and ``__str__`` are redefined)."""

    def __init__(self):
        super().__init__([])

    def is_satisfied_by(self, val):
        raise NotImplementedError


class PositiveFinite(_Constraint):
    """A real number (not a bool), finite and > 0."""

    def is_satisfied_by(self, val):
        if isinstance(val, bool) or not isinstance(val, numbers.Real):
            return False
        return math.isfinite(val) and val > 0

    def __str__(self):
        return "a finite float > 0"


class PositiveInt(_Constraint):
    """An integer (not a bool) >= ``minimum``."""

    def __init__(self, minimum=1):
        super().__init__()
        self.minimum = minimum

    def is_satisfied_by(self, val):
        if isinstance(val, bool) or not isinstance(val, numbers.Integral):
            return False
        return val >= self.minimum

    def __str__(self):
        return f"an int >= {self.minimum}"


class HasMetric(_Constraint):
    """A geomstats space with a metric (``space.metric``) and a dimension."""

    def is_satisfied_by(self, val):
        return hasattr(val, "metric") and hasattr(val, "dim")

    def __str__(self):
        return "a geomstats space with a metric"


class IsBudget(_Constraint):
    """A ``privacy.PrivacyBudget`` (recognised by its ``reserve`` and ``spend``)."""

    def is_satisfied_by(self, val):
        return callable(getattr(val, "reserve", None)) and callable(
            getattr(val, "spend", None))

    def __str__(self):
        return "a PrivacyBudget"


class RandomStates(_Constraint):
    """What ``_backend.get_rng`` takes besides None: an int >= 0 or a generator."""

    def is_satisfied_by(self, val):
        if isinstance(val, (np.random.Generator, SecureGenerator, BufferedNormals)):
            return True
        return (isinstance(val, numbers.Integral) and not isinstance(val, bool)
                and val >= 0)

    def __str__(self):
        return "an int >= 0 or a numpy.random.Generator"


class RatingRange(_Constraint):
    """A public (low, high): two finite real numbers (not bools) with low < high."""

    def is_satisfied_by(self, val):
        bounds = np.asarray(val, dtype=object)
        return bounds.shape == (2,) and all(
            isinstance(b, (int, float, np.number)) and not isinstance(b, bool)
            and np.isfinite(b) for b in bounds) and bounds[0] < bounds[1]

    def __str__(self):
        return "(low, high), two finite numbers with low < high"


PROBABILITY = [Interval(numbers.Real, 0, 1, closed="neither")]
CLIP_NORM = [PositiveFinite(), StrOptions({"auto"}), None]
BUDGET = [IsBudget(), None]
RANDOM_STATE = [RandomStates(), None]
