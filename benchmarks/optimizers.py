"""Optimisers: DP-RGD vs DP-RSGD vs DP-RSVRG (Utpala et al. (2023), Figure 3) and DP-RGD's overhead.

Two measurements, both in one run:

* Utility against gradient complexity. For each epsilon in {0.1, 0.3, 0.5} (delta = 1e-6)
  and five seeds, ``PrivateFrechetMean`` is fitted with each method over a small grid of
  ``n_iter`` values; every fit is (epsilon, delta)-DP on its own (the estimator
  recalibrates the noise for its ``n_iter``). Recorded: the per-sample gradient
  evaluations (IFO calls, ``n_gradient_evaluations_``) and the excess empirical risk
  F(x_priv) - F(x*), F(x) = mean_i d(x, z_i)^2 / 2, x* from ``exact_frechet_mean``.
  Two datasets:

  - ``emg``: the 3,898 EMG covariances of all four gestures, SPD(8) with the
    affine-invariant metric, public clip norm C = 5 (the identity start is at distance
    4.9 from the mean; 99% of the data lie within 4.8 of the mean);
  - ``tree``: a random hierarchy of 1,273 nodes embedded in the hyperbolic plane H^2
    (hyperboloid model) by depth and subtree angles, its root moved to distance 1 from
    the start point (``tree_points``); C = 4.5, the data radius around the start point.

  Every method runs with the estimator's default step schedule, and at a rescaled one
  (``VARIANTS``, ``step_size_for``): DP-RGD at twice its default step and DP-RSVRG at
  half (step-sensitivity checks), DP-RSGD with eta_t = 1/(t + sigma sqrt(d)) (an
  alternative offset to the default 1/(t + 1/s^2)).
  A diverged run (non-finite excess risk, or a fit whose eigendecomposition failed,
  recorded as an infinite excess risk) is kept in the CSV and left out of the means.
* Time of a warm (calibration cached) and a cold (caches cleared) DP-RGD fit against
  geomstats' ``FrechetMean`` run for the same number of iterations (no early stop, same
  step size), on the EMG data and on 1,000 von Mises-Fisher points of S^2; medians of
  interleaved repetitions (process CPU time and wall clock), and a cProfile breakdown of
  the warm private fit.

BLAS runs single-threaded (threadpoolctl), as in the sampling benchmark.
"""

import cProfile
import logging
import math
import pstats
import sys
import time
from dataclasses import dataclass

import geomstats.backend as gs
import numpy as np
from geomstats.geometry.hyperboloid import Hyperboloid
from geomstats.geometry.hypersphere import Hypersphere
from geomstats.geometry.spd_matrices import SPDMatrices
from geomstats.learning.frechet_mean import FrechetMean
from threadpoolctl import threadpool_limits

from benchmarks.accounting import timed, write_csv
from geomstats_dp._backend import to_numpy
from geomstats_dp.datasets import load_emg_covariances
from geomstats_dp.learning import PrivateFrechetMean, _defaults
from geomstats_dp.learning.reference import exact_frechet_mean
from geomstats_dp.learning._gradient_plan import plan_gradient_release
from geomstats_dp.optim import ConstantStep, InverseTimeStep
from geomstats_dp.privacy import calibrate_gaussian

DELTA = 1e-6
# Curves: name -> (estimator method, label, colour, line style). A plain method name is
# the estimator's default step schedule; the others rescale it (``step_size_for``). An
# epoch of DP-RSVRG moves about as far as one DP-RGD step of m times its step, so DP-RGD
# at twice its default meets DP-RSVRG's default, and DP-RSVRG at half meets DP-RGD's.
VARIANTS = {
    "rgd": ("rgd", "DP-RGD (default step)", "tab:blue", "o-"),
    "rgd_x2": ("rgd", "DP-RGD (2 x default step)", "tab:blue", "s--"),
    "rsgd": ("rsgd", "DP-RSGD (default step)", "tab:orange", "s--"),
    "rsgd_offset": ("rsgd", "DP-RSGD (step 1/(t + noise norm))", "tab:orange", "o-"),
    "rsvrg": ("rsvrg", "DP-RSVRG (default step)", "tab:green", "s--"),
    "rsvrg_half": ("rsvrg", "DP-RSVRG (default step / 2)", "tab:green", "o-"),
}
COMPARABLE_FACTOR = 2.0  # "comparable" excess risk: within this factor of the best mean
TIMING_EPSILON = 0.5
TARGET_RATIO = 1.5


