"""Tangent-Gaussian sampling: Utpala et al.'s (2023) Figure 1 and Table 2, plus batch throughput.

Three measurements, all through ``TangentGaussian(space, method=...)`` and all timed in the
same run (ratios never mix runs):

* Figure 1: seconds per sample (one draw at one base point per call) of the closed-form
  transport against the explicit-basis, Gram-Schmidt and Metropolis-Hastings baselines, on
  SPD(m) (three metrics), the sphere, hyperboloid and Poincare ball (ambient size m) and
  Stiefel / Grassmann (m, r). Each value is the mean over 5 random base points of the
  median time of repeated calls. A baseline is skipped where one sample is estimated (by
  extrapolating its measured scaling in m, from smaller sizes, "pilot" sizes included) to
  take over a minute, where its basis would not fit in memory, or where it would overrun
  the method's share of the run-time cap; the row keeps the estimate and the reason.
* Throughput: 10^4 draws at one base point in one call against 10^4 single calls.
* Table 2: the cost of one DP-RSGD step (stochastic Riemannian gradient, noise draw,
  exponential map) against the plain step, for the SPD(11) Frechet mean and the leading
  eigenvector on S^783 (digits images upsampled to 28 x 28).

BLAS and OpenMP run single-threaded (threadpoolctl): on a shared 2-core machine their
threads otherwise contend and inflate small LAPACK calls by up to 1000x.
"""

import csv
import math
import os
import time
from dataclasses import dataclass

import geomstats.backend as gs
import numpy as np
from geomstats.geometry.grassmannian import Grassmannian
from geomstats.geometry.hyperboloid import Hyperboloid
from geomstats.geometry.hypersphere import Hypersphere
from geomstats.geometry.poincare_ball import PoincareBall
from geomstats.geometry.spd_matrices import (
    SPDAffineMetric,
    SPDBuresWassersteinMetric,
    SPDLogEuclideanMetric,
    SPDMatrices,
)
from geomstats.geometry.stiefel import Stiefel
from threadpoolctl import threadpool_limits

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.distributions import TangentGaussian

METHODS = ("transport", "explicit_basis", "gram_schmidt", "mcmc")
ONE_MINUTE = 60.0
N_BASE_POINTS = 5
MEMORY_CAP_BYTES = 2 * 1024**3
FLOAT_BYTES = 8
WARM_UP_BELOW_S = 1.0
BATCH_REPEATS = 3


@dataclass(frozen=True)
class Panel:
    """One panel of Figure 1: a family of spaces indexed by the size m."""

    name: str
    make_space: object
    sizes: tuple
    pilot_sizes: tuple = ()


@dataclass(frozen=True)
class Settings:
    """Sizes and time budgets of a full or a quick run."""

    spd_sizes: tuple
    quadric_sizes: tuple
    quadric_pilots: tuple
    frame_sizes: tuple
    frame_pilots: tuple
    ranks: tuple
    method_budget_s: dict
    point_budget_s: float
    throughput_draws: int
    throughput_spaces: tuple
    rsgd_budget_s: float
    rsgd_rounds: int


FULL = Settings(
    spd_sizes=(5, 10, 20, 30, 50),
    quadric_sizes=(250, 500, 1000, 1500, 2000),
    quadric_pilots=(50, 100),
    frame_sizes=(100, 250, 500, 750, 1000),
    frame_pilots=(30, 50),
    ranks=(10, 20),
    method_budget_s={
        "transport": 15.0,
        "explicit_basis": 40.0,
        "gram_schmidt": 15.0,
        "mcmc": 15.0,
    },
    point_budget_s=0.1,
    throughput_draws=10_000,
    throughput_spaces=(("SPD(10) affine", 10), ("S^999", 999)),
    rsgd_budget_s=0.5,
    rsgd_rounds=6,
)
QUICK = Settings(
    spd_sizes=(3, 5),
    quadric_sizes=(50, 100),
    quadric_pilots=(),
    frame_sizes=(12, 20),
    frame_pilots=(),
    ranks=(4,),
    method_budget_s={"transport": 0.5, "explicit_basis": 1.0, "gram_schmidt": 0.5, "mcmc": 0.5},
    point_budget_s=0.005,
    throughput_draws=500,
    throughput_spaces=(("SPD(10) affine", 10), ("S^999", 999)),
    rsgd_budget_s=0.05,
    rsgd_rounds=1,
)


