"""Choosing the clip norm on real data: fixed C against clip_norm="auto".

``python -m benchmarks clipping``. The private Frechet mean (DP-RGD, the estimator's
default schedule, delta = 1e-5) of two real datasets shipped offline:

* geomstats' connectomes: 86 SPD(28) functional-connectivity matrices, affine-invariant
  metric (distances to the start I: 2.8 to 3.6);
* geomstats' EMG covariances (``load_emg_covariances``): 3,898 SPD(8) matrices.

For each epsilon, a fixed clip norm C from a grid and ``clip_norm="auto"`` (a private
median of the distances to the start, 10% of epsilon; ``privacy.quantile``), 10 seeds:
the distance of the release to the exact Frechet mean (``reference.exact_frechet_mean``),
against the distance of the data-independent start, with the public ``noise_ratio_``.
Results: ``results/clipping.csv`` (one row per fit) and ``results/clipping.png``.
"""

import warnings

import numpy as np
from geomstats.datasets.utils import load_connectomes
from geomstats.geometry.spd_matrices import SPDMatrices
from threadpoolctl import threadpool_limits

from benchmarks.accounting import write_csv
from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.datasets import load_emg_covariances
from geomstats_dp.learning import PrivateFrechetMean
from geomstats_dp.learning.reference import exact_frechet_mean

DELTA = 1e-5
EPSILONS = (0.5, 1.0, 2.0, 4.0, 8.0)
CLIP_NORMS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0, "auto")
N_SEEDS = 10


def datasets():
    """Name -> (space, points as numpy)."""
    connectomes = to_numpy(load_connectomes()[0])
    emg = to_numpy(load_emg_covariances()[0])
    return {"connectomes": (SPDMatrices(28), connectomes), "emg": (SPDMatrices(8), emg)}


def run_dataset(name, space, points, epsilons, clip_norms, n_seeds):
    """One row per fit: distances of the release and of the start to the mean."""
    mean = exact_frechet_mean(space, to_backend(points))
    start = np.eye(space.n)
    start_distance = float(space.metric.dist(to_backend(start), mean))
    rows = []
    for epsilon in epsilons:
        for clip_norm in clip_norms:
            for seed in range(n_seeds):
                estimator = PrivateFrechetMean(space, epsilon=epsilon, delta=DELTA,
                                               clip_norm=clip_norm, random_state=seed)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    try:
                        estimator.fit(points)
                        distance = float(space.metric.dist(estimator.estimate_, mean))
                    except (np.linalg.LinAlgError, ValueError):  # the iterate left SPD
                        distance = float("nan")
                rows.append({
                    "dataset": name, "n_samples": len(points), "epsilon": epsilon,
                    "clip_norm": clip_norm, "seed": seed,
                    "clip_norm_used": estimator.__dict__.get("clip_norm_", float("nan")),
                    "n_iter": estimator.__dict__.get("n_iter_", 0),
                    "noise_ratio": estimator.__dict__.get("noise_ratio_", float("nan")),
                    "distance": distance, "start_distance": start_distance,
                })
    return rows


def plot(rows, path):
    """Mean distance to the mean against epsilon, one curve per clip setting."""
    import matplotlib.pyplot as plt

    names = sorted({row["dataset"] for row in rows})
    figure, axes = plt.subplots(1, len(names), figsize=(5.5 * len(names), 4))
    for axis, name in zip(np.atleast_1d(axes), names):
        subset = [row for row in rows if row["dataset"] == name]
        for clip_norm in dict.fromkeys(row["clip_norm"] for row in subset):
            curve = [(eps, np.nanmean([r["distance"] for r in subset
                                       if r["epsilon"] == eps and r["clip_norm"] == clip_norm]))
                     for eps in sorted({r["epsilon"] for r in subset})]
            style = dict(color="black", linewidth=2.5) if clip_norm == "auto" else {}
            axis.plot(*zip(*curve), marker="o", label=f"C = {clip_norm}", **style)
        axis.axhline(subset[0]["start_distance"], color="grey", linestyle=":",
                     label="start (reads no data)")
        axis.set(xscale="log", yscale="log", xlabel="epsilon",
                 ylabel="distance to the Frechet mean", title=name)
        axis.legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def run(output_dir, quick=False):
    """Run both datasets; write the CSV and the plot; print a summary."""
    epsilons = EPSILONS[1:4:2] if quick else EPSILONS
    n_seeds = 2 if quick else N_SEEDS
    rows = []
    with threadpool_limits(1):
        for name, (space, points) in datasets().items():
            rows += run_dataset(name, space, points, epsilons, CLIP_NORMS, n_seeds)
    write_csv(output_dir / "clipping.csv", rows)
    plot(rows, output_dir / "clipping.png")
    for name in sorted({row["dataset"] for row in rows}):
        for epsilon in epsilons:
            subset = [r for r in rows if r["dataset"] == name and r["epsilon"] == epsilon]
            summary = {
                str(c): round(float(np.nanmean([r["distance"] for r in subset
                                                if r["clip_norm"] == c])), 3)
                for c in CLIP_NORMS
            }
            print(name, epsilon, summary, flush=True)