@dataclass(frozen=True)
class Settings:
    """Sizes of one run (full or quick)."""

    epsilons: tuple
    seeds: tuple
    rgd_iters: tuple  # steps
    rsgd_fractions: tuple  # steps as fractions of n
    rsvrg_epochs: tuple
    emg_gesture: object  # None: all gestures
    tree_depth: int
    tree_seed: int
    timing_repeats: dict  # dataset -> warm repetitions
    cold_repeats: int
    profile_fits: dict  # dataset -> warm fits profiled


FULL = Settings(
    epsilons=(0.1, 0.3, 0.5),
    seeds=(0, 1, 2, 3, 4),
    rgd_iters=(1, 2, 4, 8, 16, 32),
    rsgd_fractions=(1 / 16, 1 / 4, 1.0),
    rsvrg_epochs=(1, 2, 4, 8),
    emg_gesture=None,
    tree_depth=7,
    tree_seed=1,
    timing_repeats={"emg": 9, "sphere": 201},
    cold_repeats=3,
    profile_fits={"emg": 3, "sphere": 50},
)
QUICK = Settings(
    epsilons=(0.5,),
    seeds=(0, 1),
    rgd_iters=(1, 4),
    rsgd_fractions=(1 / 16, 1 / 4),
    rsvrg_epochs=(1, 2),
    emg_gesture="rock",
    tree_depth=5,
    tree_seed=0,
    timing_repeats={"emg": 3, "sphere": 11},
    cold_repeats=1,
    profile_fits={"emg": 1, "sphere": 10},
)


@dataclass(frozen=True)
class Problem:
    """A Frechet-mean problem: data, public clip norm, and its exact solution."""

    name: str
    space: object
    points: object
    clip_norm: float
    optimum_risk: float

    @property
    def n_samples(self):
        """Number of data points n."""
        return int(self.points.shape[0])

    def risk(self, point):
        """F(x) = mean_i d(x, z_i)^2 / 2."""
        return empirical_risk(self.space, self.points, point)


def empirical_risk(space, points, point):
    """F(x) = mean_i d(x, z_i)^2 / 2."""
    return float(np.mean(to_numpy(space.metric.squared_dist(points, point)))) / 2


def make_problem(name, space, points, clip_norm):
    """A Problem with F(x*) from the converged reference solver."""
    optimum_risk = empirical_risk(space, points, exact_frechet_mean(space, points))
    return Problem(name, space, points, clip_norm, optimum_risk)


def emg_problem(settings):
    """EMG covariances (all gestures, or one in quick runs), SPD(8), C = 5."""
    covariances, _ = load_emg_covariances(gesture=settings.emg_gesture)
    return make_problem("emg", SPDMatrices(8), covariances, clip_norm=5.0)


