"""The default PrivateFrechetMean against geomstats' FrechetMean: time and error, one run.

``python -m benchmarks frechet_mean_steps`` (about ten minutes on a quiet machine, BLAS
single-threaded): SPD(8) points from geomstats' ``random_point`` (seed 0), n = 2,000 and
100,000, epsilon 1, delta 1e-5, C = 3, the default method ("auto": the two-stage release
here), fit seeds 0-7 (the step count, hence the cost, depends on the noise). Each
backend and size is measured in a fresh process (numpy at both sizes, autograd and
pytorch at 100,000); in it the calls are interleaved, the fastest of several repeats kept, in the CPU time of the process (``speed_routes``' clocks):

- "default": the default fit, on the route the library takes (at 100,000 points on
  numpy and autograd with numba installed, each record's ``eigh`` warm-started from the
  previous point's, ``optim.warm_logs``; LAPACK ``eigh`` at every pass otherwise);
- "LAPACK eigh every pass": the same fit with the compiled routes switched off (the
  route without numba, and pytorch's), where the warm route applies;
- geomstats' ``FrechetMean`` run to its own convergence (the issue's baseline, goal:
  the default within 1.2x of it);
- one full-batch pass on the LAPACK route (norms and clipped sum of every record's
  logarithm at geomstats' mean: one batched ``eigh`` of the whitened records), the
  unit of the ``passes`` columns: a fit's time in passes, and geomstats' in passes.

One row per route and fit seed (its steps, time, ratio to geomstats' fit and distance
to geomstats' converged mean), then one per route over the seeds: mean steps, time,
distance, the mean ratio (``value``) and the worst seed's (``worst_value``). The accuracy
comparison over data is on the page, docs/benchmarks/optimizers.md ("The Frechet mean's
step count").

On pytorch the warm-start kernels are compiled ahead (``torch_warm_logs.
compile_warm_logs``, its CPU time in ``compile_seconds``: loaded from inductor's on-disk
cache, or compiled the first time on a machine), so that "default" is their route.

Writes ``frechet_mean_steps.csv``; ``rerun(output_dir, backend)`` measures one backend
again, the others' rows kept.
"""

import json
import logging
import os
import subprocess
import sys
import time

import numpy as np

SEED = 0
FIT_SEEDS = tuple(range(8))
EPSILON, DELTA, CLIP_NORM = 1.0, 1e-5, 3.0
GOAL = 1.2
RUNS = (("numpy", 2000, 15), ("numpy", 100_000, 3), ("autograd", 100_000, 3),
        ("pytorch", 100_000, 3))


