"""PriRFed's defaults against one-shot private averaging and the non-private answer.

``python -m benchmarks federated_baselines [--quick]``: a federated Frechet mean on real
offline data split into heterogeneous agents, at total epsilon 0.1, 1 and 10 (delta
1e-5), ``SEEDS`` seeds, single-threaded. Error: the geodesic distance of the release to
the pooled (global) Frechet mean, computed without privacy by 200 Karcher iterations.

Datasets (the agents are the natural groups, so their data differ):

- ``emg``: geomstats' EMG covariances (``load_emg_covariances``, SPD(8), affine-invariant
  metric), 16 agents = 4 gestures x 4 contiguous chunks of their windows in recording
  order (about one recording session each), about 240 windows each.
- ``satimage``: KEEL's satimage (``load_keel``), each record's 3 x 3 pixel window in 4
  spectral bands as the 4 x 4 covariance of its 9 pixels plus the identity (one grey
  level squared: windows of one colour stay SPD), SPD(4) affine-invariant; 6 agents =
  the 6 land-cover classes (626-1,533 records).
- ``optdigits``: KEEL's optdigits (raw files), each 64-pixel digit scaled to the unit
  sphere S^63 (the direction of its ink), 10 agents = the 10 digits (about 560 each).
- ``vowel``: KEEL's vowel, each record's 10 log-area-ratio features (the speaker columns
  dropped) scaled to the unit sphere S^9, 11 agents = the 11 vowels (90 each): at
  epsilon 0.1 each agent's noise is about 3 rad, beyond pi (issue 31, item 4).
- ``texture``: KEEL's texture, each record's 40 features (of both signs) on S^39, 11
  agents = the classes (500 each).
- ``libras``: KEEL's movement_libras, each hand trajectory's 90 coordinates in [0, 1] on
  S^89, 15 agents = the movements (24 each): the noise dominates at every epsilon here.
- ``synthetic_spd2_n1100`` and ``synthetic_spd2_n120`` (synthetic): 10 agents of about
  1,100 (C = 7) or 120 (C = 3) records on SPD(2), each around its own centre
  (``synthetic_spd2``), the setting of the federated-defaults issue.

Public settings, fixed from the data's units and never tuned on the data: the start point
is the library's canonical point (the identity; e_1 on the sphere) and C is a bound on the
distance from the iterates to a record (EMG: 10; satimage: 6; optdigits and libras: pi / 2,
the diameter of the non-negative orthant of the sphere; vowel and texture, whose features
take both signs: pi, the sphere's). Methods:

- "default": ``PriRFed(space, epsilon=..., clip_norm=C)``, all else default;
- "one_shot_average": each agent releases its noisy clipped tangent mean at the start
  once, the server averages (``local_method="tangent_mean", n_rounds=1, n_sampled=N,
  output="last"``: without the defaults' shrinkage);
- "previous_defaults": the defaults before this rule (T = 20, s = 1, K = 10 DP-RSGD
  steps, the "public_sampling" accountant, last round);
- "one_shot_noiseless": one-shot averaging without noise (epsilon = inf), the bias floor
  of one-shot averaging;
- "public_start": the public start point itself (epsilon = inf: it reads no record), the
  answer a release must beat;
- "non_private": the global Frechet mean itself (error 0; its seconds).

Writes ``results/baselines_federated.csv`` (estimator, dataset, method, epsilon, seed,
error, seconds, n, dim), ``results/baselines_federated_settings.csv`` (the defaults' resolved
settings) and ``results/baselines_federated.png``.
"""

import functools
import math
import time
import warnings

import numpy as np
from threadpoolctl import threadpool_limits

from benchmarks.federated import write_csv
from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.federated import PriRFed, karcher_mean

EPSILONS = (0.1, 1.0, 10.0)
SEEDS = 5
DELTA = 1e-5
METHODS = {
    "default": lambda n_agents: {},
    "one_shot_average": lambda n_agents: {"local_method": "tangent_mean", "n_rounds": 1,
                                          "n_sampled": n_agents, "output": "last"},
    "previous_defaults": lambda n_agents: {"n_rounds": 20, "n_sampled": 1, "local_steps": 10,
                                           "local_method": "rsgd", "output": "last",
                                           "accountant": "public_sampling"},
}


def spd_space(n):
    from geomstats.geometry.spd_matrices import SPDAffineMetric, SPDMatrices

    space = SPDMatrices(n, equip=False)
    space.equip_with_metric(SPDAffineMetric)
    return space


