"""PriRFed's ``MIN_ROUNDS``: averaged rounds against one round on synthetic federations.

``python -m benchmarks federated_round_rule [--quick]``. Off the baseline benchmark:
synthetic federations on spheres S^d, ``N`` agents of ``size`` records each, the agents'
centres Exp_c(w) around a global centre c at distance ``distance`` from the public start
e_1 (w Gaussian of norm about ``agent_spread``), each agent's records Exp_(centre)(u)
around its centre (u of norm about ``spread``); C = pi / 2, delta 1e-5. For each federation
epsilon is set so that the noise bound of ``federated.defaults`` (every agent's noise
below C) fits a given number k of rounds, (n_min / (2 z_1))^2 / d = k + 1/2; then one
round (one-shot averaging) and the rule's T (``tangent_mean_rounds`` without its
``MIN_ROUNDS``) are run with the other settings at their defaults, ``SEEDS`` seeds. Error:
distance to the pooled Frechet mean (200 Karcher iterations).

Writes ``results/federated_round_rule.csv`` (config, k, epsilon, T, seed, one_round,
rounds).
"""

import math
import warnings

import numpy as np
from threadpoolctl import threadpool_limits

from benchmarks.federated import write_csv
from benchmarks.federated_baselines import global_mean
from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.federated import PriRFed
from geomstats_dp.federated.defaults import tangent_mean_rounds
from geomstats_dp.privacy import calibrate_gaussian

CLIP = math.pi / 2
DELTA = 1e-5
SEEDS = 6
FITTING = (2, 3, 4, 5, 6, 7, 8, 10, 14)
# (d, N, size, distance, spread, agent_spread)
CONFIGS = ((9, 10, 60, 1.0, 0.3, 0.3), (39, 10, 60, 1.0, 0.3, 0.3),
           (89, 15, 24, 1.2, 0.4, 0.3), (89, 10, 100, 0.6, 0.3, 0.2),
           (20, 8, 40, 1.4, 0.5, 0.4), (50, 12, 40, 0.3, 0.3, 0.3),
           (30, 10, 80, 0.8, 0.6, 0.5))


def federation(dim, n_agents, size, distance, spread, agent_spread, seed=0):
    """The sphere and the agents' records (numpy) of one synthetic federation."""
    from geomstats.geometry.hypersphere import Hypersphere

    rng = np.random.default_rng(seed)
    space = Hypersphere(dim)

    def exp(vectors, base):
        vectors = vectors - np.outer(vectors @ base, base) if vectors.ndim == 2 else (
            vectors - vectors @ base * base)
        return to_numpy(space.metric.exp(to_backend(vectors), to_backend(base)))

    start = np.eye(dim + 1)[0]
    centre = exp(distance * np.eye(dim + 1)[1], start)
    agents = []
    for _ in range(n_agents):
        agent = exp(rng.normal(size=dim + 1) * agent_spread / math.sqrt(dim), centre)
        agents.append(exp(rng.normal(size=(size, dim + 1)) * spread / math.sqrt(dim), agent))
    return space, agents


def epsilon_fitting(rounds, min_size, dim):
    """The epsilon at which (n_min / (2 z_1))^2 / d = rounds + 1/2 (bisection)."""
    low, high = 1e-3, 1e5
    for _ in range(80):
        middle = math.sqrt(low * high)
        fit = (min_size / (2 * calibrate_gaussian(middle, DELTA, 1))) ** 2 / dim
        low, high = (middle, high) if fit < rounds + 0.5 else (low, middle)
    return high


def config_rows(index, quick):
    config = CONFIGS[index]
    space, agents = federation(*config)
    dim, min_size = config[0], min(len(points) for points in agents)
    start = to_numpy(PriRFed(space)._start())
    target = to_backend(global_mean(space, agents, start))
    rows = []
    for fitting in FITTING[:2] if quick else FITTING:
        epsilon = epsilon_fitting(fitting, min_size, dim)
        n_rounds = tangent_mean_rounds(min_size, dim, epsilon, DELTA, CLIP, math.pi,
                                       min_rounds=0)
        for seed in range(1 if quick else SEEDS):
            errors = [float(to_numpy(space.metric.dist(PriRFed(
                space, epsilon=epsilon, delta=DELTA, clip_norm=CLIP, n_rounds=rounds,
                random_state=seed).fit(agents).estimate_, target)))
                for rounds in (1, n_rounds)]
            rows.append({"config": index, "fitting": fitting, "epsilon": epsilon,
                         "n_rounds": n_rounds, "seed": seed, "one_round": errors[0],
                         "rounds": errors[1]})
    return rows


def run(output_dir, quick=False):
    """Write ``federated_round_rule.csv`` under ``output_dir``; print the mean ratios."""
    rows = []
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for index in range(2 if quick else len(CONFIGS)):
            rows += config_rows(index, quick)
    write_csv(output_dir / "federated_round_rule.csv", rows)
    for fitting in sorted({row["fitting"] for row in rows}):
        cells = {}
        for row in rows:
            if row["fitting"] == fitting:
                cells.setdefault(row["config"], []).append(row)
        ratios = [np.mean([r["rounds"] for r in cell]) / np.mean([r["one_round"] for r in cell])
                  for cell in cells.values()]
        print(f"fitting {fitting}: rounds / one round per config "
              f"{np.round(ratios, 3).tolist()}, mean {np.mean(ratios):.3f}", flush=True)
