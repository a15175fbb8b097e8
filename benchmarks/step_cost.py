"""The cost of one DP-RSGD step (batch of one record) against a minimal numpy step.

The library's step is ``minimize(SquaredDistanceLoss(space), data, MiniBatch(1, C, sigma),
...)`` (the Frechet mean's per-sample loss: batch draw, gradient -Log_x(z), clipping in
the Riemannian norm, the stage's tangent Gaussian noise, the exponential map). The
baseline is the same step written for the purpose in plain numpy: closed-form log and
exp, the clip, a tangent normal draw, nothing else (no checks, no ledger, one array
operation per formula), on S^783 and SPD(11) with the affine-invariant metric. Both are
timed in the same process with ``OMP_NUM_THREADS=1``, their repeats interleaved, and the
median per-step CPU time kept (``time.process_time``: the time the code itself runs on a
shared machine; wall time in the CSV). The pytorch rows run the library on the pytorch
backend (CPU tensors) in a second process, against the same numpy baseline timed there and against the
minimal step written in torch (CPU tensors, torch's generator). Both processes also time
the issue's baseline, the minimal step as a jitted JAX ``lax.scan`` loop
(``_step_cost_jax``), where JAX is installed (the ``bench`` extra); without it the JAX
columns are NaN and a note is printed.

Writes ``step_cost.csv`` (one row per space and backend: seconds per step of each, the
ratios in CPU time, and the load average) and ``step_cost.png``.
"""

import functools
import importlib.util
import json
import math
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

from benchmarks.accounting import write_csv

SPHERE_DIM, SPD_SIZE = 783, 11
CLIP_NORM, NOISE_STD, STEP = 1.0, 0.05, 0.05
GOALS = {"numpy": 2.0, "pytorch": 3.0}
GOALS_VS_JAX = {"numpy": 1.5, "pytorch": 3.0}


def sphere_data(n_samples=1000, seed=0):
    """Points of S^783 spread around the north pole (angles about 0.5), seeded."""
    rng = np.random.default_rng(seed)
    points = rng.standard_normal((n_samples, SPHERE_DIM + 1)) * 0.02
    points[:, 0] += 1.0
    return points / np.linalg.norm(points, axis=1, keepdims=True)


def spd_data(n_samples=500, seed=0):
    """SPD(11) sample covariances of 30 observations, seeded."""
    rng = np.random.default_rng(seed)
    observations = rng.standard_normal((n_samples, 30, SPD_SIZE))
    return np.einsum("nti,ntj->nij", observations, observations) / 30


def minimal_sphere_steps(data, n_steps, rng):
    """n_steps minimal DP-RSGD steps on the sphere from the north pole; the last point."""
    point = np.zeros(data.shape[1])
    point[0] = 1.0
    return _minimal_sphere_loop(data, rng.integers(data.shape[0], size=n_steps), point,
                                lambda: rng.standard_normal(point.shape[0]))


def _minimal_sphere_loop(data, indices, point, normals):
    """The minimal steps from ``point`` on the records ``indices`` (array operators:
    numpy arrays or torch tensors), ``normals()`` drawing d + 1 standard normals."""
    for index in indices:
        record = data[index]
        cosine = min(1.0, max(-1.0, float(record @ point)))
        angle = math.acos(cosine)
        along = record - cosine * point
        along_norm = math.sqrt(float(along @ along))
        gradient = along * (-angle / along_norm) if along_norm > 0 else 0.0 * along
        if angle > CLIP_NORM:
            gradient = gradient * (CLIP_NORM / angle)
        noise = normals()
        noise -= float(noise @ point) * point
        step = -STEP * (gradient + NOISE_STD * noise)
        length = math.sqrt(float(step @ step))
        point = math.cos(length) * point + (math.sin(length) / length) * step
    return point


def minimal_spd_steps(data, n_steps, rng):
    """n_steps minimal DP-RSGD steps on SPD(11) (affine-invariant) from the identity,
    the iterate's square-root factor carried from step to step; the last point."""
    size = data.shape[1]
    upper = np.triu_indices(size, 1)

    def noise():
        drawn = np.diag(rng.standard_normal(size))
        drawn[upper] = rng.standard_normal(len(upper[0])) / math.sqrt(2)
        return drawn

    return _minimal_spd_loop(data, rng.integers(data.shape[0], size=n_steps),
                             np.eye(size), np, noise)


