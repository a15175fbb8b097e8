"""The Huber mean from a private extrinsic start (issue 31, item 2), emulated with the
public API.

``python -m benchmarks huber_private_start [--quick]``. ``HuberDistanceLoss(space, 0.5)``
on the sphere rows of the means suite (``benchmarks/baseline_suites/means.py``: x0 the
centre of the positive orthant, C = 0.5, delta 1e-5), error the distance to the
non-private Huber mean. The private start: a share s of the Gaussian budget buys the
projected extrinsic mean (``PrivateERM(method="extrinsic")``), and the rest runs
``PrivateERM(method="two_stage")`` (or ``"rgd"``) from that released point (adaptive
composition: the start is a released value). Budgets: the two-stage release keeps its
pure-DP localisation share f of epsilon (``LOCALISE_EPSILON_FRACTION``); the Gaussian
part, $\\mu$ = ``gdp_mu``((1 - f) epsilon, delta), is split $\\mu_1^2 = s \\mu^2$,
$\\mu_2^2 = (1 - s) \\mu^2$ (exact Gaussian-DP composition); the second stage's quantile
gets f of its own epsilon, a little less than f epsilon, so each ledger composes to at
most epsilon. With DP-RGD as the second stage (no quantile) $\\mu$ = ``gdp_mu``(epsilon,
delta). Compared, on the same data and seeds: the forced methods "two_stage", "rgd",
"tangent", "extrinsic" and the default ("auto").

Cells: the derivation sets of the rule of ``"auto"`` (digits, optdigits, satimage rows:
epsilon 0.1, 1, 10; and one seeded subsample each at the n where r = 2 sqrt(d) z / n is
``SUBSAMPLE_RATIOS`` at epsilon 1), synthetic clouds on the sphere (``SYNTHETIC``: a
tangent Gaussian of the given spread around a point at the given offset from x0), then
the held-out spambase, wdbc, sonar and libras rows (epsilon 0.1, 1, 10).

Writes ``results/huber_private_start.csv`` (group, dataset, epsilon, n, dim, ratio,
start_distance, method, seed, error, start_error, chosen).
"""

import math
import warnings
from multiprocessing import Pool

import numpy as np
from geomstats.geometry.hypersphere import Hypersphere
from threadpoolctl import threadpool_limits

from benchmarks.baseline_suites.means import (
    DELTA,
    HUBER_RADIUS,
    SPHERE_DATASETS,
    huber_mean,
)
from benchmarks.baselines import EPSILONS, N_SEEDS
from benchmarks.federated import write_csv
from benchmarks.huber_rules import DERIVATION, _distance, _fit, _setting, print_cells
from benchmarks.skip_accuracy import manifold_cloud
from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.learning.mechanisms.tangent import LOCALISE_EPSILON_FRACTION
from geomstats_dp.privacy import (
    calibrate_gaussian,
    gdp_epsilon,
    gdp_mu,
    set_default_budget,
)

SHARES = (0.1, 0.25, 0.5)
SECOND_STAGES = ("two_stage", "rgd")
FORCED = ("two_stage", "rgd", "tangent", "extrinsic", "auto")
SUBSAMPLE_RATIOS = (0.1, 0.2, 0.35, 0.5)
HELD_OUT = ("spambase_words_sphere", "wdbc_rows_sphere", "sonar_rows_sphere",
            "libras_rows_sphere")
SYNTHETIC = (  # (dim, n, offset from x0, spread, epsilons)
    (53, 2000, 1.2, 0.3, EPSILONS), (29, 600, 1.2, 0.3, EPSILONS),
    (53, 2000, 0.1, 0.3, EPSILONS), (29, 600, 0.1, 0.3, EPSILONS),
    (53, 2000, 0.6, 0.5, EPSILONS),
    (53, 4483, 1.2, 0.3, (0.1,)), (53, 545, 1.2, 0.3, (1.0,)), (53, 272, 1.2, 0.3, (1.0,)),
    (53, 545, 1.2, 0.8, (1.0,)), (53, 272, 1.0, 0.8, (1.0,)), (53, 4483, 1.0, 0.8, (0.1,)),
)