def emg():
    """16 agents: each gesture's windows in 4 contiguous chunks (recording order)."""
    from geomstats_dp.datasets import load_emg_covariances

    covariances, gestures = load_emg_covariances()
    covariances = to_numpy(covariances)
    agents = [chunk for g in np.unique(gestures)
              for chunk in np.array_split(covariances[gestures == g], 4)]
    return spd_space(8), agents, 10.0


def satimage():
    """6 agents: the land-cover classes; a record is its window's 4-band covariance."""
    from geomstats_dp.datasets import load_keel

    X, y = load_keel("satimage")
    windows = X.reshape(len(X), 9, 4)  # 9 pixels x 4 spectral bands, pixel by pixel
    centred = windows - windows.mean(axis=1, keepdims=True)
    covariances = np.einsum("npi,npj->nij", centred, centred) / 8 + np.eye(4)
    return spd_space(4), [covariances[y == c] for c in np.unique(y)], 6.0


def optdigits():
    """10 agents: the digits; a record is its pixels' direction on S^63."""
    from geomstats.geometry.hypersphere import Hypersphere

    from geomstats_dp.datasets import load_keel

    X, y = load_keel("optdigits")
    directions = X / np.linalg.norm(X, axis=1, keepdims=True)
    return (Hypersphere(X.shape[1] - 1), [directions[y == c] for c in np.unique(y)],
            math.pi / 2)


def _sphere_agents(name, columns=slice(None)):
    """The KEEL dataset ``name``'s records (``columns`` of them) scaled to the unit sphere,
    one agent per class."""
    from geomstats.geometry.hypersphere import Hypersphere

    from geomstats_dp.datasets import load_keel

    X, y = load_keel(name)
    X = X[:, columns]
    directions = X / np.linalg.norm(X, axis=1, keepdims=True)
    return Hypersphere(X.shape[1] - 1), [directions[y == c] for c in np.unique(y)]


def vowel():
    """11 agents: the vowels; a record is its 10 features' direction on S^9."""
    return (*_sphere_agents("vowel", slice(3, None)), math.pi)


def texture():
    """11 agents: the texture classes; a record is its 40 features' direction on S^39."""
    return (*_sphere_agents("texture"), math.pi)


def libras():
    """15 agents: the movements; a record is its trajectory's direction on S^89."""
    return (*_sphere_agents("movement_libras"), math.pi / 2)


