"""Canonical data-independent initial points."""

import pytest
from geomstats.geometry.positive_lower_triangular_matrices import (
    PositiveLowerTriangularMatrices,
)

from geomstats_dp._backend import to_numpy
from geomstats_dp.optim import FullBatch, SquaredDistanceLoss, canonical_point, minimize

from .spaces import SPACE_FACTORIES


@pytest.mark.parametrize("name", sorted(SPACE_FACTORIES))
def test_canonical_point_lies_on_the_space(name):
    space = SPACE_FACTORIES[name]()
    point = canonical_point(space)
    assert tuple(point.shape) == tuple(space.shape)
    assert bool(space.belongs(point))


def test_canonical_points_are_the_documented_ones():
    assert to_numpy(canonical_point(SPACE_FACTORIES["sphere"]())).tolist() == [1, 0, 0, 0]
    assert to_numpy(canonical_point(SPACE_FACTORIES["hyperboloid"]())).tolist() == [1, 0, 0, 0]
    assert to_numpy(canonical_point(SPACE_FACTORIES["stiefel"]())).tolist() == [
        [1, 0], [0, 1], [0, 0], [0, 0]
    ]
    projector = to_numpy(canonical_point(SPACE_FACTORIES["grassmannian"]()))
    assert projector.diagonal().tolist() == [1, 1, 0, 0] and projector.sum() == 2
    assert to_numpy(canonical_point(SPACE_FACTORIES["spd_affine"]())).tolist() == [
        [1, 0, 0], [0, 1, 0], [0, 0, 1]
    ]


def test_unknown_space_without_init_point_is_a_clear_error():
    space = PositiveLowerTriangularMatrices(2)
    with pytest.raises(ValueError, match="PositiveLowerTriangularMatrices.*init_point"):
        canonical_point(space)
    with pytest.raises(ValueError, match="init_point"):
        minimize(SquaredDistanceLoss(space), space.random_point(3), FullBatch(1.0, 0.1), 1, 0.1)