def tree_points(depth, radius_step=0.5, max_children=4, root_offset=1.0, seed=0):
    """A random hierarchy embedded in H^2 by depth (radius) and subtree sizes (angles).

    Every node above ``depth`` gets 1 to ``max_children`` children (numpy generator
    ``seed``). A node at depth k sits at hyperbolic distance k * ``radius_step`` from the
    root; the root owns the angles [0, 2 pi), each node splits its interval among its
    children in proportion to their subtree sizes and sits at the middle of its own
    interval. This balanced layout puts the Frechet mean within 0.01 of the root, so the
    tree is then moved by a Lorentz boost that takes the root from the apex (the start
    point of the optimisers) to distance ``root_offset`` along the first axis.

    Returns
    -------
    points : numpy.ndarray, shape=[n_nodes, 3]
        Hyperboloid coordinates; every node lies within depth * radius_step +
        root_offset of the apex.
    """
    rng = np.random.default_rng(seed)
    children, depths, frontier = [[]], [0], [0]
    for level in range(1, depth + 1):
        next_frontier = []
        for parent in frontier:
            for _ in range(int(rng.integers(1, max_children + 1))):
                children.append([])
                depths.append(level)
                children[parent].append(len(depths) - 1)
                next_frontier.append(len(depths) - 1)
        frontier = next_frontier
    sizes = np.ones(len(depths))
    for node in reversed(range(len(depths))):  # children have larger indices
        sizes[node] += sum(sizes[child] for child in children[node])
    starts, widths = np.zeros(len(depths)), np.zeros(len(depths))
    widths[0] = 2 * np.pi
    for node, node_children in enumerate(children):
        start = starts[node]
        for child in node_children:
            widths[child] = widths[node] * sizes[child] / (sizes[node] - 1)
            starts[child], start = start, start + widths[child]
    radii, angles = radius_step * np.array(depths), starts + widths / 2
    around_apex = np.stack(
        [np.cosh(radii), np.sinh(radii) * np.cos(angles), np.sinh(radii) * np.sin(angles)],
        axis=1,
    )
    cosh, sinh = np.cosh(root_offset), np.sinh(root_offset)
    boost = np.array([[cosh, sinh, 0.0], [sinh, cosh, 0.0], [0.0, 0.0, 1.0]])
    return around_apex @ boost.T


def tree_problem(settings, radius_step=0.5, root_offset=1.0):
    """The embedded hierarchy on the hyperboloid H^2; C = its radius around the apex."""
    points = gs.array(tree_points(settings.tree_depth, radius_step, root_offset=root_offset,
                                  seed=settings.tree_seed))
    clip_norm = settings.tree_depth * radius_step + root_offset
    return make_problem("tree", Hyperboloid(2), points, clip_norm)


def default_schedule(problem, method, epsilon, n_iter):
    """The estimator's default step schedule for one run, and its noise standard deviations.

    Rebuilt from the same calibration the estimator runs (cached, so the fit that follows
    does not pay for it twice).
    """
    n_samples, clip_norm = problem.n_samples, problem.clip_norm
    inner_steps = _defaults.default_inner_steps(n_samples)
    plan = plan_gradient_release(
        method, epsilon, DELTA, n_samples, n_iter, clip_norm,
        _defaults.default_batch_size(n_samples), inner_steps,
        _defaults.SVRG_SINGLE_CLIP_RATIO * clip_norm,
    )
    noise_stds = plan.strategy.noise_stds
    schedule = _defaults.default_step_size(
        method, inner_steps, clip_norm, noise_stds, int(problem.space.dim))
    return schedule, noise_stds


def step_size_for(variant, problem, epsilon, n_iter):
    """The step a curve passes to the estimator (None: the estimator's default).

    - "rgd_x2", "rsvrg_half": the default constant step times 2 or 1/2;
    - "rsgd_offset": eta_t = 1 / (t + t0), t0 = max(1, sigma sqrt(d)) the expected norm
      of one step's noise, against the default eta_t = 1 / (t + 1/s^2)
      (s = C / sqrt(C^2 + d sigma^2)). Both depend on public quantities only.
    """
    method = VARIANTS[variant][0]
    if variant == method:
        return None
    schedule, noise_stds = default_schedule(problem, method, epsilon, n_iter)
    if variant == "rsgd_offset":
        noise_norm = noise_stds[0] * math.sqrt(problem.space.dim)
        return InverseTimeStep(1.0, offset=max(1.0, noise_norm))
    return ConstantStep(schedule.value * (2.0 if variant == "rgd_x2" else 0.5))


