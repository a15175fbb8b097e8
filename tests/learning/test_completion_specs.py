"""The matrix-completion specs read the estimator's public parameters only: the rating
scale they imply, the private scale's share of epsilon, the fixed start basis."""

import math

import numpy as np
import pytest

from geomstats_dp.learning import PrivateMatrixCompletion
from geomstats_dp.learning._completion_specs import (
    als_clip_norm,
    als_spec,
    half_width,
    means_spec,
    private_scale,
    public_offset,
    start_basis,
)

pytestmark = pytest.mark.backend_independent


@pytest.mark.parametrize(("rating_range", "offset", "expected_offset", "expected_h"), [
    ((1.0, 5.0), None, 3.0, 2.0),  # the range's middle
    ((1.0, 5.0), 2.0, 2.0, 3.0),  # the farther end from a given offset
    ((-1.0, 0.5), 0.0, 0.0, 1.0),
])
def test_the_half_width_is_the_farthest_end_of_the_range_from_the_offset(
        rating_range, offset, expected_offset, expected_h):
    params = PrivateMatrixCompletion(rating_range=rating_range, offset=offset)
    assert public_offset(params) == expected_offset
    assert half_width(params) == expected_h
    assert als_clip_norm(params) == pytest.approx(math.sqrt(3 / 8) * expected_h**2)


def test_without_a_range_the_clip_norm_and_the_half_width_stand_for_each_other():
    params = PrivateMatrixCompletion(clip_norm=6.0)
    assert public_offset(params) == 0.0
    assert math.sqrt(3 / 8) * half_width(params) ** 2 == pytest.approx(6.0)
    assert als_clip_norm(params) == 6.0


def test_the_private_scale_is_released_only_where_no_range_gives_it():
    assert private_scale(PrivateMatrixCompletion(rating_range=(0.0, 1.0))) is None
    assert private_scale(PrivateMatrixCompletion(clip_norm=1.0, clip_quantile=None)) is None
    scale = private_scale(PrivateMatrixCompletion(epsilon=2.0, clip_norm=1.0,
                                                  clip_quantile=0.3,
                                                  clip_budget_fraction=0.1))
    assert scale.quantile == 0.3
    assert scale.epsilon == pytest.approx(0.2)


@pytest.mark.parametrize("build", [als_spec, means_spec])
@pytest.mark.parametrize("rating_range", [None, (0.0, 5.0)])
def test_the_specs_split_epsilon_between_the_scale_and_the_release(build, rating_range):
    params = PrivateMatrixCompletion(epsilon=1.5, rating_range=rating_range,
                                     clip_norm=None if rating_range else 4.0)
    spec = build(params, 300)
    scale_epsilon = spec.scale.epsilon if spec.scale is not None else 0.0
    assert (spec.scale is None) == (rating_range is not None)
    assert spec.epsilon + scale_epsilon == pytest.approx(1.5)
    assert spec.n_samples == 300
    assert spec.half_width == half_width(params)


def test_the_start_basis_is_a_fixed_orthonormal_basis_with_no_zero_item():
    basis = start_basis(12, 3)
    np.testing.assert_allclose(basis.T @ basis, np.eye(3), atol=1e-12)
    np.testing.assert_array_equal(basis, start_basis(12, 3))
    assert np.all(np.linalg.norm(basis, axis=1) > 1e-3)
