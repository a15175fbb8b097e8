"""The price of tuning privately: the clip norm and step size of the private Frechet mean.

``python -m benchmarks private_search``. The clip-norm study (``benchmarks/clipping.py``)
chose C by looking at the private data. Here, on the EMG covariances (3,898 SPD(8)
matrices, affine-invariant metric, DP-RGD forced with ``method="rgd"``, since the grid's
step size is a DP-RGD setting; delta = 1e-5), at the same total epsilon:

* "hand-tuned": the candidate of the grid (clip norm x step size) with the smallest mean
  distance to the exact Frechet mean over the seeds, fitted at the whole epsilon: the best
  choice in hindsight, which reads the data and is not private;
* "default": a public guess, C = 1 with the estimator's default step;
* "library default": ``PrivateFrechetMean(clip_norm=1.0)`` as a user writes it, whose
  ``method="auto"`` picks the localised two-stage release here (not DP-RGD);
* "auto": ``clip_norm="auto"`` (a private median of the distances to the start);
* "search": ``PrivateGridSearchCV`` over the same grid, one SelectionEvent on a 75% / 25%
  split, refit on all data with what is left (``refit_fraction`` = 0.5), score: the clipped
  mean of d^2 / 2 with B = 8 (a public bound: d <= 4); with its default law of the number
  of runs K (Poisson, E[K] = 2m, m the number of candidates), and with a logarithmic law
  of mean m (fewer runs, each at a larger epsilon).

The number is the affine-invariant distance of the release to the exact Frechet mean.
Results: ``results/private_search.csv`` (one row per fit) and ``results/private_search.png``.
"""

import warnings

import numpy as np
from geomstats.geometry.spd_matrices import SPDMatrices
from threadpoolctl import threadpool_limits

from benchmarks.accounting import write_csv
from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.datasets import load_emg_covariances
from geomstats_dp.learning import PrivateFrechetMean
from geomstats_dp.learning.reference import exact_frechet_mean
from geomstats_dp.model_selection import PrivateGridSearchCV
from geomstats_dp.privacy import PrivacyBudget

DELTA = 1e-5
EPSILONS = (0.5, 1.0, 2.0, 4.0)
GRID = {"clip_norm": [0.5, 1.0, 2.0, 4.0, 8.0], "step_size": [None, 0.1]}
SEARCHES = {  # method -> (law of K, E[K] in multiples of the number of candidates)
    "search": ("poisson", 2), "search, logarithmic m": ("logarithmic", 1),
}
METHODS = ("hand-tuned", "default", "auto", *SEARCHES, "library default")
METHOD = "rgd"  # the grid tunes DP-RGD; "library default" rows use method="auto"
LOSS_BOUND = 8.0
N_SEEDS = 6


def _distance(space, estimator, mean):
    try:
        return float(space.metric.dist(estimator.estimate_, mean))
    except (AttributeError, ValueError, np.linalg.LinAlgError):  # no release, or left SPD
        return float("nan")


def _fit(estimator, points):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            estimator.fit(points)
        except (np.linalg.LinAlgError, ValueError):  # the iterate left the SPD cone
            pass
    return estimator


def _candidates(grid):
    return [{"clip_norm": c, "step_size": s}
            for c in grid["clip_norm"] for s in grid["step_size"]]


