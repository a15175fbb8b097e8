"""Speed of the routes a user takes: a DP-RSGD epoch, the noise's share of a step, fixed costs.

Three ratios, each timed in one run with the compared variants interleaved and the fastest
of several repeats kept (the machine is shared: the minimum is the least disturbed run).
Each is taken in the CPU time of the process (``time.process_time``, BLAS single-threaded:
the time the code itself runs) and in wall time: on the shared 2-core machine the wall
time also counts the slices given to other processes, which at a load of 8 more than
doubled a 26 ms epoch against a 3 ms step.

- ``epoch_over_rgd_step``: one DP-RSGD epoch (n / b steps of ``MiniBatch``, batches of
  b = round(sqrt(n)), the weighted geodesic average of the default) over one DP-RGD step
  (``FullBatch``) on the same 10,992 SPD(2) covariances (goal: <= 3). The same epoch with
  its random draws made one step at a time (``streams`` blocks of one) is timed as well.
  Each on both routes of ``minimize`` where numba is installed: the compiled blocks of
  steps (``optim.compiled_blocks``, the default) and the Python loop (the kernel switched
  off), and the compiled epoch over the loop's step. Rows without a goal (CSV only):
  ``rsgd_fit_compiled_over_numpy``, a default ``PrivateFrechetMean(method="rsgd")`` fit on
  the two routes, and ``kernel_first_call``, the first compiled run of a new process
  (importing numba, compiling the kernel or loading it from numba's on-disk cache) and its
  second run, over the same run on the Python loop.
- ``noise_share``: a library DP-RSGD step (``minimize``, ``MiniBatch(1)``) on S^783 with
  noise over the same step without it, minus 1 (goal: <= 0.25).
- ``private_over_geomstats``: ``PrivateFrechetMean`` (method "rgd", and the default
  method) over geomstats' ``FrechetMean`` at 2,000 and 100,000 SPD(8) points
  (goal: <= 1.5); ``private_over_geomstats_same_steps`` gives geomstats as many
  iterations as the private fit takes steps (its own stopping rule usually stops sooner).
  Where the fit's full-batch passes start each record's eigendecomposition from the last
  point's (``optim.warm_logs``: 100,000 points), the same fits with LAPACK's ``eigh`` at
  every pass are timed beside them. Rows without a goal (CSV only):
  ``warm_kernels_first_fit``, the first default fit on 100,000 points of a new process
  (importing numba, compiling ``warm_logs``' kernels or loading them from numba's cache)
  and its second fit, over the same fit with LAPACK every pass.

Writes ``speed_routes.csv`` (one row per ratio: CPU seconds and their ratio ``value``, which
the goal is judged on, the wall seconds and ratio, and the load average of the machine)
and ``speed_routes.png``.
"""

import logging
import math
import os
import re
import time

import geomstats.backend as gs
import numpy as np
from threadpoolctl import threadpool_limits

from benchmarks.accounting import write_csv

SEED = 0
EPSILON, DELTA = 1.0, 1e-5
CLIP_NORM = 3.0


def both_clocks():
    """(CPU seconds of the process, wall seconds) now, as an array (differences subtract)."""
    return np.array([time.process_time(), time.perf_counter()])


def _fastest(calls, repeats):
    """Minimum (CPU, wall) seconds of each zero-argument callable, the callables
    interleaved; each clock's minimum is kept on its own."""
    best = {name: np.full(2, math.inf) for name in calls}
    for _ in range(repeats):
        for name, call in calls.items():
            start = both_clocks()
            call()
            best[name] = np.minimum(best[name], both_clocks() - start)
    return best


def spd2_covariances(n_samples):
    """n sample covariances of 4 correlated 2-d observations (+ 0.1 I), seeded."""
    rng = np.random.default_rng(SEED)
    mixing = np.array([[1.0, 0.0], [0.6, 0.8]])
    observations = rng.standard_normal((n_samples, 4, 2)) @ mixing.T
    return np.einsum("nti,ntj->nij", observations, observations) / 4 + 0.1 * np.eye(2)


