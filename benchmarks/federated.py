"""PriRFed (Huang et al. 2024): Table 1's accounting, Section 6.1-6.2 curves, EMG.

``python -m benchmarks federated [--quick]`` writes under ``benchmarks/results/``:

- ``federated_table1.csv``: epsilon' at the same noise of the accountants that amplify by
  agent sampling (sampled agents secret: Theorem 4.2, the parallel/optimal rule, the
  end-to-end RDP accountant) and of those that do not (sampled agents public: the
  library's default and its end-to-end RDP version): each agent's local training is
  DP-RGD with K = 10 steps whose noise multiplier gives the paper's local (0.15, 1e-4);
  all at Theorem 4.2's delta'.
- ``federated_eigenvector.csv`` / ``.png``: principal eigenvector on S^24 (Section 6.1,
  Figure 1's three columns: DP-RSGD with s = N, K = 1, full batch; DP-RSGD with s = 1,
  K = 5, b = N_i / 2; DP-RSVRG with s = 1, K = 2), excess cost and gradient norm per
  round, several total epsilons, ``SEEDS`` seeds.
- ``federated_wishart.csv`` / ``.png``: Frechet mean on SPD(2) of Wishart W(I/2, 2) draws
  in the ball of radius 1 about I (Section 6.2's synthetic data), (N, N_i) = (20, 250)
  and (50, 100), s = 1, K = 3: excess risk per round, DP-RSGD and DP-RSVRG.
- ``federated_emg.csv`` / ``.png``: federated Frechet mean of geomstats' EMG covariances
  (SPD(8)), split into agents as contiguous chunks in recording order (non-iid), excess
  risk of the release against the pooled Frechet mean, for several total epsilons and the
  local methods DP-RGD, DP-RSGD and DP-RSVRG.

Every curve row records the estimator's accountant and the calibrated local epsilon.
"""

import csv
import time

import numpy as np

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.federated import PriRFed, karcher_mean
from geomstats_dp.privacy import GaussianEvent, calibrate_gaussian
from geomstats_dp.privacy.federated import (
    prirfed_epsilon,
    prirfed_public_sampling,
    prirfed_theorem_4_2,
)
from geomstats_dp.privacy.federated_e2e import prirfed_end_to_end_epsilon

TABLE_1 = ((100, 1), (100, 5), (200, 1), (500, 5), (300, 5), (300, 10), (400, 5), (400, 10))
ROUNDS = (50, 100, 200, 300, 400, 500)
LOCAL = (0.15, 1e-4)
LOCAL_STEPS = 10
SEEDS = 3


def write_csv(path, rows):
    """Rows (dicts) to CSV, columns in first-seen order."""
    fields = list(dict.fromkeys(key for row in rows for key in row))
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)


def table_1(quick):
    z = calibrate_gaussian(*LOCAL, LOCAL_STEPS)
    local = (GaussianEvent(z, LOCAL_STEPS),)
    rows = []
    for n_agents, n_sampled in TABLE_1[:2] if quick else TABLE_1:
        for n_rounds in ROUNDS[:2] if quick else ROUNDS:
            setting = (n_agents, n_sampled, n_rounds)
            theorem = prirfed_theorem_4_2(*LOCAL, *setting)
            tight = prirfed_epsilon(*LOCAL, *setting)
            hidden = prirfed_end_to_end_epsilon(local, *setting, theorem.delta, "hidden")
            public = prirfed_public_sampling(*LOCAL, *setting, target_delta=theorem.delta)
            e2e = prirfed_end_to_end_epsilon(local, *setting, theorem.delta, "public")
            rows.append({"N": n_agents, "s": n_sampled, "T": n_rounds,
                         "delta": theorem.delta, "theorem_4_2": theorem.epsilon,
                         "parallel_optimal": tight.epsilon, "end_to_end_hidden": hidden,
                         "public_sampling": public.epsilon, "end_to_end_public": e2e,
                         "e2e_hidden_saving_vs_theorem": 1 - hidden / theorem.epsilon,
                         "e2e_public_saving_vs_public": 1 - e2e / public.epsilon})
    return rows


def curves(est, measure, start, **setting):
    """One row per round (round 0 = the start) of a fitted PriRFed: ``measure(point)``
    (a dict) with the setting, the accountant and the calibrated local epsilon."""
    points = [start] + [record["point"] for record in est.history_]
    return [dict(setting, round=t, accountant=est.accountant,
                 local_epsilon=est.local_epsilon_, **measure(point))
            for t, point in enumerate(points)]


def frechet_problem(space, pooled, start):
    """The excess risk (mean squared distance minus that of the pooled Karcher mean)."""
    weights = to_backend(np.full(len(pooled), 1 / len(pooled)))
    data = to_backend(pooled)
    target = karcher_mean(space, data, weights, to_backend(start), n_iter=30)

    def risk(point):
        return float(np.mean(to_numpy(space.metric.squared_dist(data, to_backend(point)))))

    base = risk(target)
    return lambda point: {"excess_risk": risk(point) - base}


