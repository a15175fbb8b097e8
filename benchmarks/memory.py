"""Peak memory and time per iteration of a DP-RGD Frechet mean of n SPD(8) points.

Each n runs in a fresh process (peak resident memory, ``ru_maxrss``, is per process):
synthetic Wishart matrices (8 x 8, 20 degrees of freedom), ``PrivateFrechetMean(method=
"rgd")`` with a public clip norm. In the same process: a fit of 1 iteration (first, so
that the process's one-time costs fall in it: importing numba and loading the kernels of
``optim.warm_logs``), a fit of ``N_ITER`` iterations (peak memory read right after it),
and two batched eigendecomposition passes over all the points (``numpy.linalg.eigh``, what
a step of the affine-invariant gradient needs without the warm start of ``warm_logs``: one
logarithm per point). The time per iteration is the marginal one, (fit of N_ITER - fit of
1) / (N_ITER - 1), which leaves out the once-per-fit work (membership checks, calibration,
the first pass, which has no bases to start from); the whole fit over its iterations is
reported too. The eigh pass is the mean of the two; a second baseline, the same pass in
the oracle's chunks (``CHUNK_BYTES``), is timed next to each (the chunked pass is faster
per point: its arrays stay in cache). Every time is taken on two clocks, wall and the
process's CPU time (single-threaded: ``OMP_NUM_THREADS=1``); the CPU ratio, less
sensitive to other processes on a shared machine, decides ``time_met``. Targets: peak
below 2 GB at n = 10^6, time per iteration within 1.2x of the eigh pass.
"""

import json
import os
import subprocess
import sys

from benchmarks.accounting import write_csv

TARGET_BYTES = 2 * 10**9
TARGET_RATIO = 1.2
N_ITER = 5

_SCRIPT = """
import json, resource, sys, time
import numpy as np
from geomstats.geometry.spd_matrices import SPDMatrices
from geomstats_dp.learning import PrivateFrechetMean
from geomstats_dp.optim import oracle
n, n_iter = int(sys.argv[1]), int(sys.argv[2])
chunk = oracle.CHUNK_BYTES // (8 * 64)  # the rows of one chunk of per-sample gradients
rng = np.random.default_rng(0)
X = np.empty((n, 8, 8))
for start in range(0, n, 10_000):  # Wishart(I, 20) in chunks: no n x 20 x 8 temporary
    g = rng.standard_normal((min(10_000, n - start), 20, 8))
    X[start:start + g.shape[0]] = np.einsum("kij,kil->kjl", g, g) / 20
baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
def timed(call):  # (wall, CPU) seconds; CPU time is the less sensitive to other processes
    wall, cpu = time.perf_counter(), time.process_time()
    call()
    return [time.perf_counter() - wall, time.process_time() - cpu]
def fit(k):
    est = PrivateFrechetMean(SPDMatrices(8), epsilon=1.0, delta=1e-5, method="rgd",
                             clip_norm=3.0, n_iter=k, random_state=0)
    seconds = timed(lambda: est.fit(X))
    assert est.n_iter_ == k
    return seconds
def eigh(chunk):
    def passes():
        for first in range(0, n, chunk):
            np.linalg.eigh(X[first:first + chunk])
    return timed(passes)
one_s = fit(1)  # first: the process's one-time costs (numba's kernels, warm_logs) land here
fit_s = fit(n_iter)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # before the baseline's
eigh_s, chunked_s = [eigh(n)], [eigh(chunk)]
eigh_s.append(eigh(n)); chunked_s.append(eigh(chunk))
print(json.dumps({"data_bytes": X.nbytes, "rss_before_fit": baseline, "peak_bytes": peak,
                  "eigh_seconds": eigh_s, "chunked_eigh_seconds": chunked_s, "fit_seconds": fit_s, "one_iteration_fit_seconds":
                  one_s, "n_iter": n_iter}))
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
        found = _fresh(n, n_iter=N_ITER)
        row = {
            "n": n,
            "data_mb": round(found["data_bytes"] / 1e6, 1),
            "rss_before_fit_mb": round(found["rss_before_fit"] / 1e6, 1),
            "peak_mb": round(found["peak_bytes"] / 1e6, 1),
            "memory_met": found["peak_bytes"] < TARGET_BYTES,
        }
        for clock, column in (("wall", 0), ("cpu", 1)):
            fit_s = found["fit_seconds"][column]
            marginal = (fit_s - found["one_iteration_fit_seconds"][column]) / (N_ITER - 1)
            eigh_s = sum(run[column] for run in found["eigh_seconds"]) / 2
            chunked_s = sum(run[column] for run in found["chunked_eigh_seconds"]) / 2
            row.update({
                f"{clock}_fit_seconds_per_iteration": round(fit_s / N_ITER, 3),
                f"{clock}_seconds_per_iteration": round(marginal, 3),
                f"{clock}_eigh_pass_seconds": round(eigh_s, 3),
                f"{clock}_chunked_eigh_seconds": round(chunked_s, 3),
                f"{clock}_ratio_to_eigh": round(marginal / eigh_s, 3),
                f"{clock}_ratio_to_chunked_eigh": round(marginal / chunked_s, 3),
            })
        row["time_met"] = row["cpu_ratio_to_eigh"] <= TARGET_RATIO
        row["loadavg_1min"] = round(os.getloadavg()[0], 2)
        rows.append(row)
        print(f"  n={n}: peak {row['peak_mb']} MB; per iteration "
              f"{row['cpu_seconds_per_iteration']} s CPU ({row['cpu_ratio_to_eigh']}x one "
              f"eigh pass, {row['cpu_ratio_to_chunked_eigh']}x one in chunks), "
              f"{row['wall_seconds_per_iteration']} s wall ({row['wall_ratio_to_eigh']}x, "
              f"{row['wall_ratio_to_chunked_eigh']}x); runs {found}; load {os.getloadavg()}",
              flush=True)
    prefix = "memory_quick" if quick else "memory"
    write_csv(output_dir / f"{prefix}.csv", rows)
