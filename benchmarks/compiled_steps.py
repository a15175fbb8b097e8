"""The compiled blocks of DP-RSGD / DP-RGD steps on each space that has a kernel
(``optim.compiled_blocks``: SPD(2), SPD(n), the sphere) against the Python loop and a
minimal numpy step, timed in one run (numpy backend, BLAS single-threaded, the variants
interleaved and the fastest of several repeats kept, as ``speed_routes``).

- ``step_over_minimal``: a library DP-RSGD step of one record (``minimize``,
  ``MiniBatch(1)``, the default sampler) on S^783 and SPD(11), on the compiled route and
  on the Python loop, over the minimal numpy step of ``step_cost`` (closed-form log and
  exp, the clip, a tangent normal draw; goal <= 2).
- ``step_over_jax``: the same steps, and the minimal numpy step (CSV only), over the
  issue's JAX baseline timed in the same run and interleaved with them, the minimal step
  as a jitted ``lax.scan`` loop (``_step_cost_jax``; goal <= 1.5 on the numpy backend).
  Without JAX (the ``bench`` extra) a note is printed and these ratios are NaN.
- ``epoch_over_rgd_step``: one DP-RSGD epoch (n / b steps of batches of
  b = round(sqrt(n)), the weighted geodesic average) over one DP-RGD step, on 10,992
  SPD(2) covariances (the issue's row), 10,000 points of S^783 and 2,000 SPD(11)
  covariances, each route over its own step, and the compiled epoch over the loop's
  step (goal <= 3; DP-RGD on SPD(11) runs the loop on either route,
  ``compiled_blocks.compiled_block_runner``).
- ``kernel_first_call`` (CSV only): the first compiled run of a new process (importing
  numba, then compiling the kernel with an empty numba cache, or loading it from the
  cache a first process wrote) and its second run, over the same run on the loop.

Writes ``compiled_steps.csv`` (the columns of ``speed_routes.csv``) and
``compiled_steps.png``.
"""

import functools
import math

import numpy as np
from threadpoolctl import threadpool_limits

from benchmarks.accounting import write_csv
from benchmarks.speed_routes import _fastest, _row, new_process_rows, on_route, plot
from benchmarks.speed_routes import spd2_covariances as spd2_data
from benchmarks.step_cost import (
    CLIP_NORM,
    NOISE_STD,
    SPD_SIZE,
    SPHERE_DIM,
    STEP,
    minimal_spd_steps,
    minimal_sphere_steps,
    spd_data,
    sphere_data,
)

SEED = 0


def spaces():
    """name -> (space, kernel kind), the spaces of the rows."""
    from geomstats.geometry.hypersphere import Hypersphere
    from geomstats.geometry.spd_matrices import SPDMatrices

    return {"SPD(2)": (SPDMatrices(2), "spd2"), f"S^{SPHERE_DIM}": (Hypersphere(SPHERE_DIM),
                                                                     "sphere"),
            f"SPD({SPD_SIZE})": (SPDMatrices(SPD_SIZE), "spd")}


def library_run(space, data, strategy, n_steps, output="last"):
    """``minimize`` of the squared distance, from the canonical point."""
    from geomstats_dp.optim import InverseTimeStep, SquaredDistanceLoss, minimize

    step = STEP if output == "last" else InverseTimeStep(1.0, offset=2.0)
    return minimize(SquaredDistanceLoss(space), data, strategy, n_steps, step,
                    output=output, random_state=SEED, data_checked=True)


def step_rows(quick):
    """One-record DP-RSGD steps: compiled, loop, minimal and JAX scan, per step."""
    from benchmarks import _step_cost_jax
    from geomstats_dp.optim import MiniBatch, SquaredDistanceLoss, compiled_blocks

    if not _step_cost_jax.available():
        print("  JAX is not installed (the bench extra): the step_over_jax rows are NaN",
              flush=True)
    found = []
    for name, data, minimal, n_steps in (
            (f"S^{SPHERE_DIM}", sphere_data(), minimal_sphere_steps, 400 if quick else 4000),
            (f"SPD({SPD_SIZE})", spd_data(), minimal_spd_steps, 100 if quick else 1000)):
        space, kind = spaces()[name]
        data = SquaredDistanceLoss(space).check_data(data)
        compiled_blocks.compiled_kernel(kind)  # loaded up front: runs of any length
        run = functools.partial(library_run, space, data, MiniBatch(1, CLIP_NORM, NOISE_STD),
                                n_steps)
        calls = {"compiled": on_route(compiled_blocks, True, run),
                 "loop": on_route(compiled_blocks, False, run),
                 "minimal": lambda data=data, minimal=minimal, n_steps=n_steps: minimal(
                     data, n_steps, np.random.default_rng(SEED))}
        if _step_cost_jax.available():  # compiled before the timing
            calls["jax"] = functools.partial(_step_cost_jax.loop(data, n_steps, kind), SEED)
            print(f"  {name}: JAX scan's end point within "
                  f"{_step_cost_jax.check(data, kind):.1e} of the numpy loop's", flush=True)
        best = {key: value / n_steps for key, value in
                _fastest(calls, 3 if quick else 9).items()}
        best.setdefault("jax", np.full(2, math.nan))
        problem = f"{name}, one record per step"
        for route in ("compiled", "loop"):
            found.append(_row("step_over_minimal", problem, f"DP-RSGD step ({route})",
                              best[route], "the minimal numpy step", best["minimal"], 2.0))
        for key, variant, goal in (("compiled", "DP-RSGD step (compiled)", 1.5),
                                   ("loop", "DP-RSGD step (loop)", 1.5),
                                   ("minimal", "the minimal numpy step", None)):
            found.append(_row("step_over_jax", problem, variant, best[key],
                              "the JAX lax.scan step", best["jax"], goal))
    return found


