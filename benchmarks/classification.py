"""Private classification of covariance matrices: accuracy against epsilon.

``python -m benchmarks classification``. Data shipped offline, none used by the tests:

* ``emg``: the EMG covariances (``load_emg_covariances``: 3,898 SPD(8), 4 gestures);
* ``connectomes``: geomstats' MSLP connectomes (86 SPD(28) correlation matrices,
  schizophrenia or control);
* ``digits``: scikit-learn's digits (1,797 images of 8 x 8 pixels, 10 classes), each
  image turned into the SPD(8) matrix (Z^T Z / 8 + I) / 2, Z its pixel rows divided by
  the public pixel range 16 (a public map of each record).

Methods (5 seeds x stratified 5-fold cross-validation, epsilon 0.1, 1, 10, delta 1e-5):

* ``mdm``: geomstats' non-private ``RiemannianMinimumDistanceToMean``;
* ``tangent_lr``: geomstats' non-private ``ToTangentSpace`` (at the Frechet mean) and
  scikit-learn's ``LogisticRegression`` (defaults);
* ``private_mdm``: ``PrivateMDM`` at its defaults (private labels, the public class
  list given);
* ``private_tangent``: ``PrivateTangentSpaceClassifier`` at its defaults (noisy
  gradient descent);
* ``private_tangent_op``: the same with ``method="objective_perturbation"``;
* ``identity_tangent`` (baseline): clipped tangent vectors at the public identity with
  the same private linear model (``PrivateTangentSpaceClassifier(base_point=I)``);
* ``embedding_means`` (baseline): private class means of the matrices in the Euclidean
  embedding (``PrivateMDM`` on the flattened matrices with the Euclidean metric, one
  round from the public origin: the clipped class means), the nearest in the Frobenius
  distance.

Every setting is a public default of the estimators, derived on synthetic data
(``benchmarks/classification_defaults.py``), none tuned on these data.
Results: ``results/classification.csv`` (one row per method, epsilon, seed, fold),
``results/classification.png``.
"""

import time
import warnings

import numpy as np
from geomstats.geometry.euclidean import Euclidean
from geomstats.geometry.spd_matrices import SPDMatrices
from geomstats.learning.mdm import RiemannianMinimumDistanceToMean
from geomstats.learning.preprocessing import ToTangentSpace
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold
from threadpoolctl import threadpool_limits

from benchmarks.accounting import write_csv
from geomstats_dp._backend import to_numpy
from geomstats_dp.datasets import load_emg_covariances
from geomstats_dp.learning import PrivateMDM, PrivateTangentSpaceClassifier

EPSILONS = (0.1, 1.0, 10.0)
DELTA = 1e-5
N_SEEDS = 5
N_FOLDS = 5


def load_connectome_data():
    """The MSLP connectomes, SPD(28), and their labels (0 / 1)."""
    from geomstats.datasets.utils import load_connectomes

    matrices, _, labels = load_connectomes()
    return np.asarray(to_numpy(matrices)), np.asarray(labels)


def load_digit_covariances():
    """scikit-learn's digits as SPD(8) matrices (module docstring) and their labels."""
    from sklearn.datasets import load_digits

    digits = load_digits()
    rows = digits.images / 16.0
    return (np.einsum("nij,nik->njk", rows, rows) / 8 + np.eye(8)) / 2, digits.target


DATASETS = {"emg": lambda: tuple(map(np.asarray, map(to_numpy, load_emg_covariances()))),
            "connectomes": load_connectome_data, "digits": load_digit_covariances}


def _non_private(name, space, X_train, y_train, X_test):
    if name == "mdm":
        model = RiemannianMinimumDistanceToMean(space).fit(X_train, y_train)
        return to_numpy(model.predict(X_test))
    lift = ToTangentSpace(space).fit(X_train)
    model = LogisticRegression(max_iter=2000).fit(to_numpy(lift.transform(X_train)),
                                                  y_train)
    return model.predict(to_numpy(lift.transform(X_test)))


