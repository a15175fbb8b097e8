"""Dummy records: public, shaped like the data, the same whatever the data's values."""

import numpy as np
from geomstats.geometry.hypersphere import Hypersphere

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.optim import PairedSamples
from geomstats_dp.optim.dummy import (
    DUMMY_SCALE,
    dummy_points,
    dummy_records,
    row_shapes,
)

SPHERE = Hypersphere(2)
NORTH = to_backend(np.array([0.0, 0.0, 1.0]))


def test_records_depend_on_the_data_s_shapes_only():
    rng = np.random.default_rng(0)
    first, second = rng.standard_normal((5, 3)), 1e6 * rng.standard_normal((9, 3))
    np.testing.assert_array_equal(to_numpy(dummy_records(SPHERE, first, NORTH)),
                                  to_numpy(dummy_records(SPHERE, second, NORTH)))


def test_points_of_the_space_are_drawn_near_the_public_point():
    records = dummy_records(SPHERE, np.zeros((4, 3)), NORTH, n_records=5)
    assert records.shape == (5, 3)
    assert np.all(to_numpy(SPHERE.belongs(records, atol=1e-10)))
    # Exp of tangent vectors of length DUMMY_SCALE |draw|: a few DUMMY_SCALE at most
    assert np.all(to_numpy(SPHERE.metric.dist(records, NORTH)) < 10 * DUMMY_SCALE)
    points = dummy_points(SPHERE, NORTH, n_points=4)
    assert np.all(to_numpy(SPHERE.belongs(points, atol=1e-10)))


def test_other_rows_and_pairs_keep_their_shapes():
    pairs = PairedSamples(np.zeros((6, 4)), np.zeros(6))
    records = dummy_records(SPHERE, pairs, NORTH, n_records=2)
    assert tuple(records.X.shape) == (2, 4) and tuple(records.y.shape) == (2,)
    assert row_shapes(pairs) == ((4,), ())
    assert row_shapes(np.zeros((6, 2, 2))) == (2, 2)