def epoch_rows(quick):
    """One DP-RSGD epoch (b = sqrt(n)) over one DP-RGD step, on both routes."""
    from geomstats_dp.optim import (
        FullBatch,
        MiniBatch,
        SquaredDistanceLoss,
        compiled_blocks,
    )

    sizes = {"SPD(2)": (spd2_data, 1000 if quick else 10_992),
             f"S^{SPHERE_DIM}": (sphere_data, 1000 if quick else 10_000),
             f"SPD({SPD_SIZE})": (spd_data, 300 if quick else 2000)}
    found = []
    for name, (make, n_samples) in sizes.items():
        space, kind = spaces()[name]
        data = SquaredDistanceLoss(space).check_data(make(n_samples))
        batch = round(math.sqrt(n_samples))
        sigma = 0.5 * 2 * CLIP_NORM / batch  # noise multiplier 0.5; the cost is sigma-free
        compiled_blocks.compiled_kernel(kind)
        epoch = functools.partial(library_run, space, data, MiniBatch(batch, CLIP_NORM, sigma),
                                  n_samples // batch, output="weighted_average")
        step = functools.partial(library_run, space, data, FullBatch(CLIP_NORM, sigma), 1)
        calls = {f"{what} ({route})": on_route(compiled_blocks, route == "compiled", call)
                 for route in ("compiled", "loop")
                 for what, call in (("rsgd_epoch", epoch), ("rgd_step", step))}
        if kind == "spd":  # DP-RGD on SPD(n), n >= 3, runs the loop on either route
            calls.pop("rgd_step (compiled)")
        best = _fastest(calls, 3 if quick else 11)
        problem = (f"{name}, {n_samples} points, b = {batch}, {n_samples // batch} steps "
                   "per epoch")
        pairs = (("compiled", "compiled"), ("loop", "loop"), ("compiled", "loop"))
        for epoch_route, step_route in pairs[1:] if kind == "spd" else pairs:
            found.append(_row(
                "epoch_over_rgd_step", problem, f"rsgd_epoch ({epoch_route})",
                best[f"rsgd_epoch ({epoch_route})"], f"one DP-RGD step ({step_route})",
                best[f"rgd_step ({step_route})"], 3.0))
    return found


FIRST_CALL = """
import time
import numpy as np
from benchmarks.compiled_steps import spaces
from benchmarks.step_cost import spd_data, sphere_data
from benchmarks.speed_routes import spd2_covariances
from geomstats_dp.optim import MiniBatch, SquaredDistanceLoss, compiled_blocks, minimize
space, kind = spaces()[{name!r}]
loss = SquaredDistanceLoss(space)
data = loss.check_data({make}(50))
def call(enabled):
    compiled_blocks.ENABLED = enabled
    start = np.array([time.process_time(), time.perf_counter()])
    minimize(loss, data, MiniBatch(7, 1.0, 0.1), compiled_blocks.MIN_STEPS_TO_LOAD, 0.05,
             random_state=0)
    return np.array([time.process_time(), time.perf_counter()]) - start
print(*call(True), *call(True), *call(False))
"""


def first_call_rows():
    """The first ``MIN_STEPS_TO_LOAD``-step run of a new process on each new kernel."""
    from geomstats_dp.optim.compiled_blocks import MIN_STEPS_TO_LOAD

    found = []
    for name, make in ((f"S^{SPHERE_DIM}", "sphere_data"),
                       (f"SPD({SPD_SIZE})", "spd_data")):
        found += new_process_rows(
            "kernel_first_call", f"{MIN_STEPS_TO_LOAD} DP-RSGD steps, 50 {name} records, b = 7",
            FIRST_CALL.format(name=name, make=make), "call",
            "the same call on the Python loop")
    return found


def run(output_dir, quick=False):
    """Write ``compiled_steps[_quick].csv`` and ``.png``. The kernels this loads are
    unloaded after (``python -m benchmarks`` runs every benchmark in one process: the
    later ones see the routes they would see alone)."""
    from geomstats_dp.optim import compiled_blocks

    loaded = dict(compiled_blocks._KERNELS)
    try:
        with threadpool_limits(limits=1):
            found = step_rows(quick) + epoch_rows(quick)
    finally:
        compiled_blocks._KERNELS.clear()
        compiled_blocks._KERNELS.update(loaded)
    found += [] if quick else first_call_rows()
    path = output_dir / ("compiled_steps_quick" if quick else "compiled_steps")
    plot(path.with_suffix(".png"), found)
    write_csv(path.with_suffix(".csv"), found)