def _spd(metric_class):
    def make(size):
        space = SPDMatrices(size, equip=False)
        space.equip_with_metric(metric_class)
        return space

    return make


def _panels(settings):
    """The panels of Figure 1 for a run's settings."""
    panels = [
        Panel(f"spd_{key}", _spd(metric), settings.spd_sizes)
        for key, metric in (
            ("affine", SPDAffineMetric),
            ("bures_wasserstein", SPDBuresWassersteinMetric),
            ("log_euclidean", SPDLogEuclideanMetric),
        )
    ]
    quadrics = (
        ("sphere", lambda size: Hypersphere(size - 1)),
        ("hyperboloid", lambda size: Hyperboloid(size - 1)),
        ("poincare_ball", PoincareBall),
    )
    panels += [
        Panel(name, make, settings.quadric_sizes, settings.quadric_pilots)
        for name, make in quadrics
    ]
    for family, space_class in (("stiefel", Stiefel), ("grassmann", Grassmannian)):
        panels += [
            Panel(
                f"{family}_r{rank}",
                lambda size, cls=space_class, rank=rank: cls(size, rank),
                settings.frame_sizes,
                settings.frame_pilots,
            )
            for rank in settings.ranks
        ]
    return panels


def _memory_bytes(space, method):
    """Peak memory of one draw, roughly: the basis and the transport's temporaries."""
    ambient = math.prod(space.shape)
    if method == "explicit_basis":
        return 4 * int(space.dim) * ambient * FLOAT_BYTES
    if method == "gram_schmidt":
        return 4 * ambient * ambient * FLOAT_BYTES
    return 0


def _extrapolate(history, size):
    """Seconds at ``size`` from measured (size, seconds): a power law through the last two.

    The exponent is at least 1 (no method gets cheaper per sample as the space grows);
    with one measurement the cost is taken linear in the size. Returns (seconds, note).
    """
    if not history:
        return None, ""
    last_size, last_seconds = history[-1]
    exponent = 1.0
    if len(history) >= 2:
        prev_size, prev_seconds = history[-2]
        slope = math.log(last_seconds / prev_seconds) / math.log(last_size / prev_size)
        exponent = max(1.0, slope)
    estimate = last_seconds * (size / last_size) ** exponent
    return estimate, f"m^{exponent:.1f} from m={[s for s, _ in history[-2:]]}"


def _time_calls(call, points, point_budget_s, deadline):
    """Mean over base points of the median call time; stops early past ``deadline``.

    Returns (seconds, n_points_timed, n_calls).
    """
    medians, n_calls = [], 0
    for point in points:
        times = []
        start = time.perf_counter()
        while not times or time.perf_counter() - start < point_budget_s:
            tick = time.perf_counter()
            call(point)
            times.append(time.perf_counter() - tick)
        medians.append(float(np.median(times)))
        n_calls += len(times)
        if time.perf_counter() > deadline:
            break
    return float(np.mean(medians)), len(medians), n_calls


def _base_points(space, seed):
    """N_BASE_POINTS random points of ``space`` (geomstats' sampler, fixed seed), numpy."""
    gs.random.seed(seed)
    return to_numpy(space.random_point(N_BASE_POINTS))


