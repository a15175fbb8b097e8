"""The table of fixed-seed releases that a refactor must leave unchanged.

Every built-in case of ``geomstats_dp.testing`` (every public estimator and method) at two
seeds, plus the routes the cases do not take (public weights, ``clip_norm="auto"``,
Poisson sampling, the compiled SPD(2) blocks, uncentred PCA, a rating range, a Dask
array), fitted on the active backend. A release is every numeric fitted attribute and
the predictions or transform the estimator offers.

Recorded once per backend, as committed data, with

    GEOMSTATS_BACKEND=<backend> OMP_NUM_THREADS=1 python -m tests.learning.release_table

and compared by ``tests/learning/test_release_table.py``. Rerecord only for a change
meant to alter releases, and say so in its commit. A new estimator or case adds its keys
with ``--add``, which refuses to run when a recorded release has changed. A change meant
to alter some releases rerecords them with ``--replace SUBSTRING`` (repeatable): keys
containing a substring are replaced, added or dropped, and it refuses to run when any other
recorded release has changed.
"""

import os
import sys
import warnings
from pathlib import Path

import numpy as np
from sklearn.base import clone

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.testing import built_in_cases

TABLE_DIR = Path(__file__).parent / "release_table"
SEEDS = (0, 1)


def table_path(backend):
    """The committed table of ``backend``."""
    return TABLE_DIR / f"{backend}.npz"


def _numeric(value):
    """``value`` as a float or string numpy array, or None when it is not a release."""
    if isinstance(value, str):
        return np.asarray(value)
    if isinstance(value, (bool, int, float, np.number)):
        return np.asarray(value, dtype=float)
    try:
        array = np.asarray(to_numpy(value))
    except (TypeError, ValueError):
        return None
    if array.dtype.kind in "fciub":
        return array.astype(complex if array.dtype.kind == "c" else float)
    return None


def _record(out, key, estimator, predict=None):
    """Store every numeric fitted attribute of ``estimator`` and its outputs."""
    for name, value in sorted(vars(estimator).items()):
        if name.endswith("_") and not name.startswith("_"):
            array = _numeric(value)
            if array is not None:
                out[f"{key}|{name}"] = array
    if predict is not None:
        if hasattr(estimator, "predict"):
            out[f"{key}|predict"] = np.asarray(to_numpy(estimator.predict(predict)), float)
        if hasattr(estimator, "transform"):
            out[f"{key}|transform"] = np.asarray(to_numpy(estimator.transform(predict)),
                                                 float)


def _case_releases(out):
    for case in built_in_cases():
        for seed in SEEDS:
            estimator = clone(case.estimator)
            if "random_state" in estimator.get_params(deep=False):
                estimator.set_params(random_state=seed)
            estimator.fit(case.X, case.y)
            predict = case.predict
            if predict is None and hasattr(estimator, "transform"):
                predict = case.X[:3]
            _record(out, f"{case.name}|seed={seed}", estimator, predict)


def _sphere_cloud(rng, n_samples=60):
    from geomstats.geometry.hypersphere import Hypersphere

    sphere = Hypersphere(2)
    north = np.array([0.0, 0.0, 1.0])
    tangent = 0.4 * rng.standard_normal((n_samples, 3)) * np.array([1.0, 1.0, 0.0])
    return sphere, north, sphere.metric.exp(to_backend(tangent), to_backend(north))


