"""``NoiseDominatesWarning`` of PrivatePCA on classification pipelines.

``python -m benchmarks pca_pipeline_warning [--quick]``. A pipeline PCA (k components)
-> ``LogisticRegression`` on labelled real data, three ways: the default
``PrivatePCA(k, epsilon, data_norm=sqrt(p))``, the data-independent start
(``pca.start_basis``: the constant answer the warning compares with) and scikit-learn's
non-private ``PCA``. Each seed draws its own stratified split (a quarter held out) and
the private fit's noise. A cell's default is "better" (or "worse") than the start when
the mean paired accuracy difference exceeds two standard errors (or falls below minus
two); the warning is right when it fires where the default is not better and is silent
where it is.

Data, features mapped from a range to [0, 1]: the KEEL raw files of the PCA baseline
suite with their class labels (public ranges, ``baseline_suites.pca.KEEL``),
scikit-learn's digits (0..16) and wine, whose features have no public range and are
mapped from the range of all its rows (a check of the rule, not a private pipeline).
Writes ``results/pca_pipeline_warning.csv``.
"""

import math
import warnings

import numpy as np
from sklearn.datasets import load_digits, load_wine
from sklearn.decomposition import PCA
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer
from threadpoolctl import threadpool_limits

from benchmarks.baseline_suites.pca import KEEL
from benchmarks.federated import write_csv
from geomstats_dp.datasets.keel import _keel_directory
from geomstats_dp.learning import NoiseDominatesWarning, PrivatePCA
from geomstats_dp.learning.pca import start_basis

EPSILONS = (0.1, 1.0, 10.0)
COMPONENTS = (2, 5, 10)
SEEDS = 5


def keel_labelled(name, minimum, maximum):
    """Features of a KEEL raw file mapped from their public range to [0, 1], and its
    class labels (the last column)."""
    path = _keel_directory() / "data" / "balanced" / "raw" / f"{name}.dat"
    table = np.loadtxt(path, delimiter=",", comments="@", dtype=str)
    features = table[:, :-1].astype(float)
    return (features - minimum) / (maximum - minimum), np.char.strip(table[:, -1])


def datasets():
    """Name -> (rows in [0, 1]^p, labels)."""
    data = {name: keel_labelled(*source) for name, source in KEEL.items()}
    digits = load_digits()
    data["digits"] = (digits.data / 16.0, digits.target)
    wine = load_wine()
    low, high = wine.data.min(axis=0), wine.data.max(axis=0)
    data["wine"] = ((wine.data - low) / (high - low), wine.target)
    return data


def _accuracy(transform, split):
    X_train, X_test, y_train, y_test = split
    model = make_pipeline(transform, LogisticRegression(max_iter=3000))
    return model.fit(X_train, y_train).score(X_test, y_test)


def cell_rows(name, X, y, k, epsilon, seeds):
    """One row per seed: the three pipelines' accuracies, the ratio and the warning."""
    p = X.shape[1]
    start = start_basis(p, k).reshape(p, k)
    rows = []
    for seed in range(seeds):
        split = train_test_split(X, y, test_size=0.25, stratify=y, random_state=seed)
        private = PrivatePCA(k, epsilon=epsilon, data_norm=math.sqrt(p), random_state=seed)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            default = _accuracy(private, split)
        rows.append({
            "dataset": name, "n": len(X), "p": p, "k": k, "epsilon": epsilon, "seed": seed,
            "default": default,
            "start": _accuracy(FunctionTransformer(lambda rows: rows @ start), split),
            "non_private": _accuracy(PCA(k), split),
            "noise_ratio": float(private.noise_ratio_),
            "warned": any(issubclass(w.category, NoiseDominatesWarning) for w in caught)})
    return rows


def verdict(rows):
    """"better", "worse" or "tie": the default against the start, paired over seeds."""
    differences = np.array([row["default"] - row["start"] for row in rows])
    se = np.std(differences, ddof=1) / math.sqrt(len(differences))
    mean = differences.mean()
    return "better" if mean > 2 * se else "worse" if mean < -2 * se else "tie"


def run(output_dir, quick=False):
    """Write ``pca_pipeline_warning.csv``; print each cell and the warning's record."""
    rows, record = [], {}
    with threadpool_limits(1):
        for name, (X, y) in datasets().items():
            if quick and name != "wine":
                continue
            for k in COMPONENTS:
                if k >= X.shape[1]:
                    continue
                for epsilon in EPSILONS:
                    cell = cell_rows(name, X, y, k, epsilon, 2 if quick else SEEDS)
                    rows += cell
                    warned, outcome = cell[0]["warned"], verdict(cell)
                    record[(warned, outcome)] = record.get((warned, outcome), 0) + 1
                    print(name, k, epsilon, f"ratio {cell[0]['noise_ratio']:.3g}",
                          "warned" if warned else "silent", outcome,
                          *(f"{key} {np.mean([r[key] for r in cell]):.3f}"
                            for key in ("default", "start", "non_private")), flush=True)
    write_csv(output_dir / "pca_pipeline_warning.csv", rows)
    for (warned, outcome), count in sorted(record.items()):
        print("warned" if warned else "silent", outcome, count)
