"""The built-in cases of the harness cover every public estimator, each once under its own
name, unfitted."""

import inspect

import pytest
from sklearn.base import BaseEstimator
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted

import geomstats_dp.federated
import geomstats_dp.learning
import geomstats_dp.model_selection
from geomstats_dp.testing import built_in_cases

PUBLIC_PACKAGES = (geomstats_dp.learning, geomstats_dp.federated, geomstats_dp.model_selection)


@pytest.fixture(scope="module")
def cases():
    return built_in_cases()


def test_every_public_estimator_has_a_case(cases):
    public = {
        name
        for package in PUBLIC_PACKAGES
        for name in package.__all__
        if inspect.isclass(getattr(package, name))
        and issubclass(getattr(package, name), BaseEstimator)
        and "__init__" in vars(getattr(package, name))  # not the base class
    }
    covered = {type(case.estimator).__name__ for case in cases}
    assert public <= covered, f"no built-in case for {sorted(public - covered)}"


def test_case_names_are_unique_and_estimators_unfitted(cases):
    names = [case.name for case in cases]
    assert len(names) == len(set(names))
    for case in cases:
        with pytest.raises(NotFittedError):
            check_is_fitted(case.estimator)