def _private(name, space, classes, epsilon, seed):
    if name == "private_mdm":
        return PrivateMDM(space, epsilon=epsilon, delta=DELTA, classes=classes,
                          random_state=seed)
    if name == "private_tangent":
        return PrivateTangentSpaceClassifier(space, epsilon=epsilon, delta=DELTA,
                                             classes=classes, random_state=seed)
    if name == "private_tangent_op":
        return PrivateTangentSpaceClassifier(space, epsilon=epsilon, delta=DELTA,
                                             classes=classes, random_state=seed,
                                             method="objective_perturbation")
    if name == "identity_tangent":
        return PrivateTangentSpaceClassifier(space, epsilon=epsilon, delta=DELTA,
                                             classes=classes, random_state=seed,
                                             base_point=np.eye(space.n))
    flat = Euclidean(space.n * space.n)
    return PrivateMDM(flat, epsilon=epsilon, delta=DELTA, classes=classes, n_iter=1,
                      reference_fraction=0.0, random_state=seed)


PRIVATE = ("private_mdm", "private_tangent", "private_tangent_op", "identity_tangent",
           "embedding_means")


def _fold_rows(dataset, space, X, y, train, test, seed, fold):
    classes = np.unique(y)  # the public class list of the dataset
    rows = []
    for name in ("mdm", "tangent_lr"):
        start = time.perf_counter()
        predicted = _non_private(name, space, X[train], y[train], X[test])
        rows.append({"dataset": dataset, "method": name, "epsilon": np.inf, "seed": seed,
                     "fold": fold, "accuracy": float(np.mean(predicted == y[test])),
                     "seconds": time.perf_counter() - start})
    for epsilon in EPSILONS:
        for name in PRIVATE:
            model = _private(name, space, classes, epsilon, seed * 100 + fold)
            flat = name == "embedding_means"
            train_X = X[train].reshape(len(train), -1) if flat else X[train]
            test_X = X[test].reshape(len(test), -1) if flat else X[test]
            start = time.perf_counter()
            predicted = model.fit(train_X, y[train]).predict(test_X)
            rows.append({"dataset": dataset, "method": name, "epsilon": epsilon,
                         "seed": seed, "fold": fold,
                         "accuracy": float(np.mean(predicted == y[test])),
                         "seconds": time.perf_counter() - start})
    return rows


def run(output_dir, quick=False):
    """Run every dataset and method; write the CSV and the plot."""
    n_seeds, n_folds = (1, 2) if quick else (N_SEEDS, N_FOLDS)
    rows = []
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for dataset, load in DATASETS.items():
            X, y = load()
            space = SPDMatrices(X.shape[-1])
            for seed in range(n_seeds):
                splits = StratifiedKFold(n_folds, shuffle=True, random_state=seed).split(X, y)
                for fold, (train, test) in enumerate(splits):
                    rows.extend(_fold_rows(dataset, space, X, y, train, test, seed, fold))
            _print_summary(rows, dataset)
    write_csv(output_dir / "classification.csv", rows)
    _plot(rows, output_dir / "classification.png")


def _summary(rows, dataset):
    """(method, epsilon) -> (mean accuracy, its standard error over the runs)."""
    table = {}
    for row in rows:
        if row["dataset"] == dataset:
            table.setdefault((row["method"], row["epsilon"]), []).append(row["accuracy"])
    return {key: (np.mean(values), np.std(values) / np.sqrt(len(values)))
            for key, values in table.items()}


def _print_summary(rows, dataset):
    for (method, epsilon), (mean, error) in sorted(_summary(rows, dataset).items()):
        print(f"{dataset:12s} {method:18s} epsilon={epsilon:<5g} accuracy {mean:.3f} "
              f"+- {error:.3f}", flush=True)


def _plot(rows, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    datasets = list(DATASETS)
    figure, axes = plt.subplots(1, len(datasets), figsize=(5 * len(datasets), 4))
    for axis, dataset in zip(axes, datasets):
        summary = _summary(rows, dataset)
        for method in PRIVATE:
            means = [summary[(method, epsilon)][0] for epsilon in EPSILONS
                     if (method, epsilon) in summary]
            if means:
                axis.plot(EPSILONS[:len(means)], means, marker="o", label=method)
        for method, style in (("mdm", ":"), ("tangent_lr", "--")):
            if (method, np.inf) in summary:
                axis.axhline(summary[(method, np.inf)][0], linestyle=style, color="k",
                             label=f"{method} (non-private)")
        axis.set(xscale="log", xlabel="epsilon", ylabel="accuracy", title=dataset)
    axes[0].legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(path, dpi=120)
