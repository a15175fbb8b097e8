"""Public rules tried for PrivateERM's Huber mean on the sphere (issue 31's lost cells).

``python -m benchmarks huber_rules [--quick]``. ``HuberDistanceLoss(space, 0.5)`` on the
rows of the means suite (``benchmarks/baseline_suites/means.py``: x0 the centre of the
positive orthant, C = 0.5, delta 1e-5), error the distance to the non-private Huber mean.
Two experiments:

- "band": the derivation sets of the rule of ``"auto"`` (digits, optdigits and satimage
  rows), subsampled (without replacement, seeded) to the n at which
  r = 2 sqrt(d) z / n takes the values ``RATIOS`` (those it can), the noise-dominated band where the
  Frechet mean's ``"auto"`` picks ``"extrinsic"``: the default (``method="auto"``), the
  projected extrinsic mean and the one-shot tangent mean at x0;
- "split": the extrinsic release bought with a share s of epsilon as the start of the
  default run with the rest (basic composition: epsilon shares, delta halved), on the
  derivation sets and on the three lost cells (spambase and wdbc at epsilon 0.1, libras at
  epsilon 1); s = 0 is the default.

Writes ``results/huber_rules.csv`` (experiment, dataset, epsilon, n, ratio, method, seed,
error, chosen, start_distance).
"""

import math
import warnings

import numpy as np
from geomstats.geometry.hypersphere import Hypersphere
from threadpoolctl import threadpool_limits

from benchmarks.baseline_suites.means import (
    DELTA,
    HUBER_RADIUS,
    SPHERE_DATASETS,
    huber_mean,
    sphere_public_setting,
)
from benchmarks.federated import write_csv
from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.learning import PrivateERM
from geomstats_dp.optim import HuberDistanceLoss
from geomstats_dp.privacy import calibrate_gaussian

SEEDS = 4
RATIOS = (0.2, 0.35, 0.5, 0.7, 1.0)
BAND_EPSILONS = (0.1, 1.0)
DERIVATION = ("digits_rows_sphere", "optdigits_rows_sphere", "satimage_rows_sphere")
SPLIT_CELLS = tuple((name, eps) for eps in BAND_EPSILONS for name in DERIVATION) + (
    ("spambase_words_sphere", 0.1), ("wdbc_rows_sphere", 0.1), ("libras_rows_sphere", 1.0))
SHARES = (0.0, 0.1, 0.25)


def _setting(points):
    space = Hypersphere(points.shape[1] - 1)
    x0, _ = sphere_public_setting(points.shape[1])
    return space, x0, HuberDistanceLoss(space, HUBER_RADIUS)


def _fit(space, loss, points, x0, epsilon, seed, method="auto", delta=DELTA):
    return PrivateERM(space, loss, epsilon=epsilon, delta=delta, clip_norm=HUBER_RADIUS,
                      init_point=x0, random_state=seed, method=method).fit(points)


def _distance(space, point, target):
    return float(to_numpy(space.metric.dist(to_backend(to_numpy(point)), target)))


def band_rows(name, quick):
    """Default, extrinsic and tangent on ``name`` subsampled to each ratio r."""
    full = SPHERE_DATASETS[name]()
    space, x0, loss = _setting(full)
    rows = []
    for epsilon in BAND_EPSILONS[:1] if quick else BAND_EPSILONS:
        z = calibrate_gaussian(epsilon, DELTA, 1)
        for ratio in RATIOS[-1:] if quick else RATIOS:
            n = round(math.sqrt(space.dim) * 2 * z / ratio)
            if n > len(full):  # r this small needs more records than the set has
                continue
            for seed in range(1 if quick else SEEDS):
                rng = np.random.default_rng(1000 + seed)
                points = full[rng.choice(len(full), n, replace=False)]
                target = to_backend(huber_mean(space, points, x0, HUBER_RADIUS))
                start_distance = _distance(space, x0, target)
                for method in ("auto", "extrinsic", "tangent"):
                    est = _fit(space, loss, points, x0, epsilon, seed, method)
                    rows.append({"experiment": "band", "dataset": name, "epsilon": epsilon,
                                 "n": n, "ratio": ratio, "method": method, "seed": seed,
                                 "error": _distance(space, est.estimate_, target),
                                 "chosen": est.method_, "start_distance": start_distance})
    return rows


def split_rows(name, epsilon, quick):
    """The default started at an extrinsic release bought with a share s of epsilon."""
    points = SPHERE_DATASETS[name]()
    space, x0, loss = _setting(points)
    target = to_backend(huber_mean(space, points, x0, HUBER_RADIUS))
    rows = []
    for share in SHARES[:2] if quick else SHARES:
        for seed in range(1 if quick else SEEDS):
            if share == 0.0:
                est = _fit(space, loss, points, x0, epsilon, seed)
            else:
                start = _fit(space, loss, points, x0, share * epsilon, seed, "extrinsic",
                             DELTA / 2).estimate_
                est = _fit(space, loss, points, to_numpy(start), (1 - share) * epsilon,
                           seed + 100, delta=DELTA / 2)
            rows.append({"experiment": "split", "dataset": name, "epsilon": epsilon,
                         "n": len(points), "ratio": share, "method": f"share {share}",
                         "seed": seed, "error": _distance(space, est.estimate_, target),
                         "chosen": est.method_, "start_distance": _distance(space, x0, target)})
    return rows


def run(output_dir, quick=False):
    """Write ``huber_rules.csv`` under ``output_dir``; print the mean errors per cell."""
    rows = []
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in DERIVATION[:1] if quick else DERIVATION:
            rows += band_rows(name, quick)
        for name, epsilon in SPLIT_CELLS[:1] if quick else SPLIT_CELLS:
            rows += split_rows(name, epsilon, quick)
    write_csv(output_dir / "huber_rules.csv", rows)
    print_cells(rows, ("experiment", "dataset", "epsilon", "ratio", "method"))


def print_cells(rows, fields, digits=".4f", se_digits=".4f"):
    """Print the mean error and its standard error over the seeds of each cell, a cell
    being the rows that agree on ``fields``."""
    cells = {}
    for row in rows:
        cells.setdefault(tuple(row[field] for field in fields), []).append(row["error"])
    for key, errors in cells.items():
        se = np.std(errors, ddof=1) / math.sqrt(len(errors)) if len(errors) > 1 else 0.0
        print(*key, f"{np.mean(errors):{digits}} +- {se:{se_digits}}", flush=True)