def epoch_rows(quick):
    """One DP-RSGD epoch against one DP-RGD step on SPD(2) covariances, on the default
    route (the compiled blocks where numba is installed) and on the Python loop; a
    ``PrivateFrechetMean(method="rsgd")`` fit on both; the kernel's first call."""
    from geomstats.geometry.spd_matrices import SPDMatrices

    from geomstats_dp.learning import PrivateFrechetMean
    from geomstats_dp.optim import (
        FullBatch,
        InverseTimeStep,
        MiniBatch,
        SquaredDistanceLoss,
        compiled_blocks,
        minimize,
        streams,
    )

    n_samples = 1000 if quick else 10_992
    space = SPDMatrices(2)
    loss = SquaredDistanceLoss(space)
    covariances = spd2_covariances(n_samples)
    data = loss.check_data(covariances)
    batch_size = round(math.sqrt(n_samples))
    epoch = n_samples // batch_size
    sigma = 0.5 * 2 * CLIP_NORM / batch_size  # noise multiplier 0.5; the cost is sigma-free

    def rgd_step():
        minimize(loss, data, FullBatch(CLIP_NORM, sigma), 1, 0.5, random_state=SEED,
                 data_checked=True)

    def rsgd_epoch():
        minimize(loss, data, MiniBatch(batch_size, CLIP_NORM, sigma), epoch,
                 InverseTimeStep(1.0, offset=2.0), output="weighted_average",
                 random_state=SEED, data_checked=True)

    def rsgd_epoch_per_step_draws():
        saved = streams.BLOCK_FLOATS, streams.MAX_BLOCK_STEPS
        streams.BLOCK_FLOATS, streams.MAX_BLOCK_STEPS = 1, 1
        try:
            rsgd_epoch()
        finally:
            streams.BLOCK_FLOATS, streams.MAX_BLOCK_STEPS = saved

    def rsgd_fit():
        PrivateFrechetMean(space, epsilon=EPSILON, delta=DELTA, method="rsgd",
                           clip_norm=CLIP_NORM, random_state=SEED).fit(covariances)

    compiled = compiled_blocks.ENABLED and compiled_blocks.numba_importable()
    routes = ("compiled", "numpy") if compiled else ("numpy",)
    if compiled:  # loaded up front (``first_call_rows`` times the load): runs of any length
        compiled_blocks.compiled_kernel()  # take the route
    calls = {f"{name} ({route})": on_route(compiled_blocks, route == "compiled", call)
             for route in routes
             for name, call in (("rgd_step", rgd_step), ("rsgd_epoch", rsgd_epoch),
                                ("rsgd_epoch_per_step_draws", rsgd_epoch_per_step_draws))}
    first_call = first_call_rows() if compiled else []
    best = _fastest(calls, 3 if quick else 21)
    problem = f"SPD(2), {n_samples} covariances, b = {batch_size}, {epoch} steps per epoch"
    pairs = [(f"{variant} ({route})", f"rgd_step ({route})") for route in routes
             for variant in ("rsgd_epoch", "rsgd_epoch_per_step_draws")]
    if compiled:  # the compiled epoch against the faster step of the two routes
        pairs.append(("rsgd_epoch (compiled)", "rgd_step (numpy)"))
    found = [_row("epoch_over_rgd_step", problem, variant, best[variant],
                  f"one DP-RGD step ({step.split()[1][1:-1]})", best[step], 3.0)
             for variant, step in pairs]
    if compiled:
        fits = _fastest({route: on_route(compiled_blocks, route == "compiled", rsgd_fit)
                         for route in routes}, 3)
        found.append(_row("rsgd_fit_compiled_over_numpy", f"{problem}; the default fit",
                          'PrivateFrechetMean(method="rsgd") (compiled)', fits["compiled"],
                          "the same fit (numpy)", fits["numpy"], None))
    return found + first_call


def on_route(compiled_blocks, enabled, call):
    """``call`` with the compiled blocks switched on or off."""

    def routed():
        saved, compiled_blocks.ENABLED = compiled_blocks.ENABLED, enabled
        try:
            call()
        finally:
            compiled_blocks.ENABLED = saved

    return routed


FIRST_CALL = """
import time
import numpy as np
from geomstats.geometry.spd_matrices import SPDMatrices
from benchmarks.speed_routes import spd2_covariances
from geomstats_dp.optim import MiniBatch, SquaredDistanceLoss, compiled_blocks, minimize
loss = SquaredDistanceLoss(SPDMatrices(2))
data = loss.check_data(spd2_covariances(50))
def call(enabled):
    compiled_blocks.ENABLED = enabled
    start = np.array([time.process_time(), time.perf_counter()])
    minimize(loss, data, MiniBatch(7, 1.0, 0.1), compiled_blocks.MIN_STEPS_TO_LOAD, 0.1,
             random_state=0)
    return np.array([time.process_time(), time.perf_counter()]) - start
print(*call(True), *call(True), *call(False))
"""


