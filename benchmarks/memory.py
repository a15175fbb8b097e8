"""Peak memory and time per iteration of a DP-RGD Frechet mean of n SPD(8) points.

Each n runs in a fresh process (peak resident memory, ``ru_maxrss``, is per process and
read right after the fit, before the baseline runs):
synthetic Wishart matrices (8 x 8, 20 degrees of freedom), ``PrivateFrechetMean(method=
"rgd")`` with a public clip norm, and in the same process the baseline: one batched
eigendecomposition pass over all the points (``numpy.linalg.eigh``), the least a step of
the affine-invariant gradient needs (one logarithm per point). Targets: peak below 2 GB at
n = 10^6, time per iteration within 1.2x of the eigendecomposition pass.
"""

import json
import os
import subprocess
import sys

from benchmarks.accounting import write_csv

TARGET_BYTES = 2 * 10**9
TARGET_RATIO = 1.2

_SCRIPT = """
import json, resource, sys, time
import numpy as np
from geomstats.geometry.spd_matrices import SPDMatrices
from geomstats_dp.learning import PrivateFrechetMean
n, n_iter = int(sys.argv[1]), int(sys.argv[2])
rng = np.random.default_rng(0)
X = np.empty((n, 8, 8))
for start in range(0, n, 10_000):  # Wishart(I, 20) in chunks: no n x 20 x 8 temporary
    g = rng.standard_normal((min(10_000, n - start), 20, 8))
    X[start:start + g.shape[0]] = np.einsum("kij,kil->kjl", g, g) / 20
baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
est = PrivateFrechetMean(SPDMatrices(8), epsilon=1.0, delta=1e-5, method="rgd",
                         clip_norm=3.0, n_iter=n_iter, random_state=0)
start = time.perf_counter(); est.fit(X); fit_s = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # before the baseline's
start = time.perf_counter(); np.linalg.eigh(X); eigh_s = time.perf_counter() - start
print(json.dumps({"data_bytes": X.nbytes, "rss_before_fit": baseline, "peak_bytes": peak,
                  "eigh_seconds": eigh_s, "fit_seconds": fit_s, "n_iter": est.n_iter_}))
"""


def _fresh(n, n_iter):
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    completed = subprocess.run(
        [sys.executable, "-c", _SCRIPT, str(n), str(n_iter)],
        capture_output=True, text=True, check=True, env=env,
    )
    return json.loads(completed.stdout.strip().splitlines()[-1])


def run(output_dir, quick=False):
    """Write ``memory[_quick].csv``: one fresh process per n."""
    sizes = (10_000, 100_000) if quick else (100_000, 1_000_000)
    rows = []
    for n in sizes:
        found = _fresh(n, n_iter=3)
        per_iter = found["fit_seconds"] / found["n_iter"]
        row = {
            "n": n,
            "data_mb": round(found["data_bytes"] / 1e6, 1),
            "rss_before_fit_mb": round(found["rss_before_fit"] / 1e6, 1),
            "peak_mb": round(found["peak_bytes"] / 1e6, 1),
            "seconds_per_iteration": round(per_iter, 3),
            "eigh_pass_seconds": round(found["eigh_seconds"], 3),
            "ratio_to_eigh": round(per_iter / found["eigh_seconds"], 3),
            "memory_met": found["peak_bytes"] < TARGET_BYTES,
            "time_met": per_iter <= TARGET_RATIO * found["eigh_seconds"],
        }
        rows.append(row)
        print(f"  n={n}: peak {row['peak_mb']} MB, {per_iter:.3f} s/iteration "
              f"({row['ratio_to_eigh']}x one eigh pass)", flush=True)
    prefix = "memory_quick" if quick else "memory"
    write_csv(output_dir / f"{prefix}.csv", rows)
