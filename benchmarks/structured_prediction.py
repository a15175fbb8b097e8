"""Private hyperbolic structured prediction on WordNet mammals (Han et al. 2024, Figs 3a, 4).

``python -m benchmarks structured_prediction``. Features: the Laplacian eigenmap (r = 3)
of the closure; targets: the shipped 2-d Poincare embedding on ``Hyperboloid(2)``
(``load_wordnet_mammals``). "horse.n.01" and 50 other synsets (seeded draw) are held out;
the other 1,130 are the training pairs. For each held-out synset: the non-private
prediction (RGD on the same loss sum_i a_i h_D(d(w, y_i)), 200 steps of 0.5) and DP-RGD
predictions (``PrivateStructuredPrediction``, default schedule, delta = 1e-5, D = ``CLIP``) at
several epsilons, several seeds; the hyperbolic distance of each prediction to the
synset's true embedding. Timings: DP-RGD per row against the non-private solve, same run.
Results: ``results/structured_prediction.csv`` (one row per prediction),
``results/structured_prediction_summary.csv`` and ``results/structured_prediction.png``
(distance against epsilon; the Poincare disk with the tree, horse's true embedding, the
non-private and three private predictions).
"""

import time
import warnings

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from geomstats.geometry.hyperboloid import Hyperboloid  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from benchmarks.accounting import write_csv  # noqa: E402
from geomstats_dp._backend import to_backend, to_numpy  # noqa: E402
from geomstats_dp.datasets import load_wordnet_mammals  # noqa: E402
from geomstats_dp.datasets.wordnet import closure_edges  # noqa: E402
from geomstats_dp.learning import PrivateStructuredPrediction  # noqa: E402
from geomstats_dp.learning.structured_prediction import nonprivate_prediction  # noqa: E402
from geomstats_dp.privacy import PrivacyBudget  # noqa: E402

SPACE = Hyperboloid(2)
DELTA = 1e-5
BANDWIDTH = 0.2
REGULARIZATION = 1e-2
CLIP = 2.0  # D: Huber radius and clip norm (less noise than the data radius 7.6, see docs)
EPSILONS = (0.5, 1.0, 2.0, 5.0, 10.0, 20.0)
PLOT_EPSILONS = (1.0, 5.0, 20.0)
N_HELD_OUT = 50
N_SEEDS = 2
NONPRIVATE_STEPS = 200


def split(names, n_held_out, seed=0):
    """Indices of the training synsets and of "horse.n.01" + ``n_held_out`` others."""
    horse = int(np.flatnonzero(names == "horse.n.01")[0])
    others = np.setdiff1d(np.arange(len(names)), [horse])
    test = np.concatenate([[horse], np.random.default_rng(seed).choice(others, n_held_out,
                                                                        replace=False)])
    return np.setdiff1d(np.arange(len(names)), test), test


def to_disk(points):
    """Hyperboloid (extrinsic) to Poincare-disk coordinates."""
    points = to_numpy(points)
    return points[..., 1:] / (1 + points[..., :1])


def distance(a, b):
    return float(SPACE.metric.dist(to_backend(a), to_backend(b)))


def run(output_dir, quick=False):
    """Write the CSVs and the figure; print the summary."""
    epsilons = (1.0, 10.0) if quick else EPSILONS
    n_held_out, n_seeds = (5, 1) if quick else (N_HELD_OUT, N_SEEDS)
    features, embeddings, names = load_wordnet_mammals()
    features, embeddings = to_numpy(features), to_numpy(embeddings)
    train, test = split(names, n_held_out)
    rows, keep = [], {}
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = PrivateStructuredPrediction(SPACE, BANDWIDTH, REGULARIZATION, clip_norm=CLIP,
                                        method="rgd")
        model.fit(features[train], embeddings[train])
        weights = model.weights(features[test])
        start = time.perf_counter()
        nonprivate = [nonprivate_prediction(SPACE, row, embeddings[train], NONPRIVATE_STEPS,
                                            radius=CLIP) for row in weights]
        nonprivate_time = (time.perf_counter() - start) / len(test)
        for word, truth, point in zip(names[test], embeddings[test], nonprivate):
            rows.append(dict(word=word, method="RGD", epsilon="inf", seed=0,
                             distance=distance(point, truth), start_distance=distance(
                                 np.array([1.0, 0.0, 0.0]), truth)))
        private_time = []
        for epsilon in epsilons:
            for seed in range(n_seeds):
                budget = PrivacyBudget(epsilon * len(test), min(DELTA * len(test), 0.5))
                model.set_params(epsilon=epsilon, delta=DELTA, random_state=seed,
                                 budget=budget)
                start = time.perf_counter()
                try:
                    predictions = to_numpy(model.predict(features[test]))
                except ValueError:  # an iterate overflowed the hyperboloid's coordinates
                    predictions = np.full((len(test), 3), np.nan)
                private_time.append((time.perf_counter() - start) / len(test))
                if seed == 0:
                    keep[epsilon] = predictions[0]
                for word, truth, point in zip(names[test], embeddings[test], predictions):
                    dist = distance(point, truth) if np.isfinite(point).all() else np.nan
                    rows.append(dict(word=word, method="DP-RGD", epsilon=epsilon, seed=seed,
                                     distance=dist, start_distance=distance(
                                         np.array([1.0, 0.0, 0.0]), truth)))
    write_csv(output_dir / "structured_prediction.csv", rows)
    summary = _summary(rows, nonprivate_time, float(np.mean(private_time)),
                       model.noise_multiplier_)
    write_csv(output_dir / "structured_prediction_summary.csv", summary)
    for line in summary:
        print(line)
    _plot(output_dir / "structured_prediction.png", summary, embeddings, names,
          nonprivate[0], keep)