def size_rows(n_samples, repeats):
    """The rows at one sample size, on the active backend: one per route and fit seed,
    then one per route over the seeds (mean and worst ratio)."""
    import geomstats.backend as gs
    from geomstats.geometry.spd_matrices import SPDMatrices
    from geomstats.learning.frechet_mean import FrechetMean

    from benchmarks.speed_routes import _fastest, geomstats_iterations, on_route
    from geomstats_dp.learning import PrivateFrechetMean
    from geomstats_dp.optim import SquaredDistanceLoss, compiled_blocks, warm_logs
    from geomstats_dp.optim.losses import backend_name
    from geomstats_dp.optim.oracle import clipped_sum_in_chunks

    space = SPDMatrices(8)
    gs.random.seed(SEED)
    points = space.random_point(n_samples)
    geomstats = FrechetMean(space)
    iterations = geomstats_iterations(geomstats, points)
    target = geomstats.estimate_
    loss = SquaredDistanceLoss(space)
    data, weights = loss.check_data(points), gs.ones(n_samples) / n_samples
    fits = {}

    def private(seed):
        def fit():
            fits[seed] = PrivateFrechetMean(space, epsilon=EPSILON, delta=DELTA,
                                            clip_norm=CLIP_NORM, random_state=seed
                                            ).fit(points)
        return fit

    compile_seconds = ""
    if backend_name() == "pytorch":  # the warm kernels, compiled ahead in the process
        from geomstats_dp.optim.torch_warm_logs import compile_warm_logs

        start = time.process_time()
        compile_warm_logs(8)
        compile_seconds = time.process_time() - start
    routes = {"default": lambda call: call}
    if warm_logs.record_bases_for(loss, data) is not None:
        routes["LAPACK eigh every pass"] = lambda call: on_route(compiled_blocks, False, call)
    calls = {(route, seed): wrap(private(seed))
             for seed in FIT_SEEDS for route, wrap in routes.items()}
    calls["geomstats"] = lambda: geomstats.fit(points)
    calls["pass"] = lambda: clipped_sum_in_chunks(loss.gradient_sums(target), data,
                                                  weights, CLIP_NORM)
    logging.disable(logging.WARNING)  # geomstats' "maximum number of iterations reached"
    try:
        best = _fastest(calls, repeats)
    finally:
        logging.disable(logging.NOTSET)
    (baseline, baseline_wall), unit = map(float, best["geomstats"]), float(best["pass"][0])
    head = {"problem": f"SPD(8), {n_samples} points", "backend": backend_name()}
    common = {"baseline": f"geomstats FrechetMean (converged: {iterations} iterations)",
              "baseline_seconds": baseline, "goal": GOAL, "pass_seconds": unit,
              "baseline_passes": baseline / unit,
              "loadavg_1min": round(os.getloadavg()[0], 2), "compile_seconds": compile_seconds}
    rows = []
    for route in routes:
        seeds = []
        for seed in FIT_SEEDS:
            fit, (cpu, wall) = fits[seed], map(float, best[route, seed])
            seeds.append({
                "variant": route, "fit_seed": seed, "method": fit.method_,
                "n_steps": int(fit.n_iter_), "seconds": cpu, "value": cpu / baseline,
                "worst_value": cpu / baseline, "met": cpu / baseline <= GOAL,
                "wall_value": wall / baseline_wall,
                "error": float(space.metric.dist(fit.estimate_, target)),
                "passes": cpu / unit})
        over = {key: float(np.mean([row[key] for row in seeds]))
                for key in ("n_steps", "seconds", "value", "wall_value", "error", "passes")}
        worst = max(row["value"] for row in seeds)
        seeds.append({"variant": route, "fit_seed": f"{FIT_SEEDS[0]}-{FIT_SEEDS[-1]}",
                      "method": seeds[0]["method"], **over, "worst_value": worst,
                      "met": over["value"] <= GOAL})
        rows += [{**head, **row, **common} for row in seeds]
    return rows


def _child(n_samples, repeats):
    """Entry of a measuring process: print its rows as JSON."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        print(json.dumps(size_rows(n_samples, repeats)))


def measured(backend, n_samples, repeats):
    """The rows of one backend and size, measured in a fresh single-threaded process."""
    env = dict(os.environ, GEOMSTATS_BACKEND=backend, OMP_NUM_THREADS="1")
    script = ("import torch; torch.set_num_threads(1)\n" if backend == "pytorch" else "") + (
        f"import benchmarks.frechet_mean_steps as m; m._child({n_samples}, {repeats})")
    output = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                            text=True, check=True).stdout
    rows = json.loads(output.strip().splitlines()[-1])
    for row in rows:
        print(row, flush=True)
    return rows


def rerun(output_dir, backend):
    """Measure ``backend``'s runs again in ``frechet_mean_steps.csv``, the other
    backends' rows kept as they are."""
    from benchmarks.accounting import read_csv, write_csv

    path = output_dir / "frechet_mean_steps.csv"
    kept = [row for row in read_csv(path) if row["backend"] != backend]
    new = [row for name, n_samples, repeats in RUNS if name == backend
           for row in measured(name, n_samples, repeats)]
    keys = list(dict.fromkeys([*kept[0], *new[0]]))
    write_csv(path, [{key: row.get(key, "") for key in keys} for row in kept + new])


def run(output_dir, quick=False):
    """Write ``frechet_mean_steps[_quick].csv``."""
    from benchmarks.accounting import write_csv

    runs = (("numpy", 2000, 3),) if quick else RUNS
    rows = [row for backend, n_samples, repeats in runs
            for row in measured(backend, n_samples, repeats)]
    write_csv(output_dir / ("frechet_mean_steps_quick.csv" if quick
                            else "frechet_mean_steps.csv"), rows)
