"""Every private estimator against its non-private solver: fit time, timed in the same run.

One row per entry of ``ENTRIES``. To add an estimator, append an ``Entry`` whose ``make``
returns ``(private_fit, baseline_fit)``: two zero-argument callables that fit on the same
data (built once, outside the timing). Each callable runs ``REPEATS`` times, alternating
with the other, and keeps its fastest run.
"""

import time
from dataclasses import dataclass

import geomstats.backend as gs
import numpy as np
from threadpoolctl import threadpool_limits

from benchmarks.accounting import write_csv

REPEATS = 3


@dataclass(frozen=True)
class Entry:
    """One estimator: its name, its non-private solver's name and the two fits."""

    estimator: str
    baseline: str
    problem: str
    make: object  # quick: bool -> (private_fit, baseline_fit)


def _frechet_mean(quick):
    from geomstats.geometry.spd_matrices import SPDMatrices
    from geomstats.learning.frechet_mean import FrechetMean

    from geomstats_dp.learning import PrivateFrechetMean

    space = SPDMatrices(8)
    gs.random.seed(0)
    points = space.random_point(200 if quick else 2000)

    def private():
        PrivateFrechetMean(space, epsilon=1.0, delta=1e-5, method="rgd", clip_norm=3.0,
                           random_state=0).fit(points)

    def baseline():
        FrechetMean(space).fit(points)

    return private, baseline


def _pca(quick):
    from geomstats_dp.learning import PrivatePCA

    rng = np.random.default_rng(0)
    n_rows, n_features = (500, 20) if quick else (5000, 50)
    rows = rng.standard_normal((n_rows, n_features)) * np.linspace(2.0, 0.5, n_features)
    rows /= np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1.0)

    def private():
        PrivatePCA(n_components=1, epsilon=1.0, delta=1e-5, data_norm=1.0,
                   random_state=0).fit(rows)

    def baseline():
        centred = rows - rows.mean(axis=0)
        np.linalg.eigh(centred.T @ centred)

    return private, baseline


def _erm(quick):
    from geomstats.geometry.hypersphere import Hypersphere

    from geomstats_dp.learning import PrivateERM
    from geomstats_dp.optim import CallableLoss, FullBatch, minimize

    sphere = Hypersphere(2)
    rng = np.random.default_rng(0)
    raw = np.array([1.0, 0.0, 0.0]) + 0.3 * rng.standard_normal((200 if quick else 2000, 3))
    records = raw / np.linalg.norm(raw, axis=1, keepdims=True)

    def loss(point, sample):
        return -gs.sum(point * sample)

    def gradient(point, sample):
        return -sample

    n_iter = 10

    def private():
        PrivateERM(sphere, loss, epsilon=1.0, delta=1e-5, clip_norm=1.0, n_iter=n_iter,
                   gradient=gradient, gradient_kind="euclidean", random_state=0).fit(records)

    def baseline():
        minimize(CallableLoss(sphere, loss, gradient, "euclidean"), records,
                 FullBatch(1.0, 0.0), n_iter, 0.5, random_state=0)

    return private, baseline


ENTRIES = [
    Entry("PrivateFrechetMean (rgd)", "geomstats FrechetMean", "SPD(8), 2000 points",
          _frechet_mean),
    Entry("PrivatePCA (k=1)", "numpy eigh of the covariance", "5000 x 50 rows", _pca),
    Entry("PrivateERM (callable loss, rgd)", "the same 10 steps without noise (minimize)",
          "S^2, 2000 records, closed-form gradient", _erm),
]


def _fastest(call):
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def rows(quick):
    """One row per entry: seconds of the private and the non-private fit, and their ratio."""
    found = []
    for entry in ENTRIES:
        private, baseline = entry.make(quick)
        private_s = baseline_s = float("inf")
        for _ in range(REPEATS):
            private_s = min(private_s, _fastest(private))
            baseline_s = min(baseline_s, _fastest(baseline))
        found.append({
            "estimator": entry.estimator, "baseline": entry.baseline, "problem": entry.problem,
            "private_seconds": private_s, "baseline_seconds": baseline_s,
            "ratio": private_s / baseline_s,
        })
        print(f"  {entry.estimator}: {private_s:.3g} s vs {baseline_s:.3g} s "
              f"({private_s / baseline_s:.2f}x)", flush=True)
    return found


def run(output_dir, quick=False):
    """Write ``estimators[_quick].csv``."""
    with threadpool_limits(limits=1):
        found = rows(quick)
    prefix = "estimators_quick" if quick else "estimators"
    write_csv(output_dir / f"{prefix}.csv", found)
