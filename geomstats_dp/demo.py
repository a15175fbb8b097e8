"""The ``geomstats-dp demo``: private Frechet means of geomstats' EMG covariance matrices."""

import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from geomstats.geometry.spd_matrices import SPDMatrices  # noqa: E402

from geomstats_dp._backend import to_backend, to_numpy  # noqa: E402
from geomstats_dp.datasets import EMG_GESTURES, load_emg_covariances  # noqa: E402
from geomstats_dp.learning import PrivateFrechetMean  # noqa: E402
from geomstats_dp.learning.reference import exact_frechet_mean  # noqa: E402
from geomstats_dp.privacy import PrivacyBudget  # noqa: E402


def _release(space, points, method, epsilon, delta, clip_norm, seed):
    """Fit once; return the estimator, the exact mean and both wall times."""
    start = time.perf_counter()
    estimator = PrivateFrechetMean(
        space, epsilon=epsilon, delta=delta, method=method, clip_norm=clip_norm,
        budget=PrivacyBudget(epsilon, delta), random_state=seed,
        **({"radius": clip_norm, "center": to_backend(np.eye(8))} if method == "laplace" else {}),
    ).fit(points)
    private_time = time.perf_counter() - start
    start = time.perf_counter()
    exact = exact_frechet_mean(space, points)
    exact_time = time.perf_counter() - start
    return estimator, exact, private_time, exact_time


def run_demo(epsilon=1.0, delta=1e-5, clip_norm=5.0, method="auto", seed=0,
             output="demo_output"):
    """Release private means of the EMG covariances (all, then per gesture); plot them.

    Each release is charged to its own budget (the gesture classes are disjoint subsets
    and "all" is their union: releasing all five from one dataset would compose).

    Parameters
    ----------
    epsilon, delta : float
        Privacy of each release.
    clip_norm : float
        Public bound on the distance of a covariance to the iterates (5 is a bound on the
        affine-invariant distances seen in EMG covariances of 8-bit recordings).
    method : {"auto", "rgd", "rsgd", "rsvrg", "tangent", "two_stage", "laplace"}
        "auto" chooses from public quantities (the chosen method is printed).
    seed : int
    output : str
        Folder of the plot ``emg_private_means.png``.

    Returns
    -------
    rows : list of dict
        One row per release, as printed.
    """
    space = SPDMatrices(8)
    covariances, labels = load_emg_covariances()
    groups = [("all", covariances)] + [
        (name, covariances[labels == index]) for index, name in enumerate(EMG_GESTURES)
    ]
    print(f"geomstats-dp demo: private Frechet mean of EMG covariances, SPD(8), "
          f"affine-invariant metric; method={method}, epsilon={epsilon}, delta={delta}, "
          f"clip_norm={clip_norm}")
    header = (f"{'data':>9} {'n':>5} {'method':>9} {'eps spent':>9} {'noise mult.':>11} "
              f"{'dist(priv,exact)':>16} "
              f"{'median spread':>13} {'private s':>9} {'exact s':>7}")
    print(header)
    rows = []
    for name, points in groups:
        estimator, exact, private_time, exact_time = _release(
            space, points, method, epsilon, delta, clip_norm, seed)
        spread = float(np.median(to_numpy(space.metric.dist(points, exact))))
        row = {
            "data": name, "n": len(points), "epsilon_spent": estimator.budget_.spent_epsilon,
            "noise_multiplier": estimator.noise_multiplier_,
            "distance": float(space.metric.dist(estimator.estimate_, exact)),
            "spread": spread, "private_seconds": private_time, "exact_seconds": exact_time,
            "private": to_numpy(estimator.estimate_), "exact": to_numpy(exact),
        }
        rows.append(row)
        print(f"{name:>9} {row['n']:>5} {estimator.method_:>9} {row['epsilon_spent']:>9.4f} "
              f"{row['noise_multiplier']:>11.3f} {row['distance']:>16.4f} {spread:>13.3f} "
              f"{private_time:>9.2f} {exact_time:>7.2f}")
    path = _plot(rows, Path(output), method, epsilon)
    print(f"plot written to {path}")
    return rows


def _plot(rows, folder, method, epsilon):
    """Distances to the exact means against the data spread, and the 'all' means."""
    folder.mkdir(parents=True, exist_ok=True)
    figure, axes = plt.subplots(1, 3, figsize=(14, 4))
    names = [row["data"] for row in rows]
    positions = np.arange(len(rows))
    axes[0].bar(positions - 0.2, [row["distance"] for row in rows], 0.4,
                label="private vs exact mean")
    axes[0].bar(positions + 0.2, [row["spread"] for row in rows], 0.4,
                label="median distance of data to the mean")
    axes[0].set_xticks(positions, names)
    axes[0].set_ylabel("affine-invariant distance")
    axes[0].set_title(f"{method}, epsilon={epsilon}")
    axes[0].legend(fontsize=8)
    for axis, key in zip(axes[1:], ("exact", "private")):
        image = axis.imshow(rows[0][key], cmap="viridis")
        axis.set_title(f"{key} Frechet mean (all gestures)")
        figure.colorbar(image, ax=axis, fraction=0.046)
    figure.tight_layout()
    path = folder / "emg_private_means.png"
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return path
