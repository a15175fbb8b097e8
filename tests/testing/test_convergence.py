"""check_convergence: the defaults converge; a biased setting fails."""

import pytest

from geomstats_dp.testing import built_in_cases, check_convergence

RGD = "PrivateFrechetMean(method='rgd',space=sphere)"


def test_a_clip_far_below_the_data_radius_fails():
    case = next(case for case in built_in_cases() if case.name == RGD)
    biased = case.estimator.set_params(clip_norm=1e-3, n_iter=2)  # steps of at most 1e-3
    with pytest.raises(AssertionError, match="check_convergence: at epsilon 1e"):
        check_convergence(biased, case.X, reference=case.reference, distance=case.distance,
                          tolerance=case.tolerance)