def _minimal_spd_loop(data, indices, identity, xp, noise):
    """The minimal SPD steps from the identity (``xp``: numpy or torch, for ``eigh``,
    ``log``, ``exp``, ``sum``, ``triu``), ``noise()`` an upper triangle of normals."""
    factor, inverse = identity, identity
    for index in indices:
        vals, vecs = xp.linalg.eigh(inverse @ data[index] @ inverse.T)
        whitened_log = (vecs * xp.log(vals)) @ vecs.T  # F^-1 Log_x(z) F^-T
        norm = math.sqrt(float(xp.sum(whitened_log * whitened_log)))
        gradient = -whitened_log * min(1.0, CLIP_NORM / norm)
        drawn = noise()
        drawn = xp.triu(drawn) + xp.triu(drawn, 1).T
        step_vals, step_vecs = xp.linalg.eigh(-STEP * (gradient + NOISE_STD * drawn))
        halves = xp.exp(step_vals / 2)
        factor = factor @ (step_vecs * halves)
        inverse = (step_vecs.T / halves[:, None]) @ inverse
    return factor @ factor.T


def minimal_sphere_steps_torch(data, n_steps, seed):
    """``minimal_sphere_steps`` in torch (CPU tensors, torch's generator)."""
    import torch

    generator = torch.Generator().manual_seed(seed)
    point = torch.zeros(data.shape[1], dtype=torch.float64)
    point[0] = 1.0
    indices = torch.randint(data.shape[0], (n_steps,), generator=generator).tolist()
    return _minimal_sphere_loop(data, indices, point, lambda: torch.randn(
        point.shape[0], generator=generator, dtype=torch.float64))


def minimal_spd_steps_torch(data, n_steps, seed):
    """``minimal_spd_steps`` in torch (CPU tensors, torch's generator)."""
    import torch

    generator = torch.Generator().manual_seed(seed)
    size = data.shape[1]
    upper = torch.triu_indices(size, size, 1)

    def noise():
        drawn = torch.diag(torch.randn(size, generator=generator, dtype=torch.float64))
        drawn[upper[0], upper[1]] = torch.randn(upper.shape[1], generator=generator,
                                                dtype=torch.float64) / math.sqrt(2)
        return drawn

    indices = torch.randint(data.shape[0], (n_steps,), generator=generator).tolist()
    return _minimal_spd_loop(data, indices, torch.eye(size, dtype=torch.float64), torch,
                             noise)


def library_steps(space, data, n_steps, seed, compiled=False):
    """n_steps library DP-RSGD steps (``minimize``, ``MiniBatch(1)``, default sampler), on
    the Python loop or (``compiled``) on the compiled route where it is loaded."""
    from geomstats_dp._backend import to_backend
    from geomstats_dp.optim import (
        MiniBatch,
        SquaredDistanceLoss,
        compiled_blocks,
        minimize,
    )

    loss = SquaredDistanceLoss(space)
    checked = loss.check_data(to_backend(data))
    compiled_blocks.ENABLED = compiled
    return minimize(loss, checked, MiniBatch(1, CLIP_NORM, NOISE_STD), n_steps, STEP,
                    random_state=seed, data_checked=True).point


def compile_torch_block(space, data):
    """(CPU, wall) seconds of compiling the torch block of ``library_steps``
    (``compiled_torch.compile_block``); raises where it cannot compile."""
    from geomstats_dp._backend import to_backend
    from geomstats_dp.optim import compiled_torch

    start = clocks()
    if not compiled_torch.compile_block(space, to_backend(data), 1):
        raise RuntimeError("torch.compile failed: no compiled pytorch rows")
    return (clocks() - start).tolist()


def clocks():
    """(CPU seconds of the process, wall seconds) now."""
    return np.array([time.process_time(), time.perf_counter()])


