"""PrivatePCA shrunk towards the public start: the constant c, derived on synthetic data.

``python -m benchmarks pca_shrinkage [--quick]`` (issue 31's noise-dominated PCA cells).
The release: the top-k eigenvectors of M + tau P0, M the Analyze Gauss matrix (the
private centred second moment plus its symmetric Gaussian noise of standard deviation
sigma), P0 the projector on the public start ``pca.start_basis(p, k)`` and
tau = c 2 sigma sqrt(p) (the public scale of the noise matrix's spectral norm): pure
post-processing of Analyze Gauss, c = 0 is Analyze Gauss. Every c is applied to the same
noisy matrix (the same data, mean and noise draws), with the baseline suite's public
settings (``benchmarks/baseline_suites/pca.py``: delta 1e-5, a private mean on 10% of
mu^2, B = sqrt(p)).

Synthetic spiked data in [0, 1]^p: x = clip(0.5 + sum_j a_j sqrt(lambda_j) v_j + 0.1 g, 0, 1),
a_j uniform of unit variance, g standard Gaussian, v_j orthonormal directions drawn per
seed (independent of the start), lambda_j from ``spike`` B^2 down to ``spike`` B^2 / 2 over
the k spikes (spike 0: no spike). Error as the suite's: 1 - captured / top-k variance of
the centred data.

The rule, fixed before the run (docs/benchmarks/pca.md, "Shrinking towards the public
start"): a derivation cell is "learnt" where Analyze Gauss beats the public start beyond
two standard errors (the suite's rule); c* is the largest c of ``CONSTANTS`` such that no
c' <= c loses to Analyze Gauss beyond two standard errors in any learnt cell.

Then the baseline suite's default rows recomputed with ``PrivatePCA(start_shrinkage=c)``
for c* (and ``SUITE_CONSTANTS``, for information), against the committed rows of the
other methods (``results/baselines_pca.csv``: the same seeds), and the suite's lost cells
(``baselines.summarize``) before and after.

Last, public band rules on the committed suite rows (``band_rules``).

Writes ``results/pca_shrinkage.csv`` (p, n, k, spike, epsilon, noise_scale, method, c,
n_seeds, error_mean, error_se: one row per cell and c) and
``results/pca_shrinkage_suite.csv`` (the recomputed default rows, with c).
"""

import itertools
import warnings
from pathlib import Path

import numpy as np

from benchmarks.baseline_suites import pca as suite
from benchmarks.baseline_suites.pca import DELTA, MEAN_SHARE, _bounded, _private_centred
from benchmarks.baselines import EPSILONS as SUITE_EPSILONS
from benchmarks.baselines import N_SEEDS, read_rows, summarize
from benchmarks.federated import write_csv
from geomstats_dp.learning import PrivatePCA
from geomstats_dp.learning._pca_rows import symmetric_noise
from geomstats_dp.learning.mechanisms.analyze_gauss import (
    AnalyzeGaussRelease,
    start_shrunk_eigh,
)
from geomstats_dp.learning.pca import start_basis

DIMENSIONS = (16, 36, 60, 90)
SIZES = (200, 1000, 5000, 20000)
COMPONENTS = (1, 5)
SPIKES = (0.0, 0.003, 0.01, 0.03, 0.09)
EPSILONS = (0.1, 1.0, 10.0)
SEEDS = 8
CONSTANTS = (0.0, 0.125, 0.25, 0.375, 0.5, 0.75, 1.0, 1.5, 2.0)
THRESHOLDS = (0.9, 1.0, 1.1, 1.2, 1.35, 1.5, 2.0)
BACKGROUND = 0.1
SUITE_CONSTANTS = (0.5, 1.0, 2.0)
COMMITTED = Path(__file__).resolve().parent / "results" / "baselines_pca.csv"


def spiked_data(p, n, k, spike, rng):
    """Rows in [0, 1]^p with k spikes of variance spike p down to spike p / 2."""
    directions = np.linalg.qr(rng.standard_normal((p, k)))[0]
    strengths = spike * p * np.linspace(1.0, 0.5, k)
    factors = rng.uniform(-np.sqrt(3), np.sqrt(3), (n, k)) * np.sqrt(strengths)
    rows = 0.5 + factors @ directions.T + BACKGROUND * rng.standard_normal((n, p))
    return np.clip(rows, 0.0, 1.0)


def noise_scale(p, n, epsilon):
    """2 sigma sqrt(p), sigma the default's matrix noise (the suite's settings)."""
    mechanism = AnalyzeGaussRelease(n, 1, float(np.sqrt(p)), epsilon, DELTA, MEAN_SHARE)
    return 2 * mechanism.matrix_event.noise_std * np.sqrt(p)


