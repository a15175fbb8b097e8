"""The package's argument checks and parameter constraints (``geomstats_dp._validation``)."""

import math
from typing import ClassVar

import numpy as np
import pytest
from geomstats.geometry.euclidean import Euclidean
from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import InvalidParameterError

from geomstats_dp._backend import SecureGenerator
from geomstats_dp._validation import (
    BUDGET,
    CLIP_NORM,
    PROBABILITY,
    RANDOM_STATE,
    HasMetric,
    PositiveFinite,
    PositiveInt,
    check_finite_array,
    check_positive_finite,
    check_positive_int,
    check_probability,
)
from geomstats_dp.privacy import PrivacyBudget

pytestmark = pytest.mark.backend_independent


class _Toy(BaseEstimator):
    _parameter_constraints: ClassVar[dict] = {"space": [HasMetric()], "clip_norm": CLIP_NORM,
                              "budget": BUDGET, "random_state": RANDOM_STATE,
                              "n_iter": [PositiveInt(), None], "quantile": PROBABILITY}

    def __init__(self, space=None, clip_norm=None, budget=None, random_state=None,
                 n_iter=None, quantile=0.5):
        self.space = space
        self.clip_norm = clip_norm
        self.budget = budget
        self.random_state = random_state
        self.n_iter = n_iter
        self.quantile = quantile


@pytest.mark.parametrize("params", [
    {"clip_norm": 2.0}, {"clip_norm": "auto"}, {"clip_norm": 3},
    {"budget": PrivacyBudget(1.0, 1e-5)}, {"random_state": 0},
    {"random_state": np.random.default_rng(0)}, {"random_state": SecureGenerator()},
    {"n_iter": 1}, {"quantile": 0.99},
])
def test_constraints_accept(params):
    _Toy(Euclidean(2), **params)._validate_params()


@pytest.mark.parametrize(("name", "value"), [
    ("space", 3), ("space", None), ("clip_norm", 0.0), ("clip_norm", -1.0),
    ("clip_norm", math.inf), ("clip_norm", math.nan), ("clip_norm", True),
    ("clip_norm", "max"), ("budget", 1.0), ("random_state", -1),
    ("random_state", np.random.RandomState(0)), ("random_state", True), ("n_iter", 0),
    ("n_iter", True), ("n_iter", 2.0), ("quantile", 0.0), ("quantile", 1.0),
    ("quantile", math.nan),
])
def test_constraints_refuse_naming_the_parameter(name, value):
    params = {"space": Euclidean(2), name: value}
    with pytest.raises(InvalidParameterError, match=f"'{name}' parameter of _Toy"):
        _Toy(**params)._validate_params()


def test_invalid_parameter_error_is_value_and_type_error():
    with pytest.raises(ValueError):
        _Toy(Euclidean(2), n_iter=0)._validate_params()
    with pytest.raises(TypeError):
        _Toy(Euclidean(2), n_iter="3")._validate_params()


def test_constraint_descriptions():
    assert str(PositiveFinite()) == "a finite float > 0"
    assert str(PositiveInt(2)) == "an int >= 2"
    assert str(HasMetric()) == "a geomstats space with a metric"


def test_check_functions_name_the_argument():
    assert check_positive_finite(2, "c") == 2.0
    assert check_probability(0.0, "q", allow_zero=True) == 0.0
    assert check_positive_int(3, "k", minimum=3) == 3
    with pytest.raises(ValueError, match="c must be finite and > 0"):
        check_positive_finite(math.inf, "c")
    with pytest.raises(TypeError, match="q must be a real number"):
        check_probability("0.5", "q")
    with pytest.raises(ValueError, match="k must be >= 2"):
        check_positive_int(1, "k", minimum=2)
    with pytest.raises(ValueError, match=r"X holds a non-finite value at index \(1, 0\)"):
        check_finite_array(np.array([[0.0, 1.0], [np.nan, 2.0]]), "X")
    check_finite_array(np.ones((3, 2)), "X")