def measure(repeats, sphere_steps, spd_steps):
    """Median (CPU, wall) seconds per step of the library and the minimal step, per space,
    the variants interleaved over ``repeats``; on pytorch also the minimal step written
    in torch (``minimal_torch``), and where JAX is installed the jitted ``lax.scan`` loop
    (``jax``, with ``jax_check``: its end point's largest difference from the numpy
    loop's on the same draws); a dict for the CSV."""
    import geomstats.backend as gs
    from geomstats.geometry.hypersphere import Hypersphere
    from geomstats.geometry.spd_matrices import SPDMatrices

    from benchmarks import _step_cost_jax

    cases = {
        f"S^{SPHERE_DIM}": (Hypersphere(SPHERE_DIM), sphere_data(), minimal_sphere_steps,
                            minimal_sphere_steps_torch, sphere_steps, "sphere"),
        f"SPD({SPD_SIZE})": (SPDMatrices(SPD_SIZE), spd_data(), minimal_spd_steps,
                             minimal_spd_steps_torch, spd_steps, "spd"),
    }
    found = {}
    for name, (space, data, minimal, minimal_torch, n_steps, kind) in cases.items():
        library_steps(space, data, 20, seed=0)  # warm caches (calibration, imports)
        checks = {}
        variants = {
            "library": functools.partial(library_steps, space, data, n_steps),
            "minimal": lambda seed, data=data, n_steps=n_steps, minimal=minimal: minimal(
                data, n_steps, np.random.default_rng(seed)),
        }
        if gs.__name__.endswith("pytorch"):
            import torch

            tensors = torch.from_numpy(data.copy())
            variants["minimal_torch"] = functools.partial(minimal_torch, tensors, n_steps)
            checks["first_compile"] = compile_torch_block(space, data)
            variants["compiled"] = functools.partial(library_steps, space, data, n_steps,
                                                     compiled=True)
            checks["compiled_check"] = float(torch.max(torch.abs(
                library_steps(space, data, n_steps, 0, compiled=True)
                - library_steps(space, data, n_steps, 0))))
        if _step_cost_jax.available():
            variants["jax"] = _step_cost_jax.loop(data, n_steps, kind)
            checks["jax_check"] = _step_cost_jax.check(data, kind)
        times = {key: [] for key in variants}
        for repeat in range(repeats):
            for key, variant in variants.items():
                start = clocks()
                variant(repeat)
                times[key].append((clocks() - start) / n_steps)
        found[name] = {key: np.median(values, axis=0).tolist() for key, values in times.items()}
        found[name].update(checks)
    return found


def _child(repeats, sphere_steps, spd_steps):
    """Entry of the measuring process: print ``measure``'s dict as JSON."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        print(json.dumps(measure(repeats, sphere_steps, spd_steps)))


def _compile_child():
    """Entry of a later process: print the torch blocks' compilation times as JSON (with
    the on-disk cache of the measuring process)."""
    from geomstats.geometry.hypersphere import Hypersphere
    from geomstats.geometry.spd_matrices import SPDMatrices

    print(json.dumps({
        f"S^{SPHERE_DIM}": compile_torch_block(Hypersphere(SPHERE_DIM), sphere_data()),
        f"SPD({SPD_SIZE})": compile_torch_block(SPDMatrices(SPD_SIZE), spd_data())}))


def _run_child(backend, code, cache):
    """The last line of a child process's output on ``backend``, parsed as JSON, with
    inductor's on-disk cache in ``cache``."""
    env = dict(os.environ, GEOMSTATS_BACKEND=backend, OMP_NUM_THREADS="1",
               TORCHINDUCTOR_CACHE_DIR=cache,  # compiled in the process: its CPU time counts
               TORCHINDUCTOR_COMPILE_THREADS="1")
    output = subprocess.run([sys.executable, "-c", f"import benchmarks.step_cost as m; {code}"],
                            env=env, capture_output=True, text=True, check=True).stdout
    return json.loads(output.strip().splitlines()[-1])


def rows(quick):
    """One row per space and backend (and the compiled torch route), each backend
    measured in a fresh process; the torch blocks compiled there with an empty inductor
    cache, then again in a later process from the cache it left."""
    repeats, sphere_steps, spd_steps = (3, 200, 50) if quick else (9, 2000, 400)
    found = []
    if importlib.util.find_spec("jax") is None:
        print("  JAX is not installed (the bench extra): the JAX columns are NaN", flush=True)
    with tempfile.TemporaryDirectory() as cache:
        measured = {backend: _run_child(
            backend, f"m._child({repeats}, {sphere_steps}, {spd_steps})", cache)
            for backend in ("numpy", "pytorch")}
        cached = _run_child("pytorch", "m._compile_child()", cache)
    for backend, variant in (("numpy", "library"), ("pytorch", "library"),
                             ("pytorch", "compiled")):
        for space, times in measured[backend].items():
            found.append(_row(space, backend, variant, times, cached[space]))
    return found


