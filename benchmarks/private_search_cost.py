"""The price of a private search against a single fit, in time, with its defaults.

``python -m benchmarks private_search_cost``. Real data the tests do not use; delta =
1e-5, epsilon 1, 3 seeds; every search with its defaults (K Poisson of mean 2m, the
public number of runs k_max = ``max_runs="auto"``, a 25% validation part, the refit on
all data) and ``loss_bound`` left to its default, the bound the sphere gives:

* ``PrivateFrechetMean`` (its defaults) on scikit-learn's digits as unit rows on S^63
  (1,797 rows); grid ``clip_norm`` in {0.25, 0.5, 1, 2} (m = 4); B = pi^2 / 2;
* ``PrivateStructuredPrediction`` (its defaults: the extrinsic release on S^1) on the
  baseline suite's segment_hue (2,000 training regions); grid ``bandwidth`` in {0.5, 1,
  2} x the median distance between the training features (m = 3); B = pi^2.

Each row: the seconds of one fit of the estimator with its defaults at the whole epsilon,
of the search (runs and refit), their ratio, and k_max (``events_[0].max_runs``).
Results: ``results/private_search_cost.csv``.
"""

import time
import warnings

from geomstats.geometry.hypersphere import Hypersphere
from threadpoolctl import threadpool_limits

from benchmarks.accounting import write_csv
from benchmarks.baseline_suites.means import SPHERE_DATASETS
from benchmarks.baseline_suites.structured_prediction import datasets
from geomstats_dp._backend import to_backend
from geomstats_dp.learning import PrivateFrechetMean, PrivateStructuredPrediction
from geomstats_dp.learning.structured_prediction import median_bandwidth
from geomstats_dp.model_selection import PrivateGridSearchCV
from geomstats_dp.privacy import PrivacyBudget

DELTA = 1e-5
EPSILON = 1.0
N_SEEDS = 3


def tasks(quick):
    """Name -> (estimator factory, grid, fit arguments)."""
    rows = SPHERE_DATASETS["digits_rows_sphere"]()
    rows = rows[:300] if quick else rows
    sphere = Hypersphere(rows.shape[1] - 1)
    space, _, X, Y, train, _ = datasets(quick)["segment_hue"]
    median = median_bandwidth(X[train])
    return {
        "PrivateFrechetMean, digits on S^63": (
            lambda seed: PrivateFrechetMean(sphere, clip_norm=1.0, epsilon=EPSILON,
                                            delta=DELTA, random_state=seed),
            {"clip_norm": [0.25, 0.5, 1.0, 2.0]}, (to_backend(rows),)),
        "PrivateStructuredPrediction, segment_hue on S^1": (
            lambda seed: PrivateStructuredPrediction(space, epsilon=EPSILON, delta=DELTA,
                                                     random_state=seed),
            {"bandwidth": [factor * median for factor in (0.5, 1.0, 2.0)]},
            (X[train], Y[train])),
    }


def _timed(estimator, data):
    start = time.perf_counter()
    estimator.fit(*data)
    return time.perf_counter() - start


def run(output_dir, quick=False):
    out = []
    with warnings.catch_warnings(), threadpool_limits(1):
        warnings.simplefilter("ignore")
        for name, (make, grid, data) in tasks(quick).items():
            for seed in range(1 if quick else N_SEEDS):
                single = _timed(make(seed), data)
                search = PrivateGridSearchCV(make(seed), grid, epsilon=EPSILON, delta=DELTA,
                                             budget=PrivacyBudget(EPSILON, DELTA),
                                             random_state=seed)
                seconds = _timed(search, data)
                row = {"task": name, "seed": seed, "n_candidates": len(next(iter(
                    grid.values()))), "max_runs": search.events_[0].max_runs,
                    "loss_bound": search.loss_bound_, "single_fit_s": single,
                    "search_s": seconds, "ratio": seconds / single}
                print(row, flush=True)
                out.append(row)
    write_csv(output_dir / "private_search_cost.csv", out)
