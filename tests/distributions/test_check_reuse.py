"""What the validated draw takes from the membership test (issue 11's per-call work).

A family with ``belongs_implies_finite`` must reject every point holding NaN or inf (the
separate finiteness pass is then skipped), and such points must still be reported as
non-finite, without a floating-point warning. SPD affine hands its test's Cholesky factors
to the draw: the draws must be those of a draw that factorises again.
"""

import warnings

import numpy as np
import pytest

from geomstats_dp._backend import to_numpy
from geomstats_dp.distributions import TangentGaussian

from .conftest import FAMILIES, make_case

PROVING = [
    family
    for family in sorted(FAMILIES)
    if TangentGaussian(make_case(family).space).sampler.belongs_implies_finite
]
BAD_VALUES = (np.nan, np.inf, -np.inf)


def test_the_quadric_families_skip_the_finiteness_pass():
    assert set(PROVING) >= {"hypersphere", "hyperboloid", "poincare_ball"}


@pytest.mark.parametrize("family", ["spd_affine", "spd_euclidean"])
def test_spd_keeps_the_finiteness_pass_since_inf_on_the_diagonal_passes_its_test(family):
    case = make_case(family)
    sampler = TangentGaussian(case.space)
    point = np.array(case.points["reference"], dtype=float)
    point[0, 0] = np.inf
    assert sampler.sampler.belongs(point[None], 1e-6)[0]  # why the flag must stay False
    assert not sampler.sampler.belongs_implies_finite
    with pytest.raises(ValueError, match="non-finite"):
        sampler.sample(point, random_state=0)


@pytest.mark.parametrize("family", PROVING)
@pytest.mark.parametrize("bad", BAD_VALUES)
def test_a_non_finite_entry_fails_membership_and_is_reported_as_such(family, bad):
    case = make_case(family)
    sampler = TangentGaussian(case.space)
    points = np.stack([np.array(point, dtype=float) for point in case.points.values()])
    for index in range(points[0].size):
        corrupted = points.copy()
        corrupted[1].flat[index] = bad
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            found = sampler.sampler.belongs(corrupted, 1e-6)
            assert not found[1] and found[0] and found.sum() == len(points) - 1
            with pytest.raises(ValueError, match=r"non-finite value at index \(1, "):
                sampler.sample(corrupted, random_state=0)


@pytest.mark.parametrize("kind", ["reference", "random", "ill_conditioned"])
def test_spd_affine_draw_with_the_checks_factors_equals_a_fresh_factorisation(kind):
    case = make_case("spd_affine", kind)
    validated = TangentGaussian(case.space)
    unvalidated = TangentGaussian(case.space, validate=False)
    point = np.array(case.base_point, dtype=float)
    on_space, factors = validated.sampler.check_points(point[None], 1e-6)
    assert on_space.all() and factors is not None
    np.testing.assert_array_equal(factors[0], np.linalg.cholesky(point))
    for n_samples in (1, 4):
        first = to_numpy(validated.sample(point, n_samples=n_samples, random_state=3))
        second = to_numpy(unvalidated.sample(point, n_samples=n_samples, random_state=3))
        np.testing.assert_array_equal(first, second)


@pytest.mark.parametrize("family", ["hypersphere", "hyperboloid", "poincare_ball"])
def test_one_draw_at_one_point_matches_the_first_of_a_batch(family):
    case = make_case(family)
    sampler = TangentGaussian(case.space)
    for point in case.points.values():
        single = to_numpy(sampler.sample(point, random_state=7))
        batch = to_numpy(sampler.sample(np.stack([point, point]), n_samples=3, random_state=7))
        np.testing.assert_allclose(single, batch[0, 0], rtol=0, atol=1e-12)