class Figure1:
    """Times every (panel, size, method), skipping what would be too slow or too big."""

    def __init__(self, settings):
        self.settings = settings
        self.rng = np.random.default_rng(0)
        self.history = {}
        self.budget_left = {}

    def _skip_reason(self, key, space, method, size):
        """(reason, estimate) for skipping ``method`` at this size, or (None, estimate)."""
        estimate, note = _extrapolate(self.history.get(key, []), size)
        memory = _memory_bytes(space, method)
        if memory > MEMORY_CAP_BYTES:
            cap = MEMORY_CAP_BYTES / 1024**3
            return f"memory: ~{memory / 1024**3:.1f} GiB > {cap:.0f} GiB", estimate
        if method == "transport" or estimate is None:
            return None, estimate
        if estimate > ONE_MINUTE:
            return f"over a minute per sample: estimated {estimate:.3g} s ({note})", estimate
        needed = N_BASE_POINTS * estimate
        if needed > self.budget_left[key]:
            return (
                f"run-time cap: estimated {needed:.3g} s for {N_BASE_POINTS} base points "
                f"({note}) > {self.budget_left[key]:.3g} s left",
                estimate,
            )
        return None, estimate

    def _measure(self, space, method, points, warm_up):
        """Seconds per library call; for the transport also with ``validate=False``."""
        backend_points = [to_backend(point) for point in points]
        deadline = time.perf_counter() + self.settings.method_budget_s[method]

        def seconds_per_call(validate):
            sampler = TangentGaussian(space, method=method, validate=validate)

            def call(point):
                sampler.sample(point, random_state=self.rng)

            if warm_up:
                call(backend_points[0])
            return _time_calls(call, backend_points, self.settings.point_budget_s, deadline)

        seconds, n_points, n_calls = seconds_per_call(validate=True)
        unvalidated = float("nan")
        if method == "transport":
            unvalidated = seconds_per_call(validate=False)[0]
        return seconds, unvalidated, n_points, n_calls

    def run_panel(self, panel):
        """Rows of one panel, pilot sizes first."""
        rows = []
        sizes = [(size, "pilot") for size in panel.pilot_sizes]
        sizes += [(size, "grid") for size in panel.sizes]
        for size, kind in sizes:
            space = panel.make_space(size)
            points = _base_points(space, seed=size)
            for method in METHODS:
                key = (panel.name, method)
                self.budget_left.setdefault(key, self.settings.method_budget_s[method])
                row = {
                    "panel": panel.name,
                    "m": size,
                    "dim": int(space.dim),
                    "ambient": math.prod(space.shape),
                    "method": method,
                    "kind": kind,
                }
                reason, estimate = self._skip_reason(key, space, method, size)
                row["estimated_seconds"] = estimate
                if reason is not None:
                    rows.append({**row, "status": "skipped", "reason": reason})
                    print(f"  {panel.name} m={size} {method}: skipped ({reason})", flush=True)
                    continue
                start = time.perf_counter()
                warm_up = estimate is None or estimate < WARM_UP_BELOW_S
                seconds, unvalidated, n_points, n_calls = self._measure(
                    space, method, points, warm_up
                )
                if method != "transport":
                    self.budget_left[key] -= time.perf_counter() - start
                self.history.setdefault(key, []).append((size, seconds))
                rows.append(
                    {
                        **row,
                        "status": "measured",
                        "seconds": seconds,
                        "unvalidated_seconds": unvalidated,
                        "n_base_points": n_points,
                        "n_calls": n_calls,
                        "reason": "" if n_points == N_BASE_POINTS else "time cap hit",
                    }
                )
                print(f"  {panel.name} m={size} {method}: {seconds:.3g} s", flush=True)
        return rows


def _throughput(settings):
    """Draws at one base point: one call of n draws against n calls of one draw."""
    rows = []
    rng = np.random.default_rng(1)
    for label, size in settings.throughput_spaces:
        space = _spd(SPDAffineMetric)(size) if label.startswith("SPD") else Hypersphere(size)
        point = to_backend(_base_points(space, seed=size)[0])
        n_draws = settings.throughput_draws
        row = {"space": label, "n_draws": n_draws}
        rng_seconds = float("inf")
        for _ in range(1 + BATCH_REPEATS):  # the normals alone: what one call cannot avoid
            start = time.perf_counter()
            rng.standard_normal((n_draws, int(space.dim)))
            rng_seconds = min(rng_seconds, time.perf_counter() - start)
        for validate, suffix in ((True, ""), (False, "_validate_false")):
            sampler = TangentGaussian(space, validate=validate)
            batch = float("inf")
            for _ in range(1 + BATCH_REPEATS):  # the first call warms up, the fastest counts
                start = time.perf_counter()
                sampler.sample(point, n_samples=n_draws, random_state=rng)
                batch = min(batch, time.perf_counter() - start)
            start = time.perf_counter()
            for _ in range(n_draws):
                sampler.sample(point, random_state=rng)
            singles = time.perf_counter() - start
            row[f"one_call_seconds{suffix}"] = batch
            row[f"single_calls_seconds{suffix}"] = singles
            row[f"ratio{suffix}"] = singles / batch
        row["rng_seconds"] = rng_seconds
        row["ratio_cap"] = row["single_calls_seconds"] / rng_seconds
        row["load_average"] = os.getloadavg()[0]
        rows.append(row)
        print(
            f"  throughput {label}: {row['ratio']:.1f}x (cap set by the normals alone: "
            f"{row['ratio_cap']:.1f}x)",
            flush=True,
        )
    return rows


