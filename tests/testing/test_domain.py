"""check_input_domain fails on estimators that accept bad input or refuse it unclearly."""

import numpy as np
import pytest

from geomstats_dp._backend import to_numpy
from geomstats_dp.learning import PrivateFrechetMean
from geomstats_dp.testing import built_in_cases, check_input_domain

RGD = "PrivateFrechetMean(method='rgd',space=sphere)"


def _case(name):
    return next(case for case in built_in_cases() if case.name == name)


class HidesTheRow(PrivateFrechetMean):
    """Refuses a non-finite record without naming its row."""

    def _check_input(self, X, y, sample_weight):
        if np.asarray(X).dtype.kind not in "US" and not np.isfinite(to_numpy(X)).all():
            raise ValueError("X holds a non-finite value")
        return super()._check_input(X, y, sample_weight)


class AcceptsStrings(PrivateFrechetMean):
    """Numeric strings converted silently (finding 8 of issue 29, before its fix)."""

    def _check_input(self, X, y, sample_weight):
        if np.asarray(X).dtype.kind in "US":
            X = np.asarray(X, dtype=np.float64)
        return super()._check_input(X, y, sample_weight)


def test_a_clear_estimator_passes():
    case = _case(RGD)
    check_input_domain(case.estimator, case.X)


@pytest.mark.parametrize(("faulty", "message"), [
    (AcceptsStrings, "string dtype accepted"),
    (HidesTheRow, ("nan record at row 21: the message 'X holds a non-finite value' does "
                   "not name the row")),
])
def test_unclear_input_handling_fails(faulty, message):
    case = _case(RGD)
    with pytest.raises(AssertionError, match=message):
        check_input_domain(faulty(**case.estimator.get_params(deep=False)), case.X)