def synthetic_spd2(size, clip_norm, n_agents=10, seed=0):
    """Agents of about ``size`` records each around their own centre on SPD(2): centres
    Exp_I(V), records Exp_c(W), V and W symmetric with N(0, s^2) entries symmetrised
    (s = 0.8 and 0.3), sizes drawn in size +- 10%."""
    rng = np.random.default_rng(seed)
    space = spd_space(2)

    def symmetric(count, scale):
        a = rng.normal(scale=scale, size=(count, 2, 2))
        return (a + np.transpose(a, (0, 2, 1))) / 2

    agents = []
    for _ in range(n_agents):
        centre = space.metric.exp(to_backend(symmetric(1, 0.8)[0]), to_backend(np.eye(2)))
        count = size + int(rng.integers(-size // 10, size // 10))
        agents.append(to_numpy(space.metric.exp(to_backend(symmetric(count, 0.3)), centre)))
    return space, agents, clip_norm


DATASETS = {"emg": emg, "satimage": satimage, "optdigits": optdigits, "vowel": vowel,
            "texture": texture, "libras": libras,
            "synthetic_spd2_n1100": functools.partial(synthetic_spd2, 1100, 7.0),
            "synthetic_spd2_n120": functools.partial(synthetic_spd2, 120, 3.0)}


def global_mean(space, agents, start):
    """The pooled Frechet mean (200 Karcher iterations from the start)."""
    pooled = np.concatenate(agents)
    weights = np.full(len(pooled), 1.0 / len(pooled))
    return to_numpy(karcher_mean(space, to_backend(pooled), to_backend(weights),
                                 to_backend(start), n_iter=200))


def noiseless_one_shot(space, agents, start, clip_norm):
    """The clipped tangent means at the start, averaged with weights n_i / n (no noise)."""
    base = to_backend(start)
    total = sum(len(points) for points in agents)
    direction = 0.0
    for points in agents:
        logs = to_numpy(space.metric.log(to_backend(points), base))
        norms = to_numpy(space.metric.norm(to_backend(logs), base))
        scale = np.minimum(1.0, clip_norm / np.maximum(norms, 1e-300))
        direction = direction + np.tensordot(scale, logs, axes=1) / total
    return to_numpy(space.metric.exp(to_backend(direction), base))


def dataset_rows(name, quick):
    space, agents, clip_norm = DATASETS[name]()
    if quick:
        agents = [points[: max(20, len(points) // 10)] for points in agents]
    n, dim, n_agents = sum(len(a) for a in agents), int(space.dim), len(agents)
    start = to_numpy(PriRFed(space)._start())

    def row(method, epsilon, seed, error, seconds):  # the columns in the common order
        return {"estimator": "PriRFed", "dataset": name, "method": method,
                "epsilon": epsilon, "seed": seed, "error": error, "seconds": seconds,
                "n": n, "dim": dim}

    def distance(point):
        return float(to_numpy(space.metric.dist(to_backend(point), to_backend(target))))

    tic = time.perf_counter()
    target = global_mean(space, agents, start)
    rows = [row("non_private", math.inf, 0, 0.0, time.perf_counter() - tic)]
    tic = time.perf_counter()
    noiseless = noiseless_one_shot(space, agents, start, clip_norm)
    rows.append(row("one_shot_noiseless", math.inf, 0, distance(noiseless),
                    time.perf_counter() - tic))
    rows.append(row("public_start", math.inf, 0, distance(start), 0.0))
    settings = []
    for epsilon in EPSILONS[1:2] if quick else EPSILONS:
        for method, extra in METHODS.items():
            for seed in range(1 if quick else SEEDS):
                est = PriRFed(space, epsilon=epsilon, delta=DELTA, clip_norm=clip_norm,
                              random_state=seed, **extra(n_agents))
                tic = time.perf_counter()
                est.fit(agents)
                seconds = time.perf_counter() - tic
                rows.append(row(method, epsilon, seed, distance(to_numpy(est.estimate_)),
                                seconds))
            if method == "default":
                settings.append({"dataset": name, "epsilon": epsilon, "n_agents": n_agents,
                                 "min_size": min(len(a) for a in agents),
                                 "n_rounds": est.n_rounds_, "n_sampled": est.n_sampled_,
                                 "local_method": est.local_method_,
                                 "local_steps": est.local_steps_, "output": est.output_,
                                 "noise_multiplier":
                                     est.noise_multipliers_[0]["full_gradient"]})
    return rows, settings


def summary(rows):
    """Mean error and its standard error over seeds, per (dataset, method, epsilon)."""
    groups = {}
    for row in rows:
        groups.setdefault((row["dataset"], row["method"], row["epsilon"]), []).append(row)
    out = []
    for (dataset, method, epsilon), members in groups.items():
        errors = np.array([r["error"] for r in members])
        se = errors.std(ddof=1) / math.sqrt(len(errors)) if len(errors) > 1 else 0.0
        out.append({"dataset": dataset, "method": method, "epsilon": epsilon,
                    "error": errors.mean(), "se": se,
                    "seconds": np.mean([r["seconds"] for r in members])})
    return out


def plot(table, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    datasets = list(dict.fromkeys(r["dataset"] for r in table))
    n_rows = math.ceil(len(datasets) / 3)
    fig, axes = plt.subplots(n_rows, 3, figsize=(13, 3.4 * n_rows), squeeze=False)
    for ax in axes.flat[len(datasets):]:
        ax.set_visible(False)
    for ax, dataset in zip(axes.flat, datasets):
        for method in METHODS:
            line = sorted((r for r in table if r["dataset"] == dataset
                           and r["method"] == method), key=lambda r: r["epsilon"])
            ax.errorbar([r["epsilon"] for r in line], [r["error"] for r in line],
                        yerr=[2 * r["se"] for r in line], marker="o", capsize=3,
                        label=method)
        for reference, style in (("one_shot_noiseless", ":"), ("public_start", "--")):
            floor = [r for r in table if r["dataset"] == dataset
                     and r["method"] == reference]
            if floor and floor[0]["error"] > 0:
                ax.axhline(floor[0]["error"], color="grey", ls=style, label=reference)
        ax.set(xscale="log", yscale="log", xlabel="total epsilon (delta 1e-5)",
               ylabel="distance to the global Frechet mean", title=dataset)
        ax.legend(fontsize=6)
    fig.suptitle(f"PriRFed defaults vs one-shot averaging, mean +- 2 s.e. over {SEEDS} "
                 "seeds", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def run(output_dir, quick=False):
    """Write the result files under ``output_dir``."""
    rows, settings = [], []
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in DATASETS:
            more_rows, more_settings = dataset_rows(name, quick)
            rows += more_rows
            settings += more_settings
            for row in summary(more_rows):
                print(row, flush=True)
    write_csv(output_dir / "baselines_federated.csv", rows)
    write_csv(output_dir / "baselines_federated_settings.csv", settings)
    for row in settings:
        print(row, flush=True)
    plot(summary(rows), output_dir / "baselines_federated.png")
