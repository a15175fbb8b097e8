"""Cold calibration: the first noise calibration in a fresh Python process.

Each configuration runs in its own interpreter (``subprocess``), so nothing is cached and
every lazy import is paid: the seconds of importing ``geomstats_dp.privacy`` (geomstats
itself, mostly) and the seconds of the first ``calibrate_gaussian`` / ``calibrate_svrg``
call are reported apart. Target: the calibration at most 1 s for DP-RGD (full batch),
DP-RSGD (without replacement and Poisson) and DP-RSVRG, up to 10^5 steps.
"""

import json
import os
import subprocess
import sys

from benchmarks.accounting import write_csv

TARGET_S = 1.0
DELTA = 1e-5

_SCRIPT = """
import json, sys, time
start = time.perf_counter()
from geomstats_dp.privacy.calibration import calibrate_gaussian
from geomstats_dp.privacy.svrg import calibrate_svrg
imported = time.perf_counter()
kind, n_steps, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
delta = float(sys.argv[4])
if kind == "svrg":
    result = calibrate_svrg(1.0, delta, n=n, n_epochs=max(1, n_steps // n), inner_steps=n)
    value = result.sigma
elif kind == "full":
    value = calibrate_gaussian(1.0, delta, n_steps)
else:
    adjacency = "add_remove" if kind == "poisson" else "replace_one"
    value = calibrate_gaussian(1.0, delta, n_steps, 1.0 / n, kind, adjacency)
done = time.perf_counter()
print(json.dumps({"import_s": imported - start, "calibrate_s": done - imported,
                  "autodp_imported": "autodp" in sys.modules, "value": value}))
"""


def configurations(quick):
    """(method, scheme, n_steps, n) of every timed calibration."""
    steps = (1000, 100_000) if quick else (1000, 10_000, 100_000)
    rows = []
    for n_steps in steps:
        rows += [
            ("rgd", "full", n_steps, 50),
            ("rsgd", "without_replacement", n_steps, 50),
            ("rsgd", "poisson", n_steps, 50),
        ]
        rows += [("rsvrg", "svrg", n_steps, n) for n in (50, 5000)]
    return rows


def _run_fresh(scheme, n_steps, n):
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    completed = subprocess.run(
        [sys.executable, "-c", _SCRIPT, scheme, str(n_steps), str(n), str(DELTA)],
        capture_output=True, text=True, check=True, env=env,
    )
    return json.loads(completed.stdout.strip().splitlines()[-1])


def run(output_dir, quick=False):
    """Write ``cold_calibration[_quick].csv``: one fresh process per configuration."""
    rows = []
    for method, scheme, n_steps, n in configurations(quick):
        found = _run_fresh(scheme, n_steps, n)
        rows.append({
            "method": method, "scheme": scheme, "n_steps": n_steps, "n": n,
            "import_seconds": round(found["import_s"], 3),
            "calibrate_seconds": round(found["calibrate_s"], 4),
            "autodp_imported": found["autodp_imported"],
            "noise": found["value"],
            "met": found["calibrate_s"] <= TARGET_S,
        })
        print(f"  {method} {scheme} T={n_steps} n={n}: calibrate {found['calibrate_s']:.3f} s "
              f"(import {found['import_s']:.2f} s)", flush=True)
    prefix = "cold_calibration_quick" if quick else "cold_calibration"
    write_csv(output_dir / f"{prefix}.csv", rows)