def _row(space, backend, variant, times, cached):
    """The CSV row of ``variant`` (the loop, or the compiled torch route) on ``space``."""
    (cpu, wall), (cpu_minimal, wall_minimal) = times[variant], times["minimal"]
    cpu_torch = times.get("minimal_torch", [math.nan])[0]
    cpu_jax = times.get("jax", [math.nan])[0]
    compiled = variant == "compiled"
    row = {"space": space, "backend": f"{backend} (compiled)" if compiled else backend,
           "library_step_seconds": cpu, "minimal_step_seconds": cpu_minimal,
           "ratio": cpu / cpu_minimal, "goal": GOALS[backend],
           "wall_ratio": wall / wall_minimal,
           "minimal_torch_step_seconds": cpu_torch,
           "ratio_to_minimal_torch": cpu / cpu_torch,
           "jax_step_seconds": cpu_jax, "ratio_to_jax": cpu / cpu_jax,
           "goal_vs_jax": GOALS_VS_JAX[backend],
           "minimal_to_jax": cpu_minimal / cpu_jax,
           "minimal_torch_to_jax": cpu_torch / cpu_jax,
           "jax_check": times.get("jax_check", math.nan),
           "compiled_check": times.get("compiled_check", math.nan) if compiled else math.nan,
           "first_compile_seconds": times["first_compile"][0] if compiled else math.nan,
           "first_compile_wall_seconds": times["first_compile"][1] if compiled else math.nan,
           "cached_compile_seconds": cached[0] if compiled else math.nan,
           "cached_compile_wall_seconds": cached[1] if compiled else math.nan,
           "loadavg_1min": round(os.getloadavg()[0], 2)}
    print(f"  {space} {row['backend']}: {1e6 * cpu:.0f} us / {1e6 * cpu_minimal:.0f} us "
          f"= {row['ratio']:.2f} (wall {row['wall_ratio']:.2f}; minimal torch step "
          f"{1e6 * cpu_torch:.0f} us; JAX scan {1e6 * cpu_jax:.0f} us: "
          f"{row['ratio_to_jax']:.2f}); load {row['loadavg_1min']}", flush=True)
    if compiled:
        print(f"    first compilation {row['first_compile_seconds']:.1f} s CPU "
              f"({row['first_compile_wall_seconds']:.1f} s wall), from the cache "
              f"{cached[0]:.1f} s ({cached[1]:.1f} s); release vs the loop "
              f"{row['compiled_check']:.1e}", flush=True)
    return row


def plot(path, found):
    """Library step over minimal step per space and backend, with the goals."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [f"{row['space']}\n{row['backend'].replace(' (', chr(10) + '(')}"
              for row in found]
    fig, axis = plt.subplots(figsize=(7, 3.6))
    axis.bar(range(len(found)), [row["ratio"] for row in found], color="tab:blue",
             label="/ minimal numpy step")
    axis.scatter(range(len(found)), [row["ratio_to_minimal_torch"] for row in found],
                 marker="o", color="tab:orange", label="/ minimal torch step")
    axis.scatter(range(len(found)), [row["ratio_to_jax"] for row in found],
                 marker="s", color="tab:green", label="/ JAX lax.scan step")
    axis.scatter(range(len(found)), [row["goal"] for row in found], marker="_", s=600,
                 color="black", label="goal (/ numpy)")
    axis.scatter(range(len(found)), [row["goal_vs_jax"] for row in found], marker="_",
                 s=600, color="tab:green", label="goal (/ JAX)")
    axis.set_xticks(range(len(found)), labels)
    axis.set_ylabel("library step / minimal step (CPU)")
    axis.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def run(output_dir, quick=False):
    """Write ``step_cost[_quick].csv`` and ``.png``."""
    found = rows(quick)
    path = output_dir / ("step_cost_quick" if quick else "step_cost")
    plot(path.with_suffix(".png"), found)
    write_csv(path.with_suffix(".csv"), found)