def _digits_on_sphere(n_rows=1000):
    """Unit vectors of R^784: scikit-learn digits upsampled from 8 x 8 to 28 x 28."""
    from scipy.ndimage import zoom
    from sklearn.datasets import load_digits

    images = load_digits().images[:n_rows]
    upsampled = np.stack([zoom(image, 3.5, order=1) for image in images]).reshape(len(images), -1)
    return upsampled / np.linalg.norm(upsampled, axis=1, keepdims=True)


@dataclass(frozen=True)
class RsgdProblem:
    """One problem of Table 2: the bare step's pieces and the library's loss."""

    name: str
    space: object
    start: np.ndarray
    data: np.ndarray
    gradient: object
    sigma: float
    lr: float
    loss: object


def _rsgd_problems():
    """The SPD(11) Frechet mean and the S^783 leading eigenvector (Utpala et al.'s Table 2)."""
    from geomstats_dp.optim import CallableLoss, SquaredDistanceLoss

    spd = _spd(SPDAffineMetric)(11)
    gs.random.seed(11)
    matrices = to_numpy(spd.random_point(500))

    def frechet_gradient(point, matrix):
        return -2 * spd.metric.log(matrix, point)

    sphere = Hypersphere(783)
    rows = _digits_on_sphere()

    def eigenvector_loss(point, row):
        return -gs.dot(row, point) ** 2

    def eigenvector_gradient(point, row):
        return sphere.to_tangent(-2 * gs.dot(row, point) * row, point)

    start = np.ones(784) / math.sqrt(784)
    return [
        RsgdProblem(
            "SPD(11) Frechet mean", spd, np.eye(11), matrices, frechet_gradient, 0.1, 0.05,
            SquaredDistanceLoss(spd),
        ),
        RsgdProblem(
            "S^783 leading eigenvector", sphere, start, rows, eigenvector_gradient, 0.01, 0.1,
            CallableLoss(sphere, eigenvector_loss, gradient=eigenvector_gradient),
        ),
    ]


def _rsgd_steps(problem, noise, rng, budget_s=None, n_steps=None):
    """Bare DP-RSGD steps w <- Exp_w(-lr (grad f_i(w) + noise(w))), over a time budget or a
    number of steps. Returns (total seconds, steps)."""
    space, lr = problem.space, problem.lr
    point, data = to_backend(problem.start), to_backend(problem.data)
    done = 0
    start = time.perf_counter()
    while (
        done < n_steps if n_steps is not None
        else done == 0 or time.perf_counter() - start < budget_s
    ):
        direction = problem.gradient(point, data[int(rng.integers(data.shape[0]))])
        if noise is not None:
            direction = direction + noise(point)
        point = space.metric.exp(-lr * direction, point)
        done += 1
    return time.perf_counter() - start, done


def _noise_functions(problem, rng):
    """Noise draws per variant: the library call per method, and the unvalidated transport."""
    space, sigma = problem.space, problem.sigma
    samplers = {
        method: TangentGaussian(space, method=method)
        for method in ("transport", "explicit_basis", "mcmc")
    }
    samplers["transport (validate=False)"] = TangentGaussian(space, validate=False)
    return {
        variant: (
            lambda point, sampler=sampler: sampler.sample(point, sigma=sigma, random_state=rng)
        )
        for variant, sampler in samplers.items()
    }