def cell_rows(p, n, k, spike, epsilon, seed):
    """Every c on one noisy matrix, and the public start."""
    rng = np.random.default_rng([p, n, k, int(spike * 1000), seed])
    X = spiked_data(p, n, k, spike, rng)
    centred = X - X.mean(axis=0)
    covariance = centred.T @ centred / n
    top = np.linalg.eigvalsh(covariance)[::-1][:k].sum()
    bound = np.sqrt(p)
    noise_rng = np.random.default_rng([seed, int(epsilon * 10), 7])
    rows = _private_centred(_bounded(X, bound), bound, epsilon, noise_rng)
    scale = noise_scale(p, n, epsilon)
    sigma = scale / (2 * np.sqrt(p))
    matrix = rows.T @ rows / n + symmetric_noise(sigma, p, noise_rng)
    start = start_basis(p, k).reshape(p, k)
    base = {"p": p, "n": n, "k": k, "spike": spike, "epsilon": epsilon, "seed": seed,
            "noise_scale": scale}

    def error(basis):
        return float(1 - np.trace(basis.T @ covariance @ basis) / top)

    out = [{**base, "method": "public_start", "c": "", "error": error(start)}]
    for c in CONSTANTS:
        basis = start_shrunk_eigh(matrix, start, c * scale)[1][:, :k]
        out.append({**base, "method": "shrunk", "c": c, "error": error(basis)})
    values = np.linalg.eigvalsh(matrix)
    statistic = (values[-1] - values.mean()) / scale
    for t in THRESHOLDS:
        basis = start if statistic < t else start_shrunk_eigh(matrix, start, 0)[1][:, :k]
        out.append({**base, "method": "test", "c": t, "error": error(basis)})
    return out


def cells(rows):
    """(p, n, k, spike, epsilon) -> method/c -> errors over the seeds."""
    table = {}
    for row in rows:
        key = (row["p"], row["n"], row["k"], row["spike"], row["epsilon"])
        name = row["method"] if row["method"] == "public_start" else (
            row["method"], float(row["c"]))
        table.setdefault(key, {}).setdefault(name, []).append(float(row["error"]))
    return table


def summary_rows(rows):
    """One row per cell and method/parameter: mean and standard error over the seeds."""
    scales = {(row["p"], row["n"], row["k"], row["spike"], row["epsilon"]):
              row["noise_scale"] for row in rows}
    out = []
    for key, cell in cells(rows).items():
        for name, errors in cell.items():
            method, c = (name, "") if name == "public_start" else name
            mean, se = _stats(errors)
            out.append({**dict(zip(("p", "n", "k", "spike", "epsilon"), key)),
                        "noise_scale": f"{scales[key]:.6g}", "method": method, "c": c,
                        "n_seeds": len(errors), "error_mean": f"{mean:.6g}",
                        "error_se": f"{se:.6g}"})
    return out


def band_rules():
    """On the committed suite rows: the default's rows replaced, where its public
    noise_ratio_ exceeds 1, by those of the public start or of the noisy power method
    (the suite's own draws: a tie with that baseline, an optimistic bound); and the cells
    where the default and the suite's Analyze Gauss (the same mechanism, other draws)
    differ beyond two standard errors."""
    committed = read_rows(COMMITTED)

    def ratio(row):
        dim, n = int(row["dim"]), int(row["n"])
        k = int(row["dataset"].rsplit("k=", 1)[1])
        release = AnalyzeGaussRelease(n, k, float(np.sqrt(dim)), row["epsilon"], DELTA,
                                      MEAN_SHARE)
        return release.noise_ratio(dim)

    band = {(row["dataset"], row["epsilon"]) for row in committed
            if row["method"] == "default" and ratio(row) > 1}
    print(f"cells with noise_ratio_ > 1: {sorted(band)}", flush=True)
    for method in ("public_start", "noisy_power"):
        replaced = [row for row in committed if row["method"] != "default"
                    or (row["dataset"], row["epsilon"]) not in band]
        replaced += [{**row, "method": "default"} for row in committed
                     if row["method"] == method and (row["dataset"], row["epsilon"]) in band]
        print(f"lost with {method} in the band: {lost_cells(replaced)}", flush=True)
    twins = [row for row in committed if row["method"] in ("default", "analyze_gauss")]
    lost_to_twin = lost_cells(twins)
    won_from_twin = lost_cells([{**row, "method": {"default": "analyze_gauss",
                                                   "analyze_gauss": "default"}[row["method"]]}
                                for row in twins])
    print(f"default beyond 2 s.e. of its twin: worse {lost_to_twin}, better "
          f"{won_from_twin}", flush=True)


def _stats(errors):
    errors = np.asarray(errors)
    return errors.mean(), errors.std(ddof=1) / np.sqrt(len(errors))