def emg_agents(n_agents):
    from geomstats_dp.datasets import load_emg_covariances

    covariances, _ = load_emg_covariances()
    covariances = to_numpy(covariances)
    return np.array_split(covariances, n_agents)


def emg_runs(quick):
    from geomstats.geometry.spd_matrices import SPDAffineMetric, SPDMatrices

    space = SPDMatrices(8, equip=False)
    space.equip_with_metric(SPDAffineMetric)
    agents = emg_agents(10)
    pooled = np.concatenate(agents)
    # a common data scale: divide by the median trace (public preprocessing in practice)
    scale = float(np.median(np.trace(pooled, axis1=1, axis2=2)) / 8)
    agents = [a / scale for a in agents]
    measure = frechet_problem(space, pooled / scale, np.eye(8))
    rows = []
    for method in ("rgd", "rsgd", "rsvrg"):
        for epsilon in (1.0,) if quick else (0.5, 2.0, 8.0):
            for seed in range(1 if quick else SEEDS):
                tic = time.perf_counter()
                est = PriRFed(space, epsilon=epsilon, n_rounds=5 if quick else 10,
                              n_sampled=3, local_steps=5 if method != "rsvrg" else 1,
                              local_method=method, clip_norm=3.0, batch_size=16,
                              init_point=np.eye(8), random_state=seed).fit(agents)
                rows += curves(est, measure, np.eye(8), method=method, epsilon=epsilon,
                               seed=seed, fit_seconds=time.perf_counter() - tic)
    return rows


def wishart_runs(quick):
    """Section 6.2's synthetic problem: 5,000 Wishart draws within distance 1 of I."""
    from benchmarks.laplace import Setup, spd_space, wishart_in_ball

    setup = Setup("spd2_affine", spd_space(), np.eye(2), 1.0, wishart_in_ball)
    pooled = setup.sample(1000 if quick else 5000, np.random.default_rng(0))
    start = WISHART_START * np.eye(2)  # data-independent, d(start, I) = 1.55
    measure = frechet_problem(setup.space, pooled, np.eye(2))
    rows = []
    for n_agents in (20,) if quick else (20, 50):
        agents = np.split(pooled, n_agents)
        for method in ("rsgd", "rsvrg"):
            for epsilon in (1.0,) if quick else (1.0, 4.0):
                for seed in range(1 if quick else SEEDS):
                    tic = time.perf_counter()
                    est = PriRFed(setup.space, epsilon=epsilon,
                                  n_rounds=10 if quick else WISHART_ROUNDS, n_sampled=1,
                                  local_steps=3, local_method=method, clip_norm=1.0,
                                  step_size=WISHART_STEP[method], init_point=start,
                                  random_state=seed).fit(agents)
                    rows += curves(est, measure, start, n_agents=n_agents,
                                   method=method, epsilon=epsilon, seed=seed,
                                   fit_seconds=time.perf_counter() - tic)
    return rows


def eigenvector_data(n_agents, n_each, dim=25, gap=1e-3, seed=0):
    """Section 6.1's data: agent i holds the rows of Z_i = U_i Sigma_i V, U_i [n_i, d + 1]
    column orthonormal, Sigma_i = diag(1, 1 - 1.1 gap, ..., 1 - 1.4 gap, |y| / (d + 1)),
    y standard normal (per agent), V one random orthogonal matrix (shared: the agents
    sample one population), rows rescaled by sqrt(n_i / 5) (|z| of order 1)."""
    rng = np.random.default_rng(seed)
    basis = np.linalg.qr(rng.normal(size=(dim, dim)))[0]
    agents = []
    for _ in range(n_agents):
        top = 1 - gap * np.array([0.0, 1.1, 1.2, 1.3, 1.4])
        sigma = np.concatenate([top, np.abs(rng.normal(size=dim - 5)) / dim])
        left = np.linalg.qr(rng.normal(size=(n_each, dim)))[0]
        agents.append(np.sqrt(n_each / 5) * (left * sigma) @ basis.T)
    return agents