def _route_releases(out):
    from geomstats.geometry.spd_matrices import SPDMatrices

    from geomstats_dp.learning import (
        PrivateFrechetMean,
        PrivateMatrixCompletion,
        PrivatePCA,
        PrivateStructuredPrediction,
    )

    rng = np.random.default_rng(0)
    sphere, north, X = _sphere_cloud(rng)
    weights = rng.uniform(0.5, 2.0, len(X))
    for method in ("rgd", "rsgd", "rsvrg", "tangent", "two_stage"):
        est = PrivateFrechetMean(sphere, epsilon=2.0, clip_norm=1.0, method=method,
                                 batch_size=10, random_state=0)
        _record(out, f"weighted|{method}", est.fit(X, sample_weight=weights))
    for method in ("rgd", "two_stage"):
        est = PrivateFrechetMean(sphere, epsilon=2.0, clip_norm="auto", method=method,
                                 random_state=0)
        _record(out, f"auto_clip|{method}", est.fit(X))
    est = PrivateFrechetMean(sphere, epsilon=2.0, method="rsgd", batch_size=10,
                             sampling="poisson", dataset_size=60, clip_norm=1.0,
                             random_state=3)
    _record(out, "poisson|rsgd", est.fit(X))
    laplace = PrivateFrechetMean(sphere, epsilon=2.0, method="laplace", radius=0.5,
                                 center=north, random_state=0)
    _record(out, "laplace|sphere", laplace.fit(X))
    spd = SPDMatrices(2)
    A = rng.standard_normal((40, 2, 2))
    P = to_backend(A @ A.transpose(0, 2, 1) + np.eye(2))
    est = PrivateFrechetMean(spd, epsilon=1.0, method="rgd", clip_norm=1.0, n_iter=50,
                             random_state=0)
    _record(out, "compiled|spd2_rgd", est.fit(P))
    Z = to_backend(rng.standard_normal((80, 5)) * np.array([3, 2, 1, 0.5, 0.2]))
    for method in ("analyze_gauss", "rgd"):
        for centering in ("none", "private_mean"):
            pca = PrivatePCA(2, epsilon=2.0, data_norm=5.0, method=method,
                             centering=centering, random_state=0)
            _record(out, f"pca|{method}|centering={centering}", pca.fit(Z), Z[:3])
    basis = np.linalg.qr(rng.standard_normal((15, 2)))[0]
    full = rng.standard_normal((50, 2)) @ basis.T
    ratings = to_backend(np.where(rng.random(full.shape) < 0.5, full, np.nan))
    mc = PrivateMatrixCompletion(2, epsilon=2.0, clip_norm=2.0, method="als", n_iter=3,
                                 rating_range=(-3, 3), random_state=0)
    _record(out, "rating_range|als", mc.fit(ratings), ratings[:3])
    from geomstats.geometry.hyperboloid import Hyperboloid

    from geomstats_dp.datasets.wordnet import poincare_to_hyperboloid

    x = np.sort(rng.uniform(0, 1, 40))
    ball = np.stack([0.6 * x - 0.3, 0.3 * np.sin(4 * x)], axis=1)
    Y = poincare_to_hyperboloid(to_backend(ball))
    sp = PrivateStructuredPrediction(Hyperboloid(2), bandwidth=0.2, regularization=1e-2,
                                     epsilon=5.0, clip_norm=3.0, method="labels",
                                     random_state=0)
    _record(out, "labels|predict", sp.fit(to_backend(x[:, None]), Y),
            to_backend(np.array([[0.2], [0.7]])))


def _dask_releases(out):
    import dask.array as da

    from geomstats_dp.learning import PrivateFrechetMean

    sphere, _, X = _sphere_cloud(np.random.default_rng(1))
    chunked = da.from_array(to_numpy(X), chunks=(16, 3))
    est = PrivateFrechetMean(sphere, epsilon=2.0, clip_norm=1.0, method="rgd",
                             random_state=0)
    _record(out, "dask|rgd", est.fit(chunked))


def releases():
    """Every release of the table on the active backend (key -> array)."""
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _case_releases(out)
        _route_releases(out)
        if os.environ.get("GEOMSTATS_BACKEND", "numpy") == "numpy":
            _dask_releases(out)
    return out


def changed(recorded, current):
    """Keys of ``recorded`` whose release is missing from ``current`` or differs (to
    1e-7 relative: the rounding of another build's BLAS and LAPACK kernels, amplified up
    to about 3e-8 by the hyperboloid's exponential map on predictions at distance 8.6 from
    the origin, coordinates of 2,700)."""
    differing = []
    for key, expected in recorded.items():
        value = current.get(key)
        if value is None or value.shape != expected.shape:
            differing.append(key)
        elif expected.dtype.kind in "fc":
            if not np.allclose(value, expected, rtol=1e-7, atol=1e-12, equal_nan=True):
                differing.append(key)
        elif not np.array_equal(value, expected):
            differing.append(key)
    return differing


if __name__ == "__main__":
    backend = os.environ.get("GEOMSTATS_BACKEND", "numpy")
    TABLE_DIR.mkdir(exist_ok=True)
    table = releases()
    arguments = sys.argv[1:]
    replaced = [arguments[i + 1] for i, flag in enumerate(arguments[:-1])
                if flag == "--replace"]
    if "--add" in arguments or replaced:
        with np.load(table_path(backend)) as stored:
            recorded = dict(stored)
        if replaced:
            print(f"{sum(any(r in key for r in replaced) for key in recorded)} keys "
                  f"rerecorded")
            recorded = {key: value for key, value in recorded.items()
                        if not any(r in key for r in replaced)}
            table = {key: value for key, value in table.items()
                     if key in recorded or any(r in key for r in replaced)
                     or "--add" in arguments}
        differing = changed(recorded, table)
        if differing:
            sys.exit(f"{len(differing)} recorded releases changed: {differing[:20]}")
        print(f"{len(set(table) - set(recorded))} new keys")
        table = {**table, **recorded}
    np.savez_compressed(table_path(backend), **table)
    print(f"{len(table)} releases recorded for {backend}")