def n_iter_grid(settings, method, n_samples):
    """The n_iter values swept for the estimator ``method``."""
    if method == "rgd":
        return settings.rgd_iters
    if method == "rsgd":
        return tuple(max(1, round(fraction * n_samples)) for fraction in settings.rsgd_fractions)
    return settings.rsvrg_epochs


def fit_private(problem, variant, epsilon, n_iter, seed):
    """One (epsilon, delta)-DP fit of a curve's estimator; (estimator, seconds, failure).

    (None, nan, the error) when the fit breaks down numerically (an iterate so far out
    that an eigendecomposition fails, or that geomstats cannot project it back onto the
    hyperboloid): a diverged run.
    """
    estimator = PrivateFrechetMean(
        problem.space, epsilon=epsilon, delta=DELTA, method=VARIANTS[variant][0],
        clip_norm=problem.clip_norm, n_iter=n_iter,
        step_size=step_size_for(variant, problem, epsilon, n_iter), random_state=seed,
    )
    try:
        return (*timed(lambda: estimator.fit(problem.points)), "")
    except (np.linalg.LinAlgError, ValueError) as error:
        return None, math.nan, f"{type(error).__name__}: {error}"


def utility_rows(problem, settings):
    """One row per fit: excess risk and IFO calls."""
    rows = []
    for epsilon in settings.epsilons:
        for method in VARIANTS:
            for n_iter in n_iter_grid(settings, VARIANTS[method][0], problem.n_samples):
                for seed in settings.seeds:
                    fitted, seconds, failure = fit_private(
                        problem, method, epsilon, n_iter, seed)
                    diverged = fitted is None
                    rows.append({
                        "dataset": problem.name, "n_samples": problem.n_samples,
                        "method": method, "epsilon": epsilon, "seed": seed,
                        "n_iter": n_iter, "n_steps": "" if diverged else fitted.n_iter_,
                        "ifo": "" if diverged else fitted.n_gradient_evaluations_,
                        "excess_risk": math.inf if diverged else
                        problem.risk(fitted.estimate_) - problem.optimum_risk,
                        "seconds": round(seconds, 4),
                        "first_seed_of_config": seed == settings.seeds[0],
                        "failure": failure,
                    })
                mean = np.mean([row["excess_risk"] for row in rows[-len(settings.seeds):]])
                print(f"  {problem.name} eps={epsilon} {method} n_iter={n_iter}: "
                      f"mean excess {mean:.4g}", flush=True)
    return rows


def curves(rows):
    """(dataset, epsilon, method) -> list of (ifo, mean, standard error, min, max) over the
    seeds whose run did not diverge, sorted by IFO calls."""
    grouped = {}
    for row in rows:
        key = (row["dataset"], row["epsilon"], row["method"])
        values = grouped.setdefault(key, {}).setdefault(row["ifo"], [])
        if math.isfinite(row["excess_risk"]):
            values.append(row["excess_risk"])
    return {
        key: sorted(
            (ifo, np.mean(v), np.std(v, ddof=1) / math.sqrt(len(v)) if len(v) > 1 else 0.0,
             np.min(v), np.max(v))
            for ifo, v in by_ifo.items() if v
        )
        for key, by_ifo in grouped.items()
    }


