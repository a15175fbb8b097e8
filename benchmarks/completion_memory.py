"""Peak memory of a PrivateMatrixCompletion fit against the size of its ratings matrix.

Each (method, n) runs in a fresh process: n users x 50 items of integer ratings 1 to 5,
30% observed (NaN elsewhere), float64; ``PrivateMatrixCompletion(epsilon=1,
rating_range=(1, 5), method=...)``. Two measures of the memory the fit adds to the
ratings it is given: the peak of ``tracemalloc`` (every numpy allocation of the fit) and
the growth of the process's peak resident memory (``ru_maxrss``) over its value just
before the fit. The ratio is (ratings + what the fit adds) / ratings; target <= 2 at
n = 10^6 (issue 33).
"""

import json
import os
import subprocess
import sys

from benchmarks.accounting import write_csv

N_ITEMS = 50
TARGET_RATIO = 2.0

_SCRIPT = """
import json, resource, sys, time, tracemalloc
import numpy as np
from geomstats_dp.learning import PrivateMatrixCompletion
n, n_items, method = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
rng = np.random.default_rng(0)
R = np.empty((n, n_items))
for start in range(0, n, 10_000):  # in blocks: no temporary of the whole matrix
    block = rng.integers(1, 6, (min(10_000, n - start), n_items)).astype(np.float64)
    block[rng.random(block.shape) >= 0.3] = np.nan
    R[start:start + len(block)] = block
rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
tracemalloc.start()
tic = time.process_time()
PrivateMatrixCompletion(epsilon=1.0, rating_range=(1, 5), method=method,
                        random_state=0).fit(R)
seconds = time.process_time() - tic
traced = tracemalloc.get_traced_memory()[1]
rss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"ratings_bytes": R.nbytes, "traced_peak": traced,
                  "rss_growth": max(rss_after - rss_before, 0), "cpu_seconds": seconds}))
"""


def _fresh(n, method):
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    completed = subprocess.run(
        [sys.executable, "-c", _SCRIPT, str(n), str(N_ITEMS), method],
        capture_output=True, text=True, check=True, env=env)
    return json.loads(completed.stdout.strip().splitlines()[-1])


def run(output_dir, quick=False):
    """Write ``completion_memory[_quick].csv``: one fresh process per (method, n)."""
    sizes = (10_000,) if quick else (100_000, 1_000_000)
    rows = []
    for n in sizes:
        for method in ("als", "select"):
            found = _fresh(n, method)
            ratings = found["ratings_bytes"]
            row = {
                "method": method, "n_users": n, "n_items": N_ITEMS,
                "ratings_mb": round(ratings / 1e6, 1),
                "traced_peak_mb": round(found["traced_peak"] / 1e6, 1),
                "rss_growth_mb": round(found["rss_growth"] / 1e6, 1),
                "traced_ratio": round((ratings + found["traced_peak"]) / ratings, 2),
                "rss_ratio": round((ratings + found["rss_growth"]) / ratings, 2),
                "cpu_seconds": round(found["cpu_seconds"], 1),
                "loadavg_1min": round(os.getloadavg()[0], 2),
            }
            row["memory_met"] = max(row["traced_ratio"], row["rss_ratio"]) <= TARGET_RATIO
            rows.append(row)
            print(f"  {method} n={n}: {row}", flush=True)
    prefix = "completion_memory_quick" if quick else "completion_memory"
    write_csv(output_dir / f"{prefix}.csv", rows)
