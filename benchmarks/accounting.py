"""Accounting benchmark: this library's epsilon against other accountants, and calibration time.

Tables (CSV in ``output_dir``):

- ``accounting_gaussian.csv``: full-batch, without-replacement and Poisson Gaussian runs;
  the library's epsilon next to autodp's RDP pipeline, exact mu-GDP (autodp's
  ComposeGaussian), and dp-accounting's RDP and PLD accountants where they apply
  (add/remove only: dp-accounting 0.6 is inconsistent under replace-one).
- ``accounting_svrg.csv``: DP-RSVRG in Utpala et al.'s (2023) Section 6.2 settings, alpha = 1/2 and
  optimised, the full gradient counted per epoch (library) or per inner step (paper).
- ``accounting_federated.csv``: Huang et al.'s (2024) Table 1 by Theorem 4.2, and tighter bounds.
- ``accounting_calibration.csv``: wall-clock time of calibrate_gaussian / calibrate_svrg,
  cold (caches cleared) and warm, against autodp's own calibrator timed in the same run.
"""

import csv
import math
import time
import warnings

from geomstats_dp.privacy import (
    GaussianEvent,
    calibrate_gaussian,
    calibrate_svrg,
    compose,
    compose_epsilon,
    optimal_composition_epsilon,
    prirfed_epsilon,
    prirfed_theorem_4_2,
    svrg_epsilon,
)
from geomstats_dp.privacy import calibration, renyi, svrg
from geomstats_dp.privacy.federated import amplified_by_sampling

DELTA = 1e-5


def run(output_dir, quick=False):
    """Write the four accounting tables into ``output_dir``."""
    tables = {
        "accounting_gaussian.csv": gaussian_rows,
        "accounting_svrg.csv": svrg_rows,
        "accounting_federated.csv": federated_rows,
        "accounting_calibration.csv": calibration_rows,
    }
    for name, make_rows in tables.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # autodp's own order searches
            rows = make_rows(quick)
        write_csv(output_dir / name, rows)
        print(f"wrote {output_dir / name} ({len(rows)} rows)", flush=True)


def write_csv(path, rows):
    """Write dict rows with the keys of the first row as header."""
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def read_csv(path):
    """The dict rows of a CSV written by ``write_csv`` (values as strings)."""
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


def autodp_mechanism(noise_multiplier, n_steps, sampling_rate, sampling):
    """The same run built with autodp's own Mechanism API (RDP composition)."""
    from autodp import mechanism_zoo, transformer_zoo

    base = mechanism_zoo.GaussianMechanism(sigma=noise_multiplier)
    if sampling_rate < 1.0:
        base.neighboring = "add_remove" if sampling == "poisson" else "replace_one"
        amplify = transformer_zoo.AmplificationBySampling(PoissonSampling=sampling == "poisson")
        base = amplify(base, sampling_rate, improved_bound_flag=True)
    return transformer_zoo.Composition()([base], [n_steps])


def autodp_exact_gdp(noise_multiplier, n_steps):
    """Exact mu-GDP epsilon of a full-batch run through autodp's ComposeGaussian."""
    from autodp import mechanism_zoo, transformer_zoo

    base = mechanism_zoo.ExactGaussianMechanism(sigma=noise_multiplier)
    return transformer_zoo.ComposeGaussian()([base], [n_steps]).get_approxDP(DELTA)


def dp_accounting_epsilons(noise_multiplier, n_steps, sampling_rate):
    """(RDP, PLD) epsilons of dp-accounting (add/remove), or NaN if it is not installed."""
    try:
        import dp_accounting
        from dp_accounting.pld import pld_privacy_accountant
        from dp_accounting.rdp import rdp_privacy_accountant
    except ImportError:
        return math.nan, math.nan
    event = dp_accounting.GaussianDpEvent(noise_multiplier)
    if sampling_rate < 1.0:
        event = dp_accounting.PoissonSampledDpEvent(sampling_rate, event)
    results = []
    for accountant in (
        rdp_privacy_accountant.RdpAccountant(),
        pld_privacy_accountant.PLDAccountant(),
    ):
        accountant.compose(event, n_steps)
        results.append(accountant.get_epsilon(DELTA))
    return tuple(results)