def summary_rows(rows):
    """Best mean excess risk per dataset/epsilon/method, and the IFO calls to a comparable one.

    "Comparable": a mean excess risk within ``COMPARABLE_FACTOR`` of the best mean of all
    methods at that epsilon; ``ifo_to_comparable`` is the fewest IFO calls on the grid
    reaching it (empty when never reached).
    """
    all_curves = curves(rows)
    summary = []
    for (dataset, epsilon, method), curve in sorted(all_curves.items()):
        best_all = min(
            point[1] for key, other in all_curves.items()
            if key[:2] == (dataset, epsilon) for point in other
        )
        best = min(curve, key=lambda point: point[1])
        reached = [point[0] for point in curve if point[1] <= COMPARABLE_FACTOR * best_all]
        summary.append({
            "dataset": dataset, "epsilon": epsilon, "method": method,
            "best_mean_excess_risk": best[1], "standard_error_at_best": best[2],
            "min_at_best": best[3], "max_at_best": best[4], "ifo_at_best": best[0],
            "best_of_all_methods": best_all,
            "ifo_to_comparable": min(reached) if reached else "",
            "diverged_runs": sum(
                1 for row in rows
                if (row["dataset"], row["epsilon"], row["method"]) == (dataset, epsilon, method)
                and not math.isfinite(row["excess_risk"])
            ),
        })
    return summary


def sphere_points(n_samples=1000, kappa=10.0):
    """von Mises-Fisher sample on S^2 (geomstats' sampler, seeded)."""
    gs.random.seed(0)
    return Hypersphere(2).random_von_mises_fisher(kappa=kappa, n_samples=n_samples)


def timing_problems(emg):
    """The problems timed: the EMG data and the sphere sample (C = pi, the diameter)."""
    return [emg, make_problem("sphere", Hypersphere(2), sphere_points(), math.pi)]


def private_fit(problem, seed=0):
    """Fit a default DP-RGD estimator; returns it."""
    return PrivateFrechetMean(
        problem.space, epsilon=TIMING_EPSILON, delta=DELTA, method="rgd",
        clip_norm=problem.clip_norm, random_state=seed,
    ).fit(problem.points)


def geomstats_fit(problem, n_iter, step_size):
    """geomstats' FrechetMean for exactly ``n_iter`` iterations from ``step_size``."""
    estimator = FrechetMean(problem.space)
    estimator.optimizer.max_iter = n_iter
    estimator.optimizer.epsilon = 0.0
    estimator.optimizer.init_step_size = step_size
    return estimator.fit(problem.points)


def clear_calibration_caches():
    """Forget every cached calibration and RDP curve of ``geomstats_dp.privacy``."""
    for name, module in list(sys.modules.items()):
        if name.startswith("geomstats_dp.privacy") and module is not None:
            for value in vars(module).values():
                if callable(getattr(value, "cache_clear", None)):
                    value.cache_clear()


