"""PriRFed (Huang et al. 2024): Table 1's accounting, EMG Frechet mean, engine wall time.

- ``federated_table1.csv``: epsilon' at the same noise of the accountants that amplify by
  agent sampling (sampled agents secret: Theorem 4.2, the parallel/optimal rule, the
  end-to-end RDP accountant) and of those that do not (sampled agents public: the
  library's default and its end-to-end RDP version): each agent's local training is
  DP-RGD with K = 10 steps whose noise multiplier gives the paper's local (0.15, 1e-4);
  all at Theorem 4.2's delta'.
- ``federated_emg.csv`` / ``.png``: federated Frechet mean of geomstats' EMG covariances
  (SPD(8)), split into agents as contiguous chunks in recording order (non-iid), excess
  risk of the release against the pooled Frechet mean, for several total epsilons and the
  local methods DP-RGD and DP-RSGD.
- ``federated_wall_time.csv``: seconds per round, in-process engine against Flower's
  simulation engine (Ray), same run.
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
STEP_SIZE = {"rsgd": 1.0, "rsvrg": 1.0}  # constant local steps for the PCA cost


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
    pooled = pooled / scale
    start = to_backend(np.eye(8))
    weights = to_backend(np.full(len(pooled), 1 / len(pooled)))
    target = karcher_mean(space, to_backend(pooled), weights, start, n_iter=30)

    def risk(point):
        return float(np.mean(to_numpy(space.metric.squared_dist(to_backend(pooled), point))))

    base = risk(target)
    rows = []
    epsilons = (1.0,) if quick else (0.5, 2.0, 8.0)
    for method in ("rgd", "rsgd"):
        for epsilon in epsilons:
            for seed in range(1 if quick else 2):
                tic = time.perf_counter()
                est = PriRFed(space, epsilon=epsilon, n_rounds=5 if quick else 10,
                              n_sampled=3, local_steps=5, local_method=method,
                              clip_norm=3.0, batch_size=16, init_point=np.eye(8),
                              random_state=seed).fit(agents)
                elapsed = time.perf_counter() - tic
                for t, record in enumerate(est.history_):
                    rows.append({"method": method, "epsilon": epsilon, "seed": seed,
                                 "round": t + 1,
                                 "excess_risk": risk(to_backend(record["point"])) - base,
                                 "fit_seconds": elapsed})
    return rows


def eigenvector_runs(quick):
    """Principal eigenvector on S^24 (Section 6.1 of Huang et al.: d + 1 = 25, gap 1e-3)."""
    from geomstats.geometry.hypersphere import Hypersphere

    from geomstats_dp.learning.pca import PCALoss

    dim, n_agents, n_each = 25, 10, 100 if quick else 200
    rng = np.random.default_rng(0)
    basis = np.linalg.qr(rng.normal(size=(dim, dim)))[0]
    eigenvalues = np.concatenate([[1.0, 1.0 - 1e-3], np.linspace(0.5, 0.05, dim - 2)])
    records = rng.normal(size=(n_agents * n_each, dim)) * np.sqrt(eigenvalues) @ basis.T
    records /= np.max(np.linalg.norm(records, axis=1))  # public bound |z| <= 1
    agents = np.split(records, n_agents)
    space = Hypersphere(dim - 1)
    loss = PCALoss(space)
    data = to_backend(records)
    top = float(np.linalg.eigvalsh(records.T @ records / len(records))[-1])

    def measures(point):
        point = to_backend(point)
        cost = -float(np.mean(to_numpy(loss.values(point, data))))
        grad = np.mean(to_numpy(loss.gradients(point, data)), axis=0)
        return top - cost, float(np.linalg.norm(grad))

    rows = []
    for method in ("rsgd", "rsvrg"):
        for epsilon in (1.0,) if quick else (1.0, 8.0, 1e4):
            tic = time.perf_counter()
            est = PriRFed(space, loss=loss, epsilon=epsilon, n_rounds=5 if quick else 10,
                          n_sampled=3, local_steps=20 if method == "rsgd" else 1,
                          local_method=method, clip_norm=2.0, batch_size=10,
                          step_size=STEP_SIZE[method],
                          random_state=0).fit(agents)
            elapsed = time.perf_counter() - tic
            for t, record in enumerate(est.history_):
                gap, grad_norm = measures(record["point"])
                rows.append({"method": method, "epsilon": epsilon, "round": t + 1,
                             "excess_cost": gap, "gradient_norm": grad_norm,
                             "fit_seconds": elapsed})
    return rows


def wall_time(quick):
    from geomstats.geometry.hypersphere import Hypersphere

    space = Hypersphere(2)
    rng = np.random.default_rng(0)
    data = [to_numpy(space.projection(to_backend(np.array([0, 0, 1.0])
                                                 + 0.3 * rng.normal(size=(20, 3)))))
            for _ in range(3)]
    rows = []
    n_rounds = 2 if quick else 3
    for engine in ("local", "flower"):
        tic = time.perf_counter()
        est = PriRFed(space, epsilon=1.0, n_rounds=n_rounds, n_sampled=2, local_steps=5,
                      local_method="rgd", clip_norm=1.0, engine=engine,
                      random_state=0).fit(data)
        seconds = time.perf_counter() - tic
        rows.append({"engine": engine, "n_rounds": n_rounds, "seconds": seconds,
                     "seconds_per_round": seconds / n_rounds,
                     "estimate": " ".join(f"{v:.12f}" for v in to_numpy(est.estimate_))})
    rows[1]["ratio_to_local"] = rows[1]["seconds"] / rows[0]["seconds"]
    rows[0]["ratio_to_local"] = 1.0
    return rows


def plot_emg(rows, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    keys = sorted({(r["method"], r["epsilon"]) for r in rows})
    for method, epsilon in keys:
        sel = [r for r in rows if r["method"] == method and r["epsilon"] == epsilon]
        rounds = sorted({r["round"] for r in sel})
        mean = [np.mean([r["excess_risk"] for r in sel if r["round"] == t]) for t in rounds]
        ax.plot(rounds, mean, marker="o", label=f"DP-{method.upper()}, eps={epsilon}")
    ax.set_yscale("log")
    ax.set_xlabel("round")
    ax.set_ylabel("excess risk (mean over seeds)")
    ax.set_title("PriRFed Frechet mean, EMG SPD(8), 10 agents, s=3, K=5")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def run(output_dir, quick=False):
    """Write the three result files under ``output_dir``."""
    rows = table_1(quick)
    write_csv(output_dir / "federated_table1.csv", rows)
    for row in rows[:: max(len(rows) // 8, 1)]:
        print(row, flush=True)
    emg = emg_runs(quick)
    write_csv(output_dir / "federated_emg.csv", emg)
    plot_emg(emg, output_dir / "federated_emg.png")
    for row in emg:
        if row["round"] == max(r["round"] for r in emg):
            print(row, flush=True)
    eigen = eigenvector_runs(quick)
    write_csv(output_dir / "federated_eigenvector.csv", eigen)
    for row in eigen:
        if row["round"] == max(r["round"] for r in eigen):
            print(row, flush=True)
    timing = wall_time(quick)
    write_csv(output_dir / "federated_wall_time.csv", timing)
    for row in timing:
        print(row, flush=True)