LIBRARY_CLIP_NORM = 100.0  # above every gradient norm here: clipping computes, never binds


def _library_step_seconds(problem, noisy, n_steps, seed, clock=time.perf_counter):
    """Seconds per step of the library's DP-RSGD (``minimize``, ``MiniBatch`` of one sample,
    default noise sampler), with noise_std = sigma or 0 (no draw at all), read on
    ``clock``."""
    from geomstats_dp.optim import MiniBatch, minimize

    data = problem.loss.check_data(to_backend(problem.data))
    strategy = MiniBatch(1, LIBRARY_CLIP_NORM, problem.sigma if noisy else 0.0)
    start = clock()
    minimize(
        problem.loss, data, strategy, n_steps, problem.lr, to_backend(problem.start),
        random_state=seed, data_checked=True,
    )
    return (clock() - start) / n_steps


def _library_rows(problem, settings):
    """Plain and private library steps, alternating over rounds, fastest round kept."""
    pilot = _library_step_seconds(problem, True, 20, seed=0)
    n_steps = max(20, int(settings.rsgd_budget_s / pilot))
    best = {False: float("inf"), True: float("inf")}
    for round_index in range(settings.rsgd_rounds):
        for noisy in best:
            seconds = _library_step_seconds(problem, noisy, n_steps, seed=round_index)
            best[noisy] = min(best[noisy], seconds)
    return {
        "problem": problem.name,
        "method": "library DP-RSGD (minimize, MiniBatch(1), transport, validate=False)",
        "plain_step_seconds": best[False],
        "private_step_seconds": best[True],
        "overhead": best[True] / best[False] - 1,
        "load_average": os.getloadavg()[0],
    }


def _dp_rsgd_overhead(settings):
    """Table 2: seconds of a plain RSGD step and of a privatised one, per noise variant.

    Plain and private loops alternate over ``rsgd_rounds`` rounds; each keeps its fastest
    round (the least disturbed by other load on the machine). The bare loop (gradient of
    one sample, noise, exponential map) isolates the draw; the last row per problem runs
    the library's DP-RSGD (``minimize``: batch draw, clipping, noise, exponential map).
    """
    rows = []
    for problem in _rsgd_problems():
        rng = np.random.default_rng(2)
        variants = {"plain": None, **_noise_functions(problem, rng)}
        timings = {variant: [] for variant in variants}
        for _ in range(settings.rsgd_rounds):
            for variant, noise in variants.items():
                seconds, n_steps = _rsgd_steps(
                    problem, noise, rng, budget_s=settings.rsgd_budget_s
                )
                timings[variant].append(seconds / n_steps)
        plain = min(timings.pop("plain"))
        for variant, seconds in timings.items():
            private = min(seconds)
            rows.append(
                {
                    "problem": problem.name,
                    "method": variant,
                    "plain_step_seconds": plain,
                    "private_step_seconds": private,
                    "overhead": private / plain - 1,
                    "load_average": os.getloadavg()[0],
                }
            )
        rows.append(_library_rows(problem, settings))
        for row in rows[-len(timings) - 1 :]:
            print(
                f"  DP-RSGD {problem.name} {row['method']}: +{100 * row['overhead']:.0f}%",
                flush=True,
            )
    return rows


PAPER_STEPS = 300_000


def paper_scale_rows(n_steps=PAPER_STEPS):
    """Table 2 at Utpala et al.'s scale: total seconds of ``n_steps`` bare DP-RSGD steps
    without and with noise (default ``TangentGaussian``, validation on), per problem."""
    rows = []
    for problem in _rsgd_problems():
        rng = np.random.default_rng(3)
        sampler = TangentGaussian(problem.space)

        def noise(point, sampler=sampler, sigma=problem.sigma):
            return sampler.sample(point, sigma=sigma, random_state=rng)

        plain, _ = _rsgd_steps(problem, None, rng, n_steps=n_steps)
        private, _ = _rsgd_steps(problem, noise, rng, n_steps=n_steps)
        rows.append(
            {
                "problem": problem.name,
                "n_steps": n_steps,
                "plain_total_seconds": plain,
                "private_total_seconds": private,
                "noise_total_seconds": private - plain,
                "overhead": private / plain - 1,
                "load_average": os.getloadavg()[0],
            }
        )
        print(
            f"  {problem.name}, {n_steps} steps: {plain:.1f} s plain, {private:.1f} s private "
            f"(+{100 * (private / plain - 1):.0f}%)",
            flush=True,
        )
    return rows