def eigenvector_runs(quick):
    """Principal eigenvector on S^24, Figure 1's three settings of Huang et al. (2024)."""
    from geomstats.geometry.hypersphere import Hypersphere

    from geomstats_dp.learning.pca import PCALoss

    n_agents, n_each = 10, 100 if quick else 200
    space = Hypersphere(24)
    loss = PCALoss(space, data_norm=1.0)  # public per-record bound |z| <= 1
    agents = eigenvector_data(n_agents, n_each)
    data = loss.check_data(np.concatenate(agents))
    rows_np = to_numpy(data)
    top = float(np.linalg.eigvalsh(rows_np.T @ rows_np / len(rows_np))[-1])

    def measure(point):
        point = to_backend(point)
        cost = -float(np.mean(to_numpy(loss.values(point, data))))
        grad = np.mean(to_numpy(loss.gradients(point, data)), axis=0)
        return {"excess_cost": top - cost, "gradient_norm": float(np.linalg.norm(grad))}

    settings = (  # Figure 1's columns: (label, method, s, K, batch size, step size);
        # steps: the paper's 1 / (2 L_g) (L_g = 2) and 1.0; DP-RSVRG: the library's
        # default (<= 0.5 / m = 0.025, near the paper's 1 / (10 N^(2/3) L_g) = 0.011)
        ("DP-RSGD s=N K=1 b=N_i", "rsgd", n_agents, 1, n_each, 0.25),
        ("DP-RSGD s=1 K=5 b=N_i/2", "rsgd", 1, 5, n_each // 2, 1.0),
        ("DP-RSVRG s=1 K=2", "rsvrg", 1, 2, None, None),
    )
    start = np.eye(25)[0]
    rows = []
    for label, method, n_sampled, n_steps, batch, step in settings:
        for epsilon in (1.0,) if quick else EIGEN_EPSILONS:
            for seed in range(1 if quick else SEEDS):
                tic = time.perf_counter()
                est = PriRFed(space, loss=loss, epsilon=epsilon,
                              n_rounds=5 if quick else EIGEN_ROUNDS, n_sampled=n_sampled,
                              local_steps=n_steps, local_method=method, clip_norm=2.0,
                              batch_size=batch, step_size=step, init_point=start,
                              random_state=seed).fit(agents)
                rows += curves(est, measure, start, setting=label, method=method,
                               epsilon=epsilon, seed=seed,
                               fit_seconds=time.perf_counter() - tic)
    return rows


EIGEN_EPSILONS = (1.0, 4.0, 16.0, 64.0)
EIGEN_ROUNDS = 50
WISHART_ROUNDS = 40
# DP-RSGD: the paper's 0.05 on ||log||^2, i.e. 0.1 on d^2 / 2; DP-RSVRG: 0.1 / m (m = 10
# inner steps for N_i = 100), the best of (library default, 0.01, 0.03, 0.1) on this data
WISHART_STEP = {"rsgd": 0.1, "rsvrg": 0.01}
WISHART_START = 3.0  # the data lie within distance 1 of I, their mean near I


def plot_curves(rows, path, columns, metrics, lines, title, stat="mean"):
    """A panel per (metric, value of ``columns``); a line per value of ``lines`` (a key
    tuple): per round, the mean over seeds with the min-max band (``stat="mean"``) or
    the median with the quartiles ("median"), non-finite values left out; log y axis."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    column_values = list(dict.fromkeys(r[columns] for r in rows))
    fig, axes = plt.subplots(len(metrics), len(column_values), squeeze=False,
                             figsize=(4.2 * len(column_values), 3.2 * len(metrics)))
    for j, value in enumerate(column_values):
        sel = [r for r in rows if r[columns] == value]
        for key in dict.fromkeys(tuple(r[k] for k in lines) for r in sel):
            line = [r for r in sel if tuple(r[k] for k in lines) == key]
            rounds = sorted({r["round"] for r in line})
            for i, metric in enumerate(metrics):
                values = np.array([[r[metric] for r in line if r["round"] == t]
                                   for t in rounds])
                low, centre, high = (
                    (np.nanmin(values, 1), np.nanmean(values, 1), np.nanmax(values, 1))
                    if stat == "mean" else np.nanpercentile(values, [25, 50, 75], axis=1))
                axes[i, j].plot(rounds, centre,
                                label=", ".join(f"{k}={v}" for k, v in zip(lines, key)))
                axes[i, j].fill_between(rounds, low, high, alpha=0.15)
        for i, metric in enumerate(metrics):
            axes[i, j].set(yscale="log", xlabel="round", ylabel=metric,
                           title=f"{columns}={value}" if i == 0 else None)
        axes[0, j].legend(fontsize=6)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _print_last(rows):
    last = max(r["round"] for r in rows)
    for row in rows:
        if row["round"] == last:
            print(row, flush=True)


def run(output_dir, quick=False):
    """Write the result files under ``output_dir``."""
    rows = table_1(quick)
    write_csv(output_dir / "federated_table1.csv", rows)
    for row in rows[:: max(len(rows) // 8, 1)]:
        print(row, flush=True)
    eigen = eigenvector_runs(quick)
    write_csv(output_dir / "federated_eigenvector.csv", eigen)
    plot_curves(eigen, output_dir / "federated_eigenvector.png", "setting",
                ("excess_cost", "gradient_norm"), ("epsilon",),
                f"PriRFed principal eigenvector, S^24, N=10, mean over {SEEDS} seeds")
    _print_last(eigen)
    wishart = wishart_runs(quick)
    write_csv(output_dir / "federated_wishart.csv", wishart)
    plot_curves(wishart, output_dir / "federated_wishart.png", "n_agents",
                ("excess_risk",), ("method", "epsilon"),
                f"PriRFed Frechet mean, Wishart SPD(2), s=1, K=3, mean over {SEEDS} seeds")
    _print_last(wishart)
    emg = emg_runs(quick)
    write_csv(output_dir / "federated_emg.csv", emg)
    plot_curves(emg, output_dir / "federated_emg.png", "method", ("excess_risk",),
                ("epsilon",), f"PriRFed Frechet mean, EMG SPD(8), 10 agents, s=3, "
                f"mean over {SEEDS} seeds")
    _print_last(emg)
