"""check_public_observables fails on estimators whose public outputs read the data."""

import logging
import warnings

import numpy as np
import pytest

from geomstats_dp._backend import to_numpy
from geomstats_dp.learning import PrivateFrechetMean
from geomstats_dp.testing import built_in_cases, check_public_observables
from geomstats_dp.testing._observables import same

THRESHOLD = "PrivateFrechetMean(method='auto',space=euclidean,at_threshold)"


class CountsFiniteRecords(PrivateFrechetMean):
    """The planted fault of issue 29: method="auto" reads the number of records whose
    squared norm is finite instead of n."""

    def _check_input(self, X, y, sample_weight):
        data, weights = super()._check_input(X, y, sample_weight)
        with np.errstate(all="ignore"):
            squares = np.sum(to_numpy(data).reshape(len(data), -1) ** 2, axis=1)
        self._counted = int(np.isfinite(squares).sum())
        return data, weights

    def _choose_method(self, n_samples):
        return super()._choose_method(self._counted)


class WarnsOnFarRecords(PrivateFrechetMean):
    """Warns when a record lies far from the start: a data-dependent warning."""

    def _check_input(self, X, y, sample_weight):
        data, weights = super()._check_input(X, y, sample_weight)
        if np.abs(to_numpy(data)).max() > 100:
            warnings.warn("a record is far from the start", UserWarning, stacklevel=2)
        return data, weights


class LogsFarRecords(PrivateFrechetMean):
    """Logs the largest coordinate of the data: a data-dependent log record."""

    def _check_input(self, X, y, sample_weight):
        data, weights = super()._check_input(X, y, sample_weight)
        logging.getLogger("geomstats_dp.user").debug("largest coordinate %g",
                                                     float(np.abs(to_numpy(data)).max()))
        return data, weights


def _threshold_case():
    return next(case for case in built_in_cases() if case.name == THRESHOLD)


def test_the_auto_rule_at_its_threshold_passes():
    case = _threshold_case()
    check_public_observables(case.estimator, case.X)


@pytest.mark.parametrize(("faulty", "output"), [
    (CountsFiniteRecords, "neighbour 'huge' changes .*method_: 'two_stage' != 'rgd'"),
    (WarnsOnFarRecords, "neighbour 'huge' changes public outputs .*warnings"),
    (LogsFarRecords, "neighbour 'opposite_at_bound' changes public outputs .*logs"),
])
def test_a_data_dependent_public_output_fails(faulty, output):
    case = _threshold_case()
    estimator = faulty(**case.estimator.get_params(deep=False))
    with pytest.raises(AssertionError, match=f"check_public_observables: {output}"):
        check_public_observables(estimator, case.X)


@pytest.mark.backend_independent
def test_same_compares_arrays_events_and_nan():
    assert same({"a": np.array([1.0, np.nan])}, {"a": np.array([1.0, np.nan])})
    assert not same({"a": np.array([1.0, 2.0])}, {"a": np.array([1.0, 2.5])})
    assert not same((1, 2), [1, 2])
    assert not same({"a": 1}, {"b": 1})


def test_a_log_is_caught_when_logging_was_left_disabled_and_the_switch_is_restored():
    """A process-wide ``logging.disable`` left on by earlier code (a straggling release,
    a library) must not blind the check; the switch is as it was afterwards."""
    logging.disable(logging.CRITICAL)
    try:
        test_a_data_dependent_public_output_fails(
            LogsFarRecords, "neighbour 'opposite_at_bound' changes public outputs .*logs")
        assert logging.root.manager.disable == logging.CRITICAL
    finally:
        logging.disable(logging.NOTSET)
