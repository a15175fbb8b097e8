"""The built-in cases of the harness cover every public estimator, each once under its own
name, unfitted; a sampled case's accounting check replaces only its sampled records."""

import inspect

import numpy as np
import pytest
from sklearn.base import BaseEstimator
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted

import geomstats_dp.federated
import geomstats_dp.learning
import geomstats_dp.model_selection
from geomstats_dp._backend import to_numpy
from geomstats_dp.testing import Case, built_in_cases
from geomstats_dp.testing._case import SAMPLED_RECORDS

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


def test_a_sampled_case_replaces_its_sampled_records_only():
    X = np.arange(20.0).reshape(10, 2)
    neighbours = Case("sampled", None, X).options["check_touched_stages"]["neighbours"]
    assert len(neighbours) == len(SAMPLED_RECORDS)
    for index, (_, X2, _) in zip(SAMPLED_RECORDS, neighbours):
        changed = np.flatnonzero(np.any(to_numpy(X2) != X, axis=1))
        assert changed.tolist() == [index]
    assert Case("every record", None, X, sampled=False).options == {}