def run_paper_scale(output_dir, quick=False):
    """Write ``sampling[_quick]_dp_rsgd_paper_scale.csv`` (3x10^5 steps; 3000 if quick)."""
    prefix = "sampling_quick" if quick else "sampling"
    with threadpool_limits(limits=1):
        rows = paper_scale_rows(PAPER_STEPS // 100 if quick else PAPER_STEPS)
    _write_csv(output_dir / f"{prefix}_dp_rsgd_paper_scale.csv", rows)


TARGETS = (
    [(f"spd_{key}", 50, 100.0) for key in ("affine", "bures_wasserstein", "log_euclidean")]
    + [(name, 2000, 300.0) for name in ("sphere", "hyperboloid", "poincare_ball")]
    + [(name, 1000, 1000.0) for name in ("stiefel_r20", "grassmann_r20")]
)


def _speedups(figure_rows):
    """Explicit-basis over transport seconds for every grid size: (panel, m) -> dict.

    "unvalidated_ratio" takes the library's base-point membership test (the transport's
    time with validation minus its time with ``validate=False``) out of both.
    """
    by_key = {(row["panel"], row["m"], row["method"]): row for row in figure_rows}
    speedups = {}
    for (panel, size, method), row in by_key.items():
        if method != "transport" or row["kind"] != "grid":
            continue
        explicit = by_key[(panel, size, "explicit_basis")]
        measured = explicit["status"] == "measured"
        seconds = explicit["seconds"] if measured else explicit["estimated_seconds"]
        validation = row["seconds"] - row["unvalidated_seconds"]
        speedups[(panel, size)] = {
            "ratio": seconds / row["seconds"] if seconds else float("nan"),
            "unvalidated_ratio": (seconds - validation) / row["unvalidated_seconds"]
            if seconds
            else float("nan"),
            "basis": "measured" if measured else "estimated",
        }
    return speedups


def _target_rows(figure_rows, throughput_rows, rsgd_rows):
    """Each target with the value measured in this run and whether it is met."""
    speedups = _speedups(figure_rows)
    rows = []
    for panel, size, target in TARGETS:
        if (panel, size) not in speedups:
            continue
        found = speedups[(panel, size)]
        rows.append(
            {
                "target": f"transport vs explicit basis, {panel} m={size}",
                "required": f">= {target:g}x",
                "value": found["ratio"],
                "without_validation": found["unvalidated_ratio"],
                "basis": found["basis"],
                "met": found["ratio"] >= target,
            }
        )
    measured = {key: value for key, value in speedups.items() if value["basis"] == "measured"}
    if measured:
        (panel, size), worst = min(measured.items(), key=lambda item: item[1]["ratio"])
        rows.append(
            {
                "target": f"never slower than explicit basis (worst: {panel} m={size})",
                "required": ">= 1x",
                "value": worst["ratio"],
                "without_validation": worst["unvalidated_ratio"],
                "basis": "measured",
                "met": worst["ratio"] >= 1.0,
            }
        )
    rows += [
        {
            "target": f"throughput {row['space']}, {row['n_draws']} draws",
            "required": ">= 20x",
            "value": row["ratio"],
            "without_validation": row["ratio_validate_false"],
            "basis": "measured",
            "met": row["ratio"] >= 20,
            "note": f"cap set by the normals alone: {row['ratio_cap']:.3g}x",
        }
        for row in throughput_rows
    ]
    overheads = {(row["problem"], row["method"]): row["overhead"] for row in rsgd_rows}
    rows += [
        {
            "target": f"DP-RSGD overhead {problem}",
            "required": "<= 25%",
            "value": overhead,
            "without_validation": overheads[(problem, "transport (validate=False)")],
            "basis": "measured",
            "met": overhead <= 0.25,
        }
        for (problem, method), overhead in overheads.items()
        if method == "transport"
    ]
    rows += [
        {
            "target": f"DP-RSGD overhead {problem}, library optimiser",
            "required": "<= 25%",
            "value": overhead,
            "without_validation": overhead,
            "basis": "measured",
            "met": overhead <= 0.25,
        }
        for (problem, method), overhead in overheads.items()
        if method.startswith("library")
    ]
    return rows


def _write_csv(path, rows):
    fields = []
    for row in rows:
        fields += [key for key in row if key not in fields]
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)