def gaussian_configurations(quick):
    """(sampling, rate, n_steps, target epsilon) of the documented runs."""
    steps = (10, 100, 1000)
    sampled_steps = (100, 1000) if quick else (100, 1000, 10_000)
    configurations = [("full", 1.0, t, target) for t in steps for target in (0.5, 2.0)]
    for sampling in ("without_replacement", "poisson"):
        configurations += [
            (sampling, rate, t, 1.0) for rate in (0.01, 0.1) for t in sampled_steps
        ]
    return configurations


def gaussian_rows(quick):
    """One row per configuration: the noise calibrated by the library, then every epsilon."""
    rows = []
    for sampling, rate, n_steps, target in gaussian_configurations(quick):
        adjacency = "add_remove" if sampling == "poisson" else "replace_one"
        z = calibrate_gaussian(target, DELTA, n_steps, rate, sampling, adjacency)
        event = GaussianEvent(z, n_steps, rate, sampling, adjacency)
        guarantee = compose([event], DELTA)
        autodp_rdp = autodp_mechanism(z, n_steps, rate, sampling).get_approxDP(DELTA)
        exact = autodp_exact_gdp(z, n_steps) if sampling == "full" else math.nan
        dpa_rdp, dpa_pld = (
            dp_accounting_epsilons(z, n_steps, rate)
            if sampling != "without_replacement"
            else (math.nan, math.nan)
        )
        rows.append(
            {
                "sampling": sampling,
                "adjacency": adjacency,
                "sampling_rate": rate,
                "n_steps": n_steps,
                "noise_multiplier": round(z, 6),
                "epsilon_library": round(guarantee.epsilon, 6),
                "library_accountant": guarantee.accountant,
                "epsilon_library_pld": round(_library_pld(event), 6),
                "epsilon_autodp_rdp": round(autodp_rdp, 6),
                "epsilon_exact_gdp": round(exact, 6),
                "epsilon_dp_accounting_rdp": round(dpa_rdp, 6),
                "epsilon_dp_accounting_pld": round(dpa_pld, 6),
                "rdp_over_library_pct": round(100 * (autodp_rdp / guarantee.epsilon - 1), 3),
            }
        )
    return rows


def _library_pld(event):
    try:
        return compose_epsilon([event], DELTA, method="pld")
    except (ImportError, ValueError):
        return math.nan


PAPER_000 = {
    "n": 100_000,
    "inner_steps": 10_000,
    "clip_full": 0.1,
    "clip_single": 0.01,
}


def svrg_rows(quick):
    """Utpala et al. (2023) Section 6.2: m = 10^4, n = 10^5, C0 = 0.1, C1 = 0.01, delta = 1e-6."""
    rows = []
    for releases in ("epoch", "step"):
        for sigma in (0.1, 0.05):
            for n_epochs in (1, 100) if quick else (1, 5, 10, 25, 50, 100):
                setting = {**PAPER_000, "n_epochs": n_epochs, "full_gradient_releases": releases}
                half = svrg_epsilon(sigma, 1e-6, alpha=0.5, **setting)
                best = svrg_epsilon(sigma, 1e-6, **setting)
                rows.append(
                    {
                        "full_gradient_releases": releases,
                        "sigma": sigma,
                        "n_epochs": n_epochs,
                        "epsilon_alpha_half": round(half.epsilon, 4),
                        "epsilon_optimised": round(best.epsilon, 4),
                        "alpha_optimised": round(best.alpha, 5),
                        "improvement": round(half.epsilon / best.epsilon, 3),
                    }
                )
    return rows


TABLE_1_ROWS = ((100, 1), (100, 5), (200, 1), (500, 5), (300, 5), (300, 10), (400, 5), (400, 10))


def federated_rows(quick):
    """Huang et al. (2024) Table 1 ((eps, delta) = (0.15, 1e-4), delta_hat = 1e-3) and tighter bounds."""
    rows = []
    for n_agents, n_sampled in TABLE_1_ROWS:
        for n_rounds in (50, 100, 200, 300, 400, 500):
            theorem = prirfed_theorem_4_2(0.15, 1e-4, n_agents, n_sampled, n_rounds)
            rate = n_sampled / n_agents
            parallel_round = amplified_by_sampling(0.15, 1e-4, rate)
            sequential = optimal_composition_epsilon(
                theorem.round_epsilon, theorem.round_delta, n_rounds, theorem.delta
            )
            parallel_advanced = _advanced_composition(*parallel_round, n_rounds, theorem.delta)
            library = prirfed_epsilon(0.15, 1e-4, n_agents, n_sampled, n_rounds)
            rows.append(
                {
                    "n_agents": n_agents,
                    "n_sampled": n_sampled,
                    "n_rounds": n_rounds,
                    "delta_total": f"{theorem.delta:.4g}",
                    "epsilon_theorem_4_2": f"{theorem.epsilon:.4g}",
                    "epsilon_sequential_optimal": f"{sequential:.4g}",
                    "epsilon_parallel_advanced": f"{parallel_advanced:.4g}",
                    "epsilon_parallel_optimal": f"{library.epsilon:.4g}",
                    "library_over_theorem": f"{library.epsilon / theorem.epsilon:.3f}",
                }
            )
    return rows