def first_call_rows():
    """The first ``minimize`` call of a new process that takes the compiled route
    (``MIN_STEPS_TO_LOAD`` steps: importing numba, then compiling the kernel or loading
    it from the on-disk cache), the same call once loaded, against the Python loop."""
    from geomstats_dp.optim.compiled_blocks import MIN_STEPS_TO_LOAD

    return new_process_rows(
        "kernel_first_call", f"{MIN_STEPS_TO_LOAD} DP-RSGD steps, 50 SPD(2) records, b = 7",
        FIRST_CALL, "call", "the same call on the Python loop")


FIRST_WARM_FIT = """
import time
import geomstats.backend as gs
import numpy as np
from geomstats.geometry.spd_matrices import SPDMatrices
from geomstats_dp.learning import PrivateFrechetMean
from geomstats_dp.optim import compiled_blocks
space = SPDMatrices(8)
gs.random.seed(0)
points = space.random_point(100_000)
def call(enabled):
    compiled_blocks.ENABLED = enabled
    start = np.array([time.process_time(), time.perf_counter()])
    PrivateFrechetMean(space, epsilon=1.0, delta=1e-5, clip_norm=3.0,
                       random_state=0).fit(points)
    return np.array([time.process_time(), time.perf_counter()]) - start
print(*call(True), *call(True), *call(False))
"""


def first_warm_fit_rows():
    """The first default ``PrivateFrechetMean`` fit of a new process on 100,000 SPD(8)
    points (importing numba, then compiling ``optim.warm_logs``' kernels or loading them
    from the on-disk cache), the same fit once loaded, against LAPACK every pass."""
    return new_process_rows(
        "warm_kernels_first_fit", "SPD(8), 100000 points, PrivateFrechetMean (auto)",
        FIRST_WARM_FIT, "fit", "the same fit, LAPACK every pass")


def new_process_rows(ratio, problem, script, what, baseline):
    """Rows of ``script``'s three timings (first call, second call, baseline call) in two
    new processes sharing an empty numba cache folder: the first compiles, the second
    loads."""
    import subprocess
    import sys
    import tempfile

    rows = []
    with tempfile.TemporaryDirectory() as cache:
        environment = {**os.environ, "NUMBA_CACHE_DIR": cache, "OMP_NUM_THREADS": "1"}
        for process in ("empty numba cache: import + compile",
                        "a later process: import + cache load"):
            output = subprocess.run([sys.executable, "-c", script], env=environment,
                                    capture_output=True, text=True, check=True).stdout
            times = np.array(output.split(), dtype=float).reshape((3, 2))
            for variant, seconds in ((f"first {what} ({process})", times[0]),
                                     (f"second {what} ({process})", times[1])):
                rows.append(_row(ratio, problem, variant, seconds, baseline, times[2], None))
    return rows


def noise_share_rows(quick):
    """A library DP-RSGD step on S^783 with and without noise (``benchmarks.sampling``)."""
    from benchmarks.sampling import _library_step_seconds, _rsgd_problems

    problem = _rsgd_problems()[1]
    n_steps = 200 if quick else 2000
    best = {True: np.full(2, math.inf), False: np.full(2, math.inf)}
    for repeat in range(2 if quick else 15):
        for noisy, fastest in list(best.items()):
            best[noisy] = np.minimum(fastest, _library_step_seconds(
                problem, noisy, n_steps, seed=repeat, clock=both_clocks))
    return [_row("noise_share", f"{problem.name}, one record per step", "DP-RSGD step",
                 best[True], "the same step without noise", best[False], 1.25)]


def geomstats_iterations(estimator, points):
    """Iterations geomstats' FrechetMean ran (read from its verbose log)."""
    found = []

    class Capture(logging.Handler):
        def emit(self, record):
            if str(record.msg).startswith("n_iter"):
                found.append(int(re.search(r"n_iter: (\d+)", record.getMessage()).group(1)))

    handler, root = Capture(), logging.getLogger()
    level, estimator.optimizer.verbose = root.level, True
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    try:
        estimator.fit(points)
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
        estimator.optimizer.verbose = False
    return found[-1] if found else None


def frechet_mean_rows(quick):
    """PrivateFrechetMean (rgd and the default method) against geomstats' FrechetMean, run
    to its own convergence and for the private fit's number of steps."""
    from geomstats.geometry.spd_matrices import SPDMatrices

    from geomstats_dp.learning import PrivateFrechetMean

    space = SPDMatrices(8)
    default_method = PrivateFrechetMean(space).method
    methods = ["rgd"] + ([default_method] if default_method != "rgd" else [])
    sizes = ((200, 3), (2000, 3)) if quick else ((2000, 9), (100_000, 3))
    rows = [row for n_samples, repeats in sizes
            for row in _frechet_mean_size(space, methods, n_samples, repeats)]
    return rows if quick else rows + first_warm_fit_rows()


