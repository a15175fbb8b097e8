"""check_failed_release_cancels catches a failed release that keeps its reservation."""

import pytest

from geomstats_dp.privacy.reservation import Reservation
from geomstats_dp.testing import built_in_cases, check_failed_release_cancels

NAMES = ["PrivateFrechetMean(method='two_stage',space=sphere)", "PrivatePCA(method='rgd')"]


def _case(name):
    return next(case for case in built_in_cases() if case.name == name)


@pytest.mark.parametrize("name", NAMES)
def test_a_reservation_kept_after_a_failed_release_fails(name, monkeypatch):
    """The planted fault of issue 29: ``run_release`` does not cancel (here: cancelling
    does nothing); another thread cannot reserve while the failed fit holds it."""
    case = _case(name)
    check_failed_release_cancels(case.estimator, case.X, case.y)
    monkeypatch.setattr(Reservation, "cancel", lambda self: None)
    with pytest.raises(AssertionError, match="still holds its reservation"):
        check_failed_release_cancels(case.estimator, case.X, case.y)