def _summary(rows, nonprivate_time, private_time, noise_multiplier):
    """Median and mean distance to the truth per (method, epsilon), with the timings."""
    summary = []
    for method, epsilon in dict.fromkeys((row["method"], row["epsilon"]) for row in rows):
        dist = np.array([row["distance"] for row in rows
                         if row["method"] == method and row["epsilon"] == epsilon])
        finite = dist[np.isfinite(dist)]
        summary.append(dict(
            method=method, epsilon=epsilon, n_predictions=len(dist),
            n_failed=int(len(dist) - len(finite)),
            median_distance=round(float(np.median(finite)), 4),
            mean_distance=round(float(np.mean(finite)), 4),
            stderr=round(float(np.std(finite) / np.sqrt(len(finite))), 4),
            seconds_per_row=round(nonprivate_time if method == "RGD" else private_time, 4),
            time_ratio_to_rgd=round(1.0 if method == "RGD" else private_time
                                    / nonprivate_time, 2),
        ))
    start = np.array([row["start_distance"] for row in rows if row["method"] == "RGD"])
    summary.append(dict(method="start (origin)", epsilon="-", n_predictions=len(start),
                        n_failed=0, median_distance=round(float(np.median(start)), 4),
                        mean_distance=round(float(np.mean(start)), 4),
                        stderr=round(float(np.std(start) / np.sqrt(len(start))), 4),
                        seconds_per_row=0.0, time_ratio_to_rgd=0.0))
    return summary


def _plot(path, summary, embeddings, names, nonprivate_horse, private_horse):
    figure, (left, right) = plt.subplots(1, 2, figsize=(12, 5.5))
    private = [row for row in summary if row["method"] == "DP-RGD"]
    rgd = next(row for row in summary if row["method"] == "RGD")
    start = next(row for row in summary if row["method"].startswith("start"))
    left.errorbar([row["epsilon"] for row in private],
                  [row["mean_distance"] for row in private],
                  yerr=[row["stderr"] for row in private], marker="o", label="DP-RGD")
    left.axhline(rgd["mean_distance"], color="k", linestyle="--", label="RGD (non-private)")
    left.axhline(start["mean_distance"], color="grey", linestyle=":", label="start (origin)")
    left.set(xscale="log", xlabel="epsilon (per prediction, delta = 1e-5)",
             ylabel="mean hyperbolic distance to the true embedding",
             title="Held-out WordNet mammals (horse + 50)")
    left.legend()
    disk = to_disk(embeddings)
    names_list, edges = closure_edges()
    direct = _direct_edges(edges, len(names_list))
    for child, parent in direct:
        right.plot(*disk[[child, parent]].T, color="0.85", linewidth=0.4, zorder=1)
    right.scatter(*disk.T, s=2, color="0.6", zorder=2)
    horse = int(np.flatnonzero(names == "horse.n.01")[0])
    right.scatter(*disk[horse], s=80, color="k", marker="*", label="horse (true)", zorder=4)
    right.scatter(*to_disk(nonprivate_horse), s=50, color="tab:blue", marker="s",
                  label="non-private", zorder=4)
    for (epsilon, point), color in zip(
            ((e, private_horse[e]) for e in PLOT_EPSILONS if e in private_horse),
            ("tab:red", "tab:orange", "tab:green")):
        if np.isfinite(point).all():
            right.scatter(*to_disk(point), s=50, color=color, marker="o",
                          label=f"DP-RGD, epsilon={epsilon:g}", zorder=4)
    right.add_patch(plt.Circle((0, 0), 1, fill=False, color="k", linewidth=0.8))
    right.set(xlim=(-1.05, 1.05), ylim=(-1.05, 1.05), aspect="equal",
              title="Poincare disk: mammal tree and predictions of horse")
    right.legend(loc="lower left", fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)


def _direct_edges(edges, n_nodes):
    """The transitive reduction of the closure: (child, parent) edges of the tree."""
    above = np.zeros((n_nodes, n_nodes), dtype=bool)
    above[edges[:, 0], edges[:, 1]] = True
    implied = (above.astype(np.int32) @ above.astype(np.int32)) > 0
    return [(c, p) for c, p in edges if not implied[c, p]]