def beats(first, second):
    """The suite's rule: first's mean error below second's by more than 2 s.e."""
    (m1, s1), (m2, s2) = _stats(first), _stats(second)
    return m1 < m2 - 2 * np.hypot(s1, s2)


def decide(rows, method="shrunk", values=CONSTANTS[1:], none=None):
    """Per value of ``method``'s parameter: learnt cells lost to Analyze Gauss, cells
    lost and won among all; and the largest value before the first loss (``none`` if
    the first loses)."""
    table = cells(rows)
    analyze_gauss = ("shrunk", 0.0)
    learnt = [key for key, cell in table.items()
              if beats(cell[analyze_gauss], cell["public_start"])]
    summary, chosen, passing = [], none, True
    for value in values:
        name = (method, value)
        lost = [key for key in learnt if beats(table[key][analyze_gauss], table[key][name])]
        passing = passing and not lost
        chosen = value if passing else chosen
        summary.append({
            "method": method, "value": value, "learnt_cells": len(learnt),
            "learnt_lost": len(lost),
            "all_lost": sum(beats(cell[analyze_gauss], cell[name]) for cell in table.values()),
            "all_won": sum(beats(cell[name], cell[analyze_gauss]) for cell in table.values()),
            "mean_excess": float(np.mean([np.mean(cell[name]) - np.mean(cell[analyze_gauss])
                                          for cell in table.values()])),
            "first_lost": lost[:3]})
    return chosen, summary


def suite_defaults(constant):
    """The suite's default rows with ``start_shrinkage=constant`` (the suite's seeds)."""
    for name, X in suite.datasets().items():
        n, p = X.shape
        centred = X - X.mean(axis=0)
        covariance = centred.T @ centred / n
        eigenvalues = np.linalg.eigvalsh(covariance)[::-1]
        for k, epsilon, seed in itertools.product(suite.COMPONENTS, SUITE_EPSILONS,
                                                  range(N_SEEDS)):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fitted = PrivatePCA(k, epsilon=epsilon, delta=DELTA, data_norm=np.sqrt(p),
                                    mean_budget_fraction=MEAN_SHARE, random_state=seed,
                                    start_shrinkage=constant).fit(X)
            basis = np.asarray(fitted.components_).T
            yield {"estimator": suite.ESTIMATOR, "dataset": f"{name} k={k}",
                   "epsilon": epsilon, "seed": seed, "method": "default", "c": constant,
                   "error": suite.error(basis, covariance, eigenvalues[:k].sum())}


def lost_cells(rows):
    """The suite's lost cells: {(dataset, epsilon): (default mean, best baseline)}."""
    summary = summarize(rows)
    out = {}
    for row in summary:
        if row["default_loses"] == "True":
            best = min((other for other in summary
                        if (other["dataset"], other["epsilon"]) == (row["dataset"],
                                                                    row["epsilon"])
                        and other["method"] not in ("default", "non_private")),
                       key=lambda other: other["error_mean"])
            out[row["dataset"], row["epsilon"]] = (
                round(row["error_mean"], 4), best["method"], round(best["error_mean"], 4))
    return out


def compare_on_suite(constants):
    """Recomputed default rows per c, and the lost cells before and after."""
    committed = read_rows(COMMITTED)
    others = [row for row in committed if row["method"] != "default"]
    print(f"lost before: {lost_cells(committed)}", flush=True)
    recomputed = []
    for constant in constants:
        defaults = list(suite_defaults(constant))
        recomputed += defaults
        lost = lost_cells(others + [{**row, "seconds": 0.0} for row in defaults])
        print(f"lost with c = {constant}: {lost}", flush=True)
    return recomputed


def run(output_dir, quick=False):
    """Write results/pca_shrinkage.csv and print the decision."""
    grid = itertools.product(DIMENSIONS[:2] if quick else DIMENSIONS,
                             SIZES[:2] if quick else SIZES, COMPONENTS, SPIKES, EPSILONS,
                             range(2 if quick else SEEDS))
    rows = [row for setting in grid for row in cell_rows(*setting)]
    write_csv(output_dir / "pca_shrinkage.csv", summary_rows(rows))
    chosen, summary = decide(rows)
    threshold, tests = decide(rows, "test", THRESHOLDS)
    for line in summary + tests:
        print(line, flush=True)
    print(f"c* = {chosen}; t* = {threshold}", flush=True)
    if not quick:  # the committed suite rows are those of the full data
        constants = tuple(dict.fromkeys((chosen or 0.0,) + SUITE_CONSTANTS))
        write_csv(output_dir / "pca_shrinkage_suite.csv", compare_on_suite(constants))
        band_rules()
