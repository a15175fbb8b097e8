"""The time of a default PrivatePCA fit against one covariance and eigh, and scikit-learn.

100,000 x 64 Gaussian rows with a planted 3-dimensional structure. Timed in one process
with BLAS single-threaded, the variants interleaved over the repeats and the median CPU
time kept (``time.process_time``; wall time in the CSV):

- ``PrivatePCA(3, data_norm=B)`` default fit, B above every row's norm and B at the
  rows' median norm (half the rows scaled down, then again after centring);
- one X^T X / n and ``numpy.linalg.eigh`` (the non-private work at least);
- ``sklearn.decomposition.PCA(3)`` (centres and runs an SVD).

Writes ``pca_speed.csv`` (seconds, ratios to X^T X + eigh and to scikit-learn, load, and
the peak memory a fit allocates over the data's size, traced once after the timings) and
``pca_speed.png``.
"""

import os
import time
import tracemalloc
import warnings

import numpy as np
from threadpoolctl import threadpool_limits

from benchmarks.accounting import write_csv

GOALS = {"xtx_eigh": 2.0, "sklearn": 1.5}


def data(n_samples, n_features=64, seed=0):
    """Rows with 3 strong directions plus isotropic noise, seeded."""
    rng = np.random.default_rng(seed)
    directions = np.linalg.qr(rng.standard_normal((n_features, 3)))[0]
    return (rng.standard_normal((n_samples, 3)) * [3.0, 2.0, 1.5]) @ directions.T \
        + 0.3 * rng.standard_normal((n_samples, n_features))


def clocks():
    """(CPU seconds of the process, wall seconds) now."""
    return np.array([time.process_time(), time.perf_counter()])


def peak_over(call, nbytes):
    """The peak memory ``call()`` allocates (``tracemalloc``) over ``nbytes``."""
    tracemalloc.start()
    try:
        call()
        return tracemalloc.get_traced_memory()[1] / nbytes
    finally:
        tracemalloc.stop()


def rows(quick):
    """One row per PrivatePCA variant."""
    from sklearn.decomposition import PCA

    from geomstats_dp.learning import PrivatePCA

    n_samples, repeats = (20_000, 3) if quick else (100_000, 9)
    X = data(n_samples)
    norms = np.linalg.norm(X, axis=1)

    def private(bound):
        def fit():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                PrivatePCA(3, epsilon=1.0, delta=1e-5, data_norm=bound, random_state=0).fit(X)
        return fit

    calls = {
        "PrivatePCA, B above every row": private(1.01 * float(norms.max())),
        "PrivatePCA, B at the median row norm": private(float(np.median(norms))),
        "xtx_eigh": lambda: np.linalg.eigh(X.T @ X / n_samples),
        "sklearn": lambda: PCA(3).fit(X),
    }
    times = {name: [] for name in calls}
    with threadpool_limits(limits=1):
        for call in calls.values():
            call()  # imports, caches
        for _ in range(repeats):
            for name, call in calls.items():
                start = clocks()
                call()
                times[name].append(clocks() - start)
    median = {name: np.median(values, axis=0) for name, values in times.items()}
    found = []
    for name in list(calls)[:2]:
        (cpu, wall) = median[name]
        row = {"variant": name, "shape": f"{n_samples} x {X.shape[1]}", "seconds": cpu,
               "xtx_eigh_seconds": median["xtx_eigh"][0],
               "sklearn_seconds": median["sklearn"][0],
               "ratio_xtx_eigh": cpu / median["xtx_eigh"][0],
               "ratio_sklearn": cpu / median["sklearn"][0],
               "goal_xtx_eigh": GOALS["xtx_eigh"], "goal_sklearn": GOALS["sklearn"],
               "wall_ratio_xtx_eigh": wall / median["xtx_eigh"][1],
               "peak_memory_over_data": peak_over(calls[name], X.nbytes),
               "loadavg_1min": round(os.getloadavg()[0], 2)}
        print(f"  {name}: {cpu:.3f} s; / X^T X + eigh {row['ratio_xtx_eigh']:.2f}, "
              f"/ scikit-learn {row['ratio_sklearn']:.2f}; peak memory "
              f"{row['peak_memory_over_data']:.2f} X; load {row['loadavg_1min']}", flush=True)
        found.append(row)
    return found


def plot(path, found):
    """Both ratios of each variant, with their goals."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axis = plt.subplots(figsize=(6, 3.2))
    positions = np.arange(len(found))
    for offset, key, label in ((-0.2, "xtx_eigh", "/ X^T X + eigh"),
                               (0.2, "sklearn", "/ scikit-learn PCA")):
        axis.bar(positions + offset, [float(row[f"ratio_{key}"]) for row in found], 0.4,
                 label=label)
        axis.scatter(positions + offset, [float(row[f"goal_{key}"]) for row in found],
                     marker="_", s=300, color="black")
    axis.set_xticks(positions, [row["variant"].replace(", ", "\n") for row in found])
    axis.set_ylabel("CPU time ratio (dashes: goals)")
    axis.set_ylim(0, 1.3 * max(float(row[f"{kind}_{key}"]) for row in found
                               for kind in ("ratio", "goal") for key in ("xtx_eigh", "sklearn")))
    axis.legend(loc="upper center", ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def run(output_dir, quick=False):
    """Write ``pca_speed[_quick].csv`` and ``.png``."""
    found = rows(quick)
    path = output_dir / ("pca_speed_quick" if quick else "pca_speed")
    plot(path.with_suffix(".png"), found)
    write_csv(path.with_suffix(".csv"), found)
