"""Paired samples: features and targets indexed together, checked finite."""

import numpy as np
import pytest

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.optim import PairedSamples


def test_pairs_are_indexed_together():
    X, y = np.arange(12.0).reshape(4, 3), np.arange(4.0) * 10
    pairs = PairedSamples(X, y)
    assert pairs.shape == (4,) and len(pairs) == 4
    row_x, row_y = pairs[2]
    np.testing.assert_array_equal(row_x, X[2])
    assert row_y == 20.0
    batch = pairs[np.array([3, 0])]
    np.testing.assert_array_equal(batch.X, X[[3, 0]])
    np.testing.assert_array_equal(batch.y, y[[3, 0]])


def test_checked_pairs_are_backend_arrays_and_non_finite_ones_refused():
    checked = PairedSamples(np.ones((2, 2)), np.zeros(2)).checked()
    np.testing.assert_array_equal(to_numpy(checked.X), np.ones((2, 2)))
    assert type(checked.y) is type(to_backend(np.zeros(2)))
    with pytest.raises(ValueError, match="y"):
        PairedSamples(np.ones((2, 2)), np.array([0.0, np.inf])).checked()


def test_a_target_per_row_is_required():
    with pytest.raises(ValueError, match=r"one row per row of X \(3\), got 2"):
        PairedSamples(np.ones((3, 2)), np.ones(2))
