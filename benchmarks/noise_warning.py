"""Calibrate ``NoiseDominatesWarning`` on the baseline benchmark's cells.

``python -m benchmarks noise_warning``. For every cell (estimator, dataset, epsilon) of
the committed baseline rows (``results/baselines_<suite>.csv``) whose default can warn,
one default fit (seed 0, the suite's public settings) gives the public ``noise_ratio_``
and whether it warned; the cell is "beaten" when the default's mean error exceeds the
constant answer's by more than two standard errors (of the default's mean): the public
start for the means (the distance from x0 to the exact answer) and for PCA (the suite's
``public_start`` rows), the constant private mean for structured prediction. Results:
``results/noise_warning.csv``; the page is docs/benchmarks/baselines.md.
"""

import csv
import math
import warnings

import numpy as np
from geomstats.geometry.hypersphere import Hypersphere

from benchmarks.baseline_suites import means, pca, structured_prediction
from benchmarks.baselines import EPSILONS, read_rows
from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.learning import (
    NoiseDominatesWarning,
    PrivateERM,
    PrivateFrechetMean,
    PrivatePCA,
    PrivateStructuredPrediction,
)
from geomstats_dp.learning.reference import exact_frechet_mean
from geomstats_dp.optim import HuberDistanceLoss

COLUMNS = ("estimator", "dataset", "epsilon", "method", "noise_ratio", "warned",
           "default_mean", "default_se", "constant", "constant_mean", "beaten", "beats")


def _fit(model, *data):
    """Fit ``model`` on ``data``; its public ratio (nan where none), chosen method and
    whether it warned."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.fit(*data)
    warned = any(issubclass(w.category, NoiseDominatesWarning) for w in caught)
    ratio = getattr(model, "noise_ratio_", math.nan)
    return float(ratio), str(getattr(model, "method_", "")), warned


def _cells(suite, estimator):
    """Mean and standard error of every method per (dataset, epsilon) of a suite."""
    cells = {}
    for row in read_rows(f"benchmarks/results/baselines_{suite}.csv"):
        if row["estimator"] == estimator:
            cells.setdefault((row["dataset"], row["epsilon"], row["method"]),
                             []).append(row["error"])
    return {key: (float(np.mean(v)), float(np.std(v, ddof=1) / np.sqrt(len(v)))
                  if len(v) > 1 else 0.0) for key, v in cells.items()}


def _row(estimator, dataset, epsilon, fitted, cells, constant, constant_mean=None):
    ratio, method, warned = fitted
    mean, se = cells[(dataset, epsilon, "default")]
    if constant_mean is None:
        constant_mean = cells[(dataset, epsilon, constant)][0]
    return {"estimator": estimator, "dataset": dataset, "epsilon": epsilon,
            "method": method, "noise_ratio": ratio, "warned": warned,
            "default_mean": mean, "default_se": se, "constant": constant,
            "constant_mean": constant_mean, "beaten": mean - constant_mean > 2 * se,
            "beats": constant_mean - mean > 2 * se}


def mean_rows(quick):
    """The means suite: PrivateFrechetMean on the sphere and SPD, PrivateERM (Huber)."""
    frechet, huber = _cells("means", "PrivateFrechetMean"), _cells("means", "PrivateERM")
    epsilons = EPSILONS[:1] if quick else EPSILONS
    for name, load in {**means.SPD_DATASETS, **means.SPHERE_DATASETS}.items():
        points = means._subsample(load(), quick)
        sphere = name in means.SPHERE_DATASETS
        if sphere:
            space = Hypersphere(points.shape[1] - 1)
            x0, clip = means.sphere_public_setting(points.shape[1])
        else:
            space = means.SPDMatrices(points.shape[1])
            x0, clip = means.spd_public_setting(points.shape[1])
        exact = exact_frechet_mean(space, to_backend(points))
        start = float(to_numpy(space.metric.dist(to_backend(x0), exact)))
        for epsilon in epsilons:
            fitted = _fit(PrivateFrechetMean(
                space, epsilon=epsilon, delta=means.DELTA, clip_norm=clip, radius=clip,
                center=x0, random_state=0), points)
            yield _row("PrivateFrechetMean", name, epsilon, fitted, frechet,
                       "public_start", start)
        if not sphere:
            continue
        exact = means.huber_mean(space, points, x0, means.HUBER_RADIUS)
        start = float(to_numpy(space.metric.dist(to_backend(x0), to_backend(exact))))
        loss = HuberDistanceLoss(space, means.HUBER_RADIUS)
        for epsilon in epsilons:
            fitted = _fit(PrivateERM(
                space, loss, epsilon=epsilon, delta=means.DELTA,
                clip_norm=means.HUBER_RADIUS, init_point=x0, random_state=0), points)
            yield _row("PrivateERM", name, epsilon, fitted, huber, "public_start", start)


def pca_rows(quick):
    """The PCA suite: the default's public ratio against the public start's error."""
    cells = _cells("pca", "PrivatePCA")
    for name, X in pca.datasets(quick).items():
        bound = np.sqrt(X.shape[1])
        for k in pca.COMPONENTS:
            for epsilon in EPSILONS:
                fitted = _fit(PrivatePCA(
                    k, epsilon=epsilon, delta=pca.DELTA, data_norm=bound,
                    mean_budget_fraction=pca.MEAN_SHARE, random_state=0), X)
                yield _row("PrivatePCA", f"{name} k={k}", epsilon, fitted, cells,
                           "public_start")


def structured_rows(quick):
    """The structured-prediction suite against the constant private mean."""
    cells = _cells("structured_prediction", "PrivateStructuredPrediction")
    for name, (space, clip, X, Y, train, _) in structured_prediction.datasets(
            quick).items():
        for epsilon in (*EPSILONS, structured_prediction.HUGE_EPSILON):
            fitted = _fit(PrivateStructuredPrediction(
                space, epsilon=epsilon, delta=structured_prediction.DELTA, random_state=0,
                clip_norm=None if isinstance(space, Hypersphere) else clip,
            ), X[train], Y[train])
            yield _row("PrivateStructuredPrediction", name, epsilon, fitted, cells,
                       "constant_private_mean")


SUITES = {"means": mean_rows, "pca": pca_rows, "structured_prediction": structured_rows}


def run(output_dir, quick=False, suites=tuple(SUITES)):
    """Write ``noise_warning.csv``: one row per cell."""
    path = output_dir / "noise_warning.csv"
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        writer.writeheader()
        for suite in suites:
            for row in SUITES[suite](quick):
                writer.writerow(row)
                handle.flush()
    print(f"wrote {path}")