def _plot(path, figure_rows, panels):
    """Log seconds per sample against m, one panel per manifold/metric, one line per method."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n_cols = 5
    n_rows = -(-len(panels) // n_cols)
    fig, axes = plt.subplots(n_rows, n_cols, figsize=(4 * n_cols, 3.2 * n_rows), squeeze=False)
    colours = dict(zip(METHODS, ("tab:blue", "tab:orange", "tab:green", "tab:red")))
    for axis, panel in zip(axes.flat, panels):
        for method in METHODS:
            rows = [
                row
                for row in figure_rows
                if row["panel"] == panel.name and row["method"] == method and row["kind"] == "grid"
            ]
            measured = [(row["m"], row["seconds"]) for row in rows if row["status"] == "measured"]
            estimated = [
                (row["m"], row["estimated_seconds"])
                for row in rows
                if row["status"] == "skipped" and row["estimated_seconds"]
            ]
            if measured:
                axis.plot(*zip(*measured), "o-", color=colours[method], label=method)
            if method == "transport" and measured:
                bare = [(row["m"], row["unvalidated_seconds"]) for row in rows]
                axis.plot(*zip(*bare), "--", color=colours[method], label="validate=False")
            if estimated:
                joined = measured[-1:] + estimated
                axis.plot(*zip(*joined), ":", color=colours[method])
                axis.plot(*zip(*estimated), "o", mfc="none", color=colours[method])
        axis.set_yscale("log")
        axis.set_title(panel.name)
        axis.set_xlabel("m")
        axis.set_ylabel("seconds per sample")
        axis.grid(True, which="both", alpha=0.3)
    for axis in list(axes.flat)[len(panels) :]:
        axis.axis("off")
    axes.flat[0].legend(fontsize=8)
    fig.suptitle(
        "Tangent-Gaussian sampling per library call (hollow markers: extrapolated, not run; "
        "dashed: the transport with validate=False)"
    )
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def run(output_dir, quick=False):
    """Run the benchmark and write ``sampling[_quick]_*.csv`` and the Figure 1 plot."""
    settings = QUICK if quick else FULL
    prefix = "sampling_quick" if quick else "sampling"
    panels = _panels(settings)
    start = time.perf_counter()
    with threadpool_limits(limits=1):
        figure = Figure1(settings)
        figure_rows = []
        for panel in panels:
            print(f"Figure 1: {panel.name}", flush=True)
            figure_rows += figure.run_panel(panel)
        throughput_rows = _throughput(settings)
        rsgd_rows = _dp_rsgd_overhead(settings)
    target_rows = _target_rows(figure_rows, throughput_rows, rsgd_rows)
    _write_csv(output_dir / f"{prefix}_figure1.csv", figure_rows)
    _write_csv(output_dir / f"{prefix}_throughput.csv", throughput_rows)
    _write_csv(output_dir / f"{prefix}_dp_rsgd.csv", rsgd_rows)
    _write_csv(output_dir / f"{prefix}_targets.csv", target_rows)
    _plot(output_dir / f"{prefix}_figure1.png", figure_rows, panels)
    for row in target_rows:
        verdict = "met" if row["met"] else "MISSED"
        print(f"  {row['target']}: {row['value']:.3g} ({row['required']}) {verdict}")
    print(f"sampling benchmark: {time.perf_counter() - start:.0f} s", flush=True)
