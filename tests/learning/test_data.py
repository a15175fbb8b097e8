"""Shape and value checks of the records (``learning._data``): errors name the argument
and the offending index."""

import numpy as np
import pytest
from geomstats.geometry.hypersphere import Hypersphere

from geomstats_dp.learning._data import (
    check_array,
    check_points,
    check_sample_count,
    check_shape,
)

SPHERE = Hypersphere(2)
POINTS = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])


def test_arrays_are_float64_numpy():
    array = check_array([[1, 2], [3, 4]], "X")
    assert array.dtype == np.float64 and isinstance(array, np.ndarray)


@pytest.mark.parametrize(("value", "error", "message"), [
    (np.array([["1.5", "2"]]), TypeError, "X"),
    (np.array([[1 + 1j, 2]]), TypeError, "X"),
    (np.ones(3), ValueError, "X"),
])
def test_refused_arrays_name_the_argument(value, error, message):
    with pytest.raises(error, match=message):
        check_array(value, "X")


def test_too_few_records_and_wrong_shapes():
    with pytest.raises(ValueError, match="X must hold at least 2 points, got 1"):
        check_sample_count(1, "X")
    with pytest.raises(ValueError, match="X"):
        check_shape(SPHERE, np.ones((4, 2)))
    assert check_shape(SPHERE, POINTS).shape == (3, 3)


def test_values_off_the_space_or_not_finite_are_named_by_index():
    off = POINTS.copy()
    off[2] *= 2
    with pytest.raises(ValueError, match=r"indices \[2\]"):
        check_points(SPHERE, off, 1e-6)
    nan = POINTS.copy()
    nan[1, 0] = np.nan
    with pytest.raises(ValueError, match=r"index \(1, 0\)"):
        check_points(SPHERE, nan, 1e-6)