def split_epsilons(epsilon, delta, share, second):
    """(epsilon of the extrinsic start, epsilon of the second stage) at ``delta``."""
    quantile = LOCALISE_EPSILON_FRACTION if second == "two_stage" else 0.0
    mu = gdp_mu((1 - quantile) * epsilon, delta)
    first = gdp_epsilon(math.sqrt(share) * mu, delta)
    return first, gdp_epsilon(math.sqrt(1 - share) * mu, delta) / (1 - quantile)


def synthetic_cloud(dim, n, offset, spread, seed=7):
    """n points of S^dim: a tangent Gaussian (norm about ``spread``) around the point at
    ``offset`` from x0 = (1, ..., 1) / sqrt(dim + 1) (``skip_accuracy.manifold_cloud``)."""
    x0 = np.ones(dim + 1) / math.sqrt(dim + 1)
    return to_numpy(manifold_cloud(Hypersphere(dim), x0, n, spread / math.sqrt(dim), offset,
                                   np.random.default_rng(seed)))


def _releases(space, loss, points, x0, epsilon, seed):
    """(method, estimator, start or None) of every release compared in a cell."""
    for method in FORCED:
        yield method, _fit(space, loss, points, x0, epsilon, seed, method), None
    for second in SECOND_STAGES:
        for share in SHARES:
            first_eps, second_eps = split_epsilons(epsilon, DELTA, share, second)
            start = _fit(space, loss, points, x0, first_eps, seed, "extrinsic").estimate_
            yield (f"start_{second}_{share}",
                   _fit(space, loss, points, to_numpy(start), second_eps, seed + 100,
                        second), start)


def cell_rows(task):
    """Rows of one (group, name, points, epsilons, seeds) task."""
    group, name, points, epsilons, seeds = task
    space, x0, loss = _setting(points)
    target = to_backend(huber_mean(space, points, x0, HUBER_RADIUS))
    n, dim = len(points), int(space.dim)
    base = {"group": group, "dataset": name, "n": n, "dim": dim,
            "start_distance": _distance(space, x0, target)}
    rows = []
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for epsilon in epsilons:
            ratio = math.sqrt(dim) * 2 * calibrate_gaussian(epsilon, DELTA, 1) / n
            for seed in range(seeds):
                for method, fitted, start in _releases(space, loss, points, x0, epsilon,
                                                       seed):
                    rows.append({**base, "epsilon": epsilon, "ratio": ratio,
                                 "method": method, "seed": seed,
                                 "error": _distance(space, fitted.estimate_, target),
                                 "start_error": (math.nan if start is None
                                                 else _distance(space, start, target)),
                                 "chosen": fitted.method_})
    return rows


def tasks(quick):
    """The cells, derivation first, held-out last."""
    seeds, epsilons = (1, EPSILONS[:1]) if quick else (N_SEEDS, EPSILONS)
    for name in DERIVATION[:1] if quick else DERIVATION:
        full = SPHERE_DATASETS[name]()
        yield "derivation", name, full, epsilons, seeds
        dim = full.shape[1] - 1
        for ratio in () if quick else SUBSAMPLE_RATIOS:
            n = round(math.sqrt(dim) * 2 * calibrate_gaussian(1.0, DELTA, 1) / ratio)
            rows = np.random.default_rng(1000).choice(len(full), n, replace=False)
            yield "derivation", f"{name}_n{n}", full[rows], (1.0,), seeds
    for dim, n, offset, spread, cell_epsilons in SYNTHETIC[:1] if quick else SYNTHETIC:
        yield ("derivation", f"synthetic_S{dim}_n{n}_offset{offset}_spread{spread}",
               synthetic_cloud(dim, n, offset, spread), cell_epsilons[:1] if quick
               else cell_epsilons, seeds)
    for name in HELD_OUT[:1] if quick else HELD_OUT:
        yield "held_out", name, SPHERE_DATASETS[name](), epsilons, seeds


def run(output_dir, quick=False):
    """Write ``huber_private_start.csv`` under ``output_dir``; print the mean errors."""
    # each worker records its fits in its own default ledger (the benchmark's only)
    with Pool(1 if quick else 2, initializer=set_default_budget) as pool:
        rows = [row for cell in pool.imap(cell_rows, tasks(quick)) for row in cell]
    write_csv(output_dir / "huber_private_start.csv", rows)
    print_cells(rows, ("dataset", "epsilon", "method"), ".4g", ".2g")
