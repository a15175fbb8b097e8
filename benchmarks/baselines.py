"""Every estimator's default release against the simple private baselines.

``python -m benchmarks baselines`` (``BASELINES=means,pca`` runs some suites only).
Each suite (``benchmarks/baseline_suites/<name>.py``) exposes ``ESTIMATOR`` and
``rows(quick) -> iterable of dict`` with the columns ``COLUMNS``: one row per release
(method "default" is the estimator with its defaults, "non_private" the non-private
answer, any other name a simple private baseline), ``error`` lower is better (the suite's
docstring says what it measures). Every setting is a public choice; nothing is tuned on
the data. Results: ``results/baselines_<suite>.csv`` (rows), ``results/baselines.csv``
(mean and standard error per cell, over every suite's CSV present) and
``results/baselines.png``; the page is docs/benchmarks/baselines.md.
"""

import csv
import importlib
import os
import pkgutil

import numpy as np

from benchmarks import baseline_suites
from benchmarks.accounting import read_csv

COLUMNS = ("estimator", "dataset", "method", "epsilon", "seed", "error", "seconds", "n",
           "dim")
SUMMARY = ("estimator", "dataset", "epsilon", "method", "n_seeds", "error_mean",
           "error_se", "seconds_mean", "default_loses")
EPSILONS = (0.1, 1.0, 10.0)
N_SEEDS = 5


def suites():
    """Names of the baseline suites."""
    return sorted(info.name for info in pkgutil.iter_modules(baseline_suites.__path__)
                  if not info.name.startswith("_"))


def write_rows(path, rows):
    """Write release rows (dicts with ``COLUMNS``) to ``path``."""
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        writer.writeheader()
        for row in rows:
            writer.writerow({key: row[key] for key in COLUMNS})


def read_rows(path):
    """Release rows of one suite's CSV (numbers parsed)."""
    rows = read_csv(path)
    for row in rows:
        for key in ("epsilon", "error", "seconds"):
            row[key] = float(row[key])
    return rows


def summarize(rows):
    """Mean and standard error per (estimator, dataset, epsilon, method).

    ``default_loses`` marks the default's cell when its mean error exceeds the best
    private baseline's by more than two standard errors of the difference.
    """
    cells = {}
    for row in rows:
        key = (row["estimator"], row["dataset"], row["epsilon"], row["method"])
        cells.setdefault(key, []).append(row)
    summary = {}
    for key, group in cells.items():
        errors = np.array([row["error"] for row in group])
        summary[key] = {
            "n_seeds": len(errors), "error_mean": errors.mean(),
            "error_se": errors.std(ddof=1) / np.sqrt(len(errors)) if len(errors) > 1 else 0.0,
            "seconds_mean": float(np.mean([row["seconds"] for row in group])),
        }
    out = []
    for (estimator, dataset, epsilon, method), stats in sorted(summary.items()):
        loses = ""
        if method == "default":
            baselines = [s for (e, d, eps, m), s in summary.items()
                         if (e, d, eps) == (estimator, dataset, epsilon)
                         and m not in ("default", "non_private")]
            if baselines:
                best = min(baselines, key=lambda s: s["error_mean"])
                margin = 2 * np.hypot(stats["error_se"], best["error_se"])
                loses = str(bool(stats["error_mean"] > best["error_mean"] + margin))
        out.append({"estimator": estimator, "dataset": dataset, "epsilon": epsilon,
                    "method": method, **stats, "default_loses": loses})
    return out


def plot(summary, path):
    """One panel per (estimator, dataset): error against epsilon, one line per method."""
    import matplotlib.pyplot as plt

    panels = sorted({(row["estimator"], row["dataset"]) for row in summary})
    columns = 3
    rows_ = int(np.ceil(len(panels) / columns))
    figure, axes = plt.subplots(rows_, columns, figsize=(4 * columns, 3 * rows_),
                                squeeze=False)
    for axis, (estimator, dataset) in zip(axes.flat, panels):
        cells = [row for row in summary
                 if (row["estimator"], row["dataset"]) == (estimator, dataset)]
        for method in sorted({row["method"] for row in cells}):
            line = sorted((row["epsilon"], row["error_mean"], row["error_se"])
                          for row in cells
                          if row["method"] == method and np.isfinite(row["epsilon"]))
            if not line:
                continue
            eps, mean, se = (np.array(v) for v in zip(*line))
            axis.errorbar(eps, mean, yerr=2 * se, label=method, marker="o", capsize=2)
        axis.set_xscale("log")
        axis.set_title(f"{estimator}: {dataset}", fontsize=9)
        axis.set_xlabel("epsilon")
        axis.set_ylabel("error")
        axis.legend(fontsize=6)
    for axis in list(axes.flat)[len(panels):]:
        axis.set_visible(False)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def run(output_dir, quick=False):
    """Run the selected suites, write their CSVs, then the summary of all present."""
    selected = os.environ.get("BASELINES")
    names = selected.split(",") if selected else suites()
    for name in names:
        suite = importlib.import_module(f"benchmarks.baseline_suites.{name}")
        print(f"--- baselines: {name} ({suite.ESTIMATOR})", flush=True)
        write_rows(output_dir / f"baselines_{name}.csv", suite.rows(quick))
    rows = []
    for name in suites():
        path = output_dir / f"baselines_{name}.csv"
        if path.exists():
            rows += read_rows(path)
    summary = summarize(rows)
    with open(output_dir / "baselines.csv", "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=SUMMARY)
        writer.writeheader()
        writer.writerows(summary)
    plot(summary, output_dir / "baselines.png")
    for row in summary:
        if row["default_loses"] == "True":
            print(f"default loses: {row['estimator']} {row['dataset']} "
                  f"epsilon={row['epsilon']}", flush=True)