def wall_and_cpu(function):
    """(wall-clock seconds, process CPU seconds) of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    function()
    return time.perf_counter() - wall, time.process_time() - cpu


def timing_rows(emg, settings):
    """Warm and cold private-fit times against geomstats, interleaved.

    Medians of wall-clock and of process CPU time, and wall-clock minima. On the shared
    machine a fit of a few milliseconds is often descheduled for a whole time slice,
    which inflates wall-clock medians by several milliseconds at random; CPU time does not
    count that, so the target is judged on CPU-time medians. The cold fits run after
    clearing every calibration cache; ``calibration_cold_s`` times the cold calibration
    of the same run alone.
    """
    rows = []
    for problem in timing_problems(emg):
        n_iter = private_fit(problem).n_iter_
        step_size = default_schedule(problem, "rgd", TIMING_EPSILON, n_iter)[0].value
        times = {"warm": [], "geomstats": [], "cold": [], "calibration": []}
        for repeat in range(settings.timing_repeats[problem.name]):
            times["warm"].append(wall_and_cpu(
                lambda: private_fit(problem, repeat)))
            times["geomstats"].append(wall_and_cpu(
                lambda: geomstats_fit(problem, n_iter, step_size)))
        for repeat in range(settings.cold_repeats):
            clear_calibration_caches()
            times["calibration"].append(wall_and_cpu(
                lambda: calibrate_gaussian(TIMING_EPSILON, DELTA, n_iter)))
            clear_calibration_caches()
            times["cold"].append(wall_and_cpu(
                lambda: private_fit(problem, repeat)))
        wall = {key: np.array(values)[:, 0] for key, values in times.items()}
        cpu = {key: float(np.median(np.array(values)[:, 1])) for key, values in times.items()}
        ratio = cpu["warm"] / cpu["geomstats"]
        rows.append({
            "dataset": problem.name, "n_samples": problem.n_samples, "method": "rgd",
            "epsilon": TIMING_EPSILON, "n_iter": n_iter, "step_size": step_size,
            "private_warm_cpu_s": cpu["warm"], "private_cold_cpu_s": cpu["cold"],
            "geomstats_cpu_s": cpu["geomstats"], "calibration_cold_cpu_s": cpu["calibration"],
            "ratio_warm_cpu": ratio, "ratio_cold_cpu": cpu["cold"] / cpu["geomstats"],
            "private_warm_wall_s": float(np.median(wall["warm"])),
            "geomstats_wall_s": float(np.median(wall["geomstats"])),
            "ratio_warm_wall": float(np.median(wall["warm"]) / np.median(wall["geomstats"])),
            "ratio_warm_wall_min": float(wall["warm"].min() / wall["geomstats"].min()),
            "target": TARGET_RATIO, "met_warm_cpu": ratio <= TARGET_RATIO,
            "repeats_warm": len(times["warm"]), "repeats_cold": len(times["cold"]),
        })
        print(f"  timing {problem.name}: private {cpu['warm']:.4g} s CPU (cold "
              f"{cpu['cold']:.4g} s), geomstats {cpu['geomstats']:.4g} s, ratio {ratio:.2f} "
              f"(wall medians {rows[-1]['ratio_warm_wall']:.2f}, wall minima "
              f"{rows[-1]['ratio_warm_wall_min']:.2f})", flush=True)
    return rows


# Where a private fit's time goes: (category, file suffix, function, caller file suffix or
# None), cumulative times; the clipping row is clipped_sum minus the gradients inside it.
PROFILE_PARTS = (
    ("calibration", "learning/_gradient_plan.py", "plan_gradient_release", None),
    ("budget accounting", "privacy/budget.py", "check", None),
    ("budget accounting", "privacy/budget.py", "spend", None),
    ("input validation", "learning/_data.py", "check_shape", None),
    ("input validation", "learning/_data.py", "check_values", None),
    ("input validation", "optim/losses.py", "check_data", None),
    ("input validation", "optim/initial_point.py", "check_init_point", None),
    ("input validation", "optim/initial_point.py", "canonical_point", "learning/frechet_mean.py"),
    ("per-sample gradients", "optim/losses.py", "gradients", None),
    ("clipping and weighted sum", "optim/oracle.py", "clipped_sum", None),
    ("noise sampling", "optim/oracle.py", "add_noise", None),
    ("exponential map", None, "exp", "optim/loop.py"),
)
OTHER_PART = ("other", "loop, schedule, output tracker, estimator")


def _cumulative(stats, file_suffix, function, caller_suffix):
    """Cumulative seconds of matching functions (only through calls from ``caller_suffix``)."""
    total = 0.0
    for (filename, _, name), (_, _, _, cumtime, callers) in stats.stats.items():
        if name != function or (file_suffix and not filename.endswith(file_suffix)):
            continue
        if caller_suffix is None:
            total += cumtime
        else:
            total += sum(entry[3] for caller, entry in callers.items()
                         if caller[0].endswith(caller_suffix))
    return total


def profile_rows(emg, settings):
    """cProfile breakdown of warm DP-RGD fits: seconds per fit and share, per function."""
    rows = []
    for problem in timing_problems(emg):
        private_fit(problem)  # warm the calibration cache
        n_fits = settings.profile_fits[problem.name]
        profiler = cProfile.Profile()
        profiler.enable()
        for seed in range(n_fits):
            private_fit(problem, seed)
        profiler.disable()
        stats = pstats.Stats(profiler)
        total = _cumulative(stats, "learning/frechet_mean.py", "fit", None)
        parts = {(category, function): _cumulative(stats, file_suffix, function, caller)
                 for category, file_suffix, function, caller in PROFILE_PARTS}
        parts[("clipping and weighted sum", "clipped_sum")] -= parts[
            ("per-sample gradients", "gradients")]
        parts[OTHER_PART] = total - sum(parts.values())
        for (category, function), seconds in parts.items():
            rows.append({"dataset": problem.name, "category": category, "function": function,
                         "seconds_per_fit": seconds / n_fits, "share": seconds / total})
    return rows


def plot(path, problem_name, rows, settings):
    """Log excess risk vs log IFO calls, one panel per epsilon, mean +- standard error."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter

    all_curves = curves(rows)
    n_panels = len(settings.epsilons)
    fig, axes = plt.subplots(1, n_panels, figsize=(4.6 * n_panels, 3.8), squeeze=False)
    for axis, epsilon in zip(axes.flat, settings.epsilons):
        for method, (_, label, colour, style) in VARIANTS.items():
            curve = all_curves.get((problem_name, epsilon, method))
            if not curve:
                continue
            ifo, mean, error = (np.array(values) for values in list(zip(*curve))[:3])
            axis.plot(ifo, mean, style, color=colour, label=label)
            axis.fill_between(ifo, mean - error, mean + error, color=colour, alpha=0.2)
        axis.set_xscale("log")
        axis.set_yscale("log", nonpositive="clip")
        axis.xaxis.set_minor_formatter(NullFormatter())
        axis.set_title(f"epsilon = {epsilon}, delta = {DELTA:g}")
        axis.set_xlabel("IFO calls (per-sample gradients)")
        axis.set_ylabel("excess risk F(x) - F(x*)")
        axis.grid(True, which="both", alpha=0.3)
    axes.flat[0].legend(fontsize=8)
    fig.suptitle(f"{problem_name}: mean over {len(settings.seeds)} seeds, band +- one "
                 "standard error",
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def run(output_dir, quick=False):
    """Run the benchmark; write ``optimizers[_quick]_*.csv`` and one plot per dataset."""
    settings = QUICK if quick else FULL
    prefix = "optimizers_quick" if quick else "optimizers"
    start = time.perf_counter()
    logging.disable(logging.WARNING)  # geomstats' "maximum number of iterations reached"
    try:
        with threadpool_limits(limits=1, user_api="blas"):
            problems = [emg_problem(settings), tree_problem(settings)]
            runs = []
            for problem in problems:
                print(f"utility: {problem.name} (n = {problem.n_samples}, "
                      f"F* = {problem.optimum_risk:.4g})", flush=True)
                runs += utility_rows(problem, settings)
            timing = timing_rows(problems[0], settings)
            profile = profile_rows(problems[0], settings)
    finally:
        logging.disable(logging.NOTSET)
    summary = summary_rows(runs)
    write_csv(output_dir / f"{prefix}_runs.csv", runs)
    write_csv(output_dir / f"{prefix}_summary.csv", summary)
    write_csv(output_dir / f"{prefix}_timing.csv", timing)
    write_csv(output_dir / f"{prefix}_profile.csv", profile)
    for problem in problems:
        plot(output_dir / f"{prefix}_{problem.name}.png", problem.name, runs, settings)
    for row in summary:
        print(f"  {row['dataset']} eps={row['epsilon']} {VARIANTS[row['method']][1]}: best "
              f"{row['best_mean_excess_risk']:.4g} at {row['ifo_at_best']} IFO; comparable "
              f"from {row['ifo_to_comparable'] or 'never'}")
    print(f"optimizers benchmark: {time.perf_counter() - start:.0f} s", flush=True)