def _advanced_composition(round_epsilon, round_delta, n_rounds, total_delta):
    """Theorem 4.2's composition rule applied to per-round parallel-composition values."""
    slack = total_delta - n_rounds * round_delta
    advanced = math.sqrt(2 * n_rounds * math.log(1 / slack)) * round_epsilon + (
        n_rounds * round_epsilon * math.expm1(round_epsilon)
    )
    return min(n_rounds * round_epsilon, advanced)


def clear_caches():
    """Forget every cached curve and calibration (for cold timings)."""
    for cached in (
        renyi.subsampled_curve,
        calibration._calibrate_gaussian,
        svrg._optimal_split,
        svrg._sigma_for_alpha,
        svrg._best_alpha,
    ):
        cached.cache_clear()


def timed(function):
    """(result, seconds) of one call."""
    start = time.perf_counter()
    result = function()
    return result, time.perf_counter() - start


def autodp_calibration(n_steps, rate, sampling, bounds):
    """Noise multiplier from autodp's own calibrator (bounded search on |eps - target|)
    for the same run, or NaN where it reports a failure."""
    from autodp import calibrator_zoo

    def build(noise_multiplier):
        mechanism = autodp_mechanism(noise_multiplier, n_steps, rate, sampling)
        mechanism.noise_multiplier = noise_multiplier
        return mechanism

    try:
        mechanism = calibrator_zoo.eps_delta_calibrator()(build, 1.0, DELTA, bounds)
    except RuntimeError:
        return math.nan
    return mechanism.noise_multiplier


def calibration_rows(quick):
    """Cold and warm calibration times, and autodp's calibrator on the same run."""
    rows = []
    schemes = [("full", 1.0), ("without_replacement", 0.01), ("poisson", 0.01)]
    for sampling, rate in schemes:
        for n_steps in (100, 10_000) if quick else (100, 1000, 10_000, 100_000):
            adjacency = "add_remove" if sampling == "poisson" else "replace_one"
            arguments = (1.0, DELTA, n_steps, rate, sampling, adjacency)
            clear_caches()
            z, cold = timed(lambda: calibrate_gaussian(*arguments))
            _, warm = timed(lambda: calibrate_gaussian(*arguments))
            # autodp's calibrator gets a bracket of one decade around the answer.
            z_autodp, baseline = timed(
                lambda: autodp_calibration(n_steps, rate, sampling, (z / 10, z * 10))
            )
            rows.append(
                {
                    "function": "calibrate_gaussian",
                    "scheme": sampling,
                    "sampling_rate": rate,
                    "n_steps": n_steps,
                    "noise_multiplier": round(z, 6),
                    "seconds_cold": round(cold, 4),
                    "seconds_warm": round(warm, 7),
                    "seconds_autodp_calibrator": round(baseline, 4),
                    "autodp_over_library_cold": round(baseline / cold, 2),
                    "noise_multiplier_autodp": round(z_autodp, 6),
                }
            )
    for n_epochs in (1, 10) if quick else (1, 10, 100):
        setting = {**PAPER_000, "n_epochs": n_epochs}
        clear_caches()
        result, cold = timed(lambda: calibrate_svrg(1.0, 1e-6, **setting))
        _, warm = timed(lambda: calibrate_svrg(1.0, 1e-6, **setting))
        rows.append(
            {
                "function": "calibrate_svrg",
                "scheme": "svrg (alpha optimised)",
                "sampling_rate": 1 / PAPER_000["n"],
                "n_steps": n_epochs * PAPER_000["inner_steps"],
                "noise_multiplier": round(result.noise_multiplier_single, 6),
                "seconds_cold": round(cold, 4),
                "seconds_warm": round(warm, 7),
                "seconds_autodp_calibrator": math.nan,
                "autodp_over_library_cold": math.nan,
                "noise_multiplier_autodp": math.nan,
            }
        )
    return rows