def run_epsilon(space, points, mean, epsilon, grid, n_seeds):
    """One row per fit at total ``epsilon``: every candidate, the defaults, the search."""
    rows = []

    def row(method, seed, estimator, **extra):
        nan = float("nan")
        rows.append({"epsilon": epsilon, "method": method, "seed": seed,
                     "method_": estimator.__dict__.get("method_", "none"),
                     "clip_norm": estimator.clip_norm, "step_size": estimator.step_size,
                     "distance": _distance(space, estimator, mean), "run_epsilon": nan,
                     "refit_epsilon": nan, "spent_epsilon": nan, **extra})

    for seed in range(n_seeds):
        for params in _candidates(grid):
            estimator = PrivateFrechetMean(space, epsilon=epsilon, delta=DELTA,
                                           method=METHOD, random_state=seed, **params)
            row("candidate", seed, _fit(estimator, points))
        for method, clip_norm, run in (("default", 1.0, METHOD), ("auto", "auto", METHOD),
                                       ("library default", 1.0, "auto")):
            estimator = PrivateFrechetMean(space, epsilon=epsilon, delta=DELTA,
                                           method=run, clip_norm=clip_norm, random_state=seed)
            row(method, seed, _fit(estimator, points))
        for method, (law, factor) in SEARCHES.items():
            budget = PrivacyBudget(epsilon, DELTA)
            search = PrivateGridSearchCV(
                PrivateFrechetMean(space, method=METHOD), grid, epsilon=epsilon, delta=DELTA,
                loss_bound=LOSS_BOUND, runs=law,
                mean_runs=factor * len(_candidates(grid)), budget=budget, random_state=seed,
            )
            _fit(search, points)
            chosen = search.__dict__.get("best_estimator_")
            if chosen is not None:
                row(method, seed, chosen, run_epsilon=search.run_epsilon_,
                    refit_epsilon=search.refit_epsilon_, spent_epsilon=budget.spent_epsilon)
    hand = _hand_tuned(rows)
    for r in rows:
        r["hand_tuned"] = (r["method"] == "candidate" and r["clip_norm"] == hand[0]
                           and r["step_size"] == hand[1])
    return rows


def _hand_tuned(rows):
    """The candidate with the smallest mean distance over the seeds (reads the data)."""
    means = {}
    for r in rows:
        if r["method"] == "candidate":
            means.setdefault((r["clip_norm"], r["step_size"]), []).append(r["distance"])
    return min(means, key=lambda key: np.nanmean(means[key]))


def summary(rows):
    """epsilon -> method -> mean distance (hand-tuned: the best candidate in hindsight)."""
    table = {}
    for epsilon in sorted({r["epsilon"] for r in rows}):
        subset = [r for r in rows if r["epsilon"] == epsilon]
        table[epsilon] = {
            "hand-tuned": np.nanmean([r["distance"] for r in subset if r["hand_tuned"]]),
            **{method: np.nanmean([r["distance"] for r in subset if r["method"] == method])
               for method in METHODS[1:]},
        }
    return table


def plot(rows, start_distance, path):
    """Mean distance to the mean against epsilon, one curve per method."""
    import matplotlib.pyplot as plt

    table = summary(rows)
    epsilons = sorted(table)
    figure, axis = plt.subplots(figsize=(5.5, 4))
    for method in METHODS:
        style = {"color": "black", "linewidth": 2.5} if method == "search" else {}
        axis.plot(epsilons, [table[e][method] for e in epsilons], marker="o", label=method,
                  **style)
    axis.axhline(start_distance, color="grey", linestyle=":", label="start (reads no data)")
    axis.set(xscale="log", yscale="log", xlabel="total epsilon",
             ylabel="distance to the Frechet mean", title="EMG covariances, SPD(8)")
    axis.legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def run(output_dir, quick=False):
    """Run every epsilon; write the CSV and the plot; print the summary."""
    epsilons = EPSILONS[1:2] if quick else EPSILONS
    n_seeds = 1 if quick else N_SEEDS
    grid = {"clip_norm": [1.0, 4.0], "step_size": [None]} if quick else GRID
    space = SPDMatrices(8)
    points = to_numpy(load_emg_covariances()[0])
    rows = []
    with threadpool_limits(1):
        mean = exact_frechet_mean(space, to_backend(points))
        start_distance = float(space.metric.dist(to_backend(np.eye(8)), mean))
        for epsilon in epsilons:
            rows += run_epsilon(space, points, mean, epsilon, grid, n_seeds)
            print(epsilon, {k: round(float(v), 4) for k, v in summary(rows)[epsilon].items()},
                  flush=True)
    for r in rows:
        r["start_distance"] = start_distance
    write_csv(output_dir / "private_search.csv", rows)
    plot(rows, start_distance, output_dir / "private_search.png")