def _frechet_mean_size(space, methods, n_samples, repeats):
    """The rows of ``frechet_mean_rows`` at one sample size."""
    from geomstats.learning.frechet_mean import FrechetMean

    from geomstats_dp.learning import PrivateFrechetMean
    from geomstats_dp.optim import SquaredDistanceLoss, compiled_blocks, warm_logs

    gs.random.seed(SEED)
    points = space.random_point(n_samples)

    def private(method):
        return PrivateFrechetMean(space, epsilon=EPSILON, delta=DELTA, method=method,
                                  clip_norm=CLIP_NORM, random_state=SEED)

    n_steps = private("rgd").fit(points).n_iter_
    converged, fixed = FrechetMean(space), FrechetMean(space)
    fixed.optimizer.max_iter, fixed.optimizer.epsilon = n_steps, 0.0
    iterations = geomstats_iterations(converged, points)
    calls = {method: (lambda method=method: private(method).fit(points)) for method in methods}
    variants = {method: f"PrivateFrechetMean ({method})" for method in methods}
    if warm_logs.record_bases_for(SquaredDistanceLoss(space), points) is not None:
        for method in methods:  # the same fit with every pass's eigh from LAPACK
            cold = f"{method}, LAPACK eigh every pass"
            calls[cold] = on_route(compiled_blocks, False, calls[method])
            variants[cold] = f"PrivateFrechetMean ({cold})"
            variants[method] = f"PrivateFrechetMean ({method}, warm-started eigh)"
    calls.update(converged=lambda: converged.fit(points), fixed=lambda: fixed.fit(points))
    logging.disable(logging.WARNING)  # "maximum number of iterations reached"
    try:
        best = _fastest(calls, repeats)
    finally:
        logging.disable(logging.NOTSET)
    found = []
    for name, variant in variants.items():
        found.append(_row(
            "private_over_geomstats", f"SPD(8), {n_samples} points", variant, best[name],
            f"geomstats FrechetMean (converged: {iterations} iterations)", best["converged"],
            1.5))
        found.append(_row(
            "private_over_geomstats_same_steps", f"SPD(8), {n_samples} points", variant,
            best[name], f"geomstats FrechetMean ({n_steps} iterations, as DP-RGD)",
            best["fixed"], 1.5))
    return found


def _row(ratio, problem, variant, seconds, baseline, baseline_seconds, goal):
    """One CSV row from (CPU, wall) seconds of the variant and of the baseline."""
    (cpu, wall), (cpu_baseline, wall_baseline) = seconds, baseline_seconds
    value = cpu / cpu_baseline
    row = {"ratio": ratio, "problem": problem, "variant": variant, "seconds": cpu,
           "baseline": baseline, "baseline_seconds": cpu_baseline, "value": value,
           "goal": goal, "met": "" if goal is None or math.isnan(value) else value <= goal, "wall_seconds": wall,
           "wall_baseline_seconds": wall_baseline, "wall_value": wall / wall_baseline,
           "loadavg_1min": round(os.getloadavg()[0], 2)}
    print(f"  {ratio} [{problem}] {variant}: CPU {cpu:.4g} s / {cpu_baseline:.4g} s = "
          f"{value:.2f} (goal {goal}), wall {row['wall_value']:.2f}; "
          f"load {row['loadavg_1min']}", flush=True)
    return row


def plot(path, rows):
    """One bar per ratio over its goal (1 = the goal met exactly); rows without a goal
    or without a value (a baseline not installed) are in the CSV only."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [row for row in rows if row["met"] != ""]
    labels = [f"{row['ratio']}: {row['variant']}\n{row['problem']}\nover {row['baseline']}"
              for row in rows]
    values = [row["value"] / row["goal"] for row in rows]
    fig, axis = plt.subplots(figsize=(10, 0.8 * len(rows) + 1.2))
    axis.barh(range(len(rows)), values,
              color=["tab:green" if row["met"] else "tab:red" for row in rows])
    axis.axvline(1.0, color="black", linewidth=1)
    axis.set_yticks(range(len(rows)), labels, fontsize=7)
    axis.invert_yaxis()
    axis.set_xlabel("measured ratio in CPU time / goal (<= 1: goal met)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def run(output_dir, quick=False):
    """Write ``speed_routes[_quick].csv`` and ``.png``."""
    with threadpool_limits(limits=1):
        found = [row for measure in (epoch_rows, noise_share_rows, frechet_mean_rows)
                 for row in measure(quick)]
    path = output_dir / ("speed_routes_quick" if quick else "speed_routes")
    plot(path.with_suffix(".png"), found)
    write_csv(path.with_suffix(".csv"), found)
