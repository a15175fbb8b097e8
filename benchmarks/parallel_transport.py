"""Parallel-transport sampler against the Gram-Schmidt fallback, where no closed form is
registered: SO(n) (n = 3, 10) and Kendall shape spaces of geomstats' landmark data sets.

Both samplers are called directly (``sampler.sample(base_points, n_samples, rng)``, no
validation) on three workloads: 1 draw and 1000 draws at one base point, and 1 draw at
each of many base points in one call. SO(n): 100 random rotations (fixed seed, the first is
the fixed point). Kendall: the 22 optical-nerve shapes (5 landmarks in 3-d) and the 52
hand shapes (22 landmarks in 3-d), centred and scaled to pre-shapes. On Kendall's space
geomstats' own fallback fails (its quotient reports the pre-shape dimension), so the
baseline is ``GramSchmidt`` on the horizontal spaces, the sampler's ``_HorizontalSpace``.
The two samplers alternate over rounds and each keeps its fastest round, so that load
from other processes hits both alike; the ratio is Gram-Schmidt time / transport time.
"""

import os

import geomstats.backend as gs
import numpy as np
from geomstats.datasets.utils import load_hands, load_optical_nerves
from geomstats.geometry.pre_shape import PreShapeSpace
from geomstats.geometry.special_orthogonal import SpecialOrthogonal
from threadpoolctl import threadpool_limits

from benchmarks.accounting import write_csv
from benchmarks.sampler_overhead import _seconds_per_call
from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.distributions.baselines import GramSchmidt
from geomstats_dp.distributions.parallel_transport import (
    ParallelTransportSampler,
    _HorizontalSpace,
)

ROUNDS = 3
N_ROTATIONS = 100


def _rotations(size, count):
    gs.random.seed(0)
    return to_numpy(SpecialOrthogonal(size).random_point(count))


def _kendall(landmarks):
    space = PreShapeSpace(*landmarks.shape[1:], equip=True)
    space.equip_with_group_action("rotations")
    space.equip_with_quotient()
    points = to_numpy(space.projection(to_backend(landmarks)))
    return space.quotient, points


def cases():
    """(label, sampler, baseline sampler, base points [k, *shape])."""
    listed = []
    for size in (3, 10):
        space = SpecialOrthogonal(size)
        listed.append((f"SO({size})", ParallelTransportSampler(space, space.metric),
                       GramSchmidt(space, space.metric), _rotations(size, N_ROTATIONS)))
    for label, landmarks in (("Kendall optical nerves 5x3", load_optical_nerves()[0]),
                             ("Kendall hands 22x3", load_hands()[0])):
        space, points = _kendall(np.asarray(landmarks, dtype=np.float64))
        listed.append((label, ParallelTransportSampler(space, space.metric),
                       GramSchmidt(_HorizontalSpace(space, space.metric), space.metric),
                       points))
    return listed


def rows(budget_s, quick):
    """One row per (case, workload): seconds per call and per draw of both samplers."""
    found = []
    for label, sampler, baseline, points in cases():
        n_points = min(points.shape[0], 10) if quick else points.shape[0]
        n_draws = 100 if quick else 1000
        workloads = [("1 draw at 1 point", points[:1], 1),
                     (f"{n_draws} draws at 1 point", points[:1], n_draws),
                     (f"1 draw at {n_points} points", points[:n_points], 1)]
        for workload, base_points, n_samples in workloads:
            rng = np.random.default_rng(0)
            calls = {
                "transport": lambda s=sampler: s.sample(base_points, n_samples, rng),
                "gram_schmidt": lambda s=baseline: s.sample(base_points, n_samples, rng),
            }
            best = {name: float("inf") for name in calls}
            for _ in range(1 if quick else ROUNDS):
                for name, call in calls.items():
                    best[name] = min(best[name], _seconds_per_call(call, budget_s))
            n_total = n_samples * base_points.shape[0]
            row = {"case": label, "dim": sampler.dim, "workload": workload,
                   "n_points": base_points.shape[0], "n_samples": n_samples}
            for name, seconds in best.items():
                row[f"{name}_seconds_per_call"] = seconds
                row[f"{name}_seconds_per_draw"] = seconds / n_total
            row["speedup"] = best["gram_schmidt"] / best["transport"]
            row["loadavg_1min"] = os.getloadavg()[0]
            found.append(row)
            print(f"  {label} [{workload}]: transport {best['transport']:.3g} s, "
                  f"gram_schmidt {best['gram_schmidt']:.3g} s, {row['speedup']:.2f}x "
                  f"(load {os.getloadavg()})", flush=True)
    return found


def plot(found, path):
    """Seconds per call of both samplers, one panel per case, one bar pair per workload."""
    import matplotlib.pyplot as plt

    labels = list(dict.fromkeys(row["case"] for row in found))
    figure, axes = plt.subplots(1, len(labels), figsize=(4 * len(labels), 3.8))
    for axis, label in zip(np.atleast_1d(axes), labels):
        subset = [row for row in found if row["case"] == label]
        positions = np.arange(len(subset))
        for shift, name in ((-0.2, "transport"), (0.2, "gram_schmidt")):
            axis.bar(positions + shift, [row[f"{name}_seconds_per_call"] for row in subset],
                     width=0.4, label=name.replace("_", "-"))
        axis.set_xticks(positions, [row["workload"] for row in subset], rotation=20,
                        fontsize=7)
        axis.set(yscale="log", ylabel="seconds per call", title=f"{label} (d = {subset[0]['dim']})")
        axis.legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def run(output_dir, quick=False):
    """Write ``parallel_transport[_quick].csv`` and ``.png``."""
    prefix = "parallel_transport_quick" if quick else "parallel_transport"
    with threadpool_limits(limits=1):
        found = rows(budget_s=0.01 if quick else 0.2, quick=quick)
    write_csv(output_dir / f"{prefix}.csv", found)
    plot(found, output_dir / f"{prefix}.png")
