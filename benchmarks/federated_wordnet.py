"""Federated hyperbolic structured prediction on WordNet mammals (Huang et al. 2024, 6.3).

``python -m benchmarks federated_wordnet [--quick]``. Data and loss are those of
``benchmarks/structured_prediction.py`` and ``PrivateStructuredPrediction`` (features: the
Laplacian eigenmap r = 3; targets: the 2-d Poincare embedding on ``Hyperboloid(2)``; loss
h_D, the squared distance / 2 with its Huber continuation beyond D = ``CLIP``).
"primate.n.02" (the paper's test word), "horse.n.01" and ``N_HELD_OUT - 2`` other synsets
(the centralised benchmark's seeded draw) are held out; the other pairs are split at
random among 9 agents (about 130 each, as the paper's N_i = 131). As in the paper's
problem (6.3), agent i weights its own pairs by its own kernel ridge
a_i(x) = (K_i + gamma I)^(-1) K_{i,x} (``kernel_weights``, not normalised: normalising
per agent blows up the weights of an agent whose features are all far from x), and the
objective is sum_i p_i sum_j a_ij(x) h_D(d(w, y_ij)).
Agent i holds the records (n_i a_ij(x), y_ij), packed as rows [c, y] and read by
``PackedPairsLoss``; the clip norm is C_x = max_i n_i max_j |a_ij(x)| D (public: the
features are public, label-level DP as in ``PrivateStructuredPrediction``). One PriRFed
run per (held-out word, local method, total epsilon, seed), s = 1, K = 3 (the paper's),
T = ``ROUNDS``. Results: ``results/federated_wordnet.csv`` (per round: the distance of
the server point to the true embedding, the cost, and a row for the centralised
non-private solution), ``results/federated_wordnet.png``.
"""

import time
import warnings

import numpy as np
from threadpoolctl import threadpool_limits

from benchmarks.federated import curves, plot_curves, write_csv
from benchmarks.structured_prediction import BANDWIDTH, CLIP, REGULARIZATION, SPACE, distance
from benchmarks.structured_prediction import split as held_out_split
from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.datasets import load_wordnet_mammals
from geomstats_dp.federated import PriRFed
from geomstats_dp.learning import PrivateStructuredPrediction
from geomstats_dp.learning.structured_prediction import (
    WeightedSquaredDistanceLoss,
    kernel_weights,
    nonprivate_prediction,
)
from geomstats_dp.optim import PairedSamples, PerSampleLoss

N_AGENTS = 9
N_HELD_OUT = 8  # primate + horse + 6 others
ROUNDS = 30
EPSILONS = (10.0, 100.0, 1e4)  # 1e4: noise negligible (the federated optimisation alone)
SEEDS = 3
# local steps (per agent mean gradient of scale D): rsgd with half the agent per batch
STEP_SIZE = {"rsgd": 0.1, "rsvrg": 0.05}
BATCH_SIZE = 65
ORIGIN = np.array([1.0, 0.0, 0.0])


class PackedPairsLoss(PerSampleLoss):
    """A PairedSamples loss read from records packed as rows [x, y] (x one column).

    PriRFed takes each agent's records as one array; this unpacks them into
    ``PairedSamples(rows[:, 0], rows[:, 1:])`` for ``inner``.

    Parameters
    ----------
    inner : PerSampleLoss
        A loss on PairedSamples (scalar x, y of shape ``inner.space.shape``).
    """

    def __init__(self, inner):
        super().__init__(inner.space)
        self.inner = inner

    def check_data(self, data):
        """Rows [n, 1 + dim] to checked PairedSamples."""
        rows = to_numpy(data)
        return self.inner.check_data(PairedSamples(rows[:, 0], rows[:, 1:]))

    def values(self, point, data):
        """As ``inner``, shape=[k]."""
        return self.inner.values(point, data)

    def gradients(self, point, data):
        """As ``inner``, shape=[k, *space.shape]."""
        return self.inner.gradients(point, data)


def prepare(n_held_out, seed=0):
    """Held-out words and each agent's packed records for each of them.

    Returns
    -------
    words : numpy.ndarray of str, shape=[k]
    truths : numpy.ndarray, shape=[k, 3]
    central : numpy.ndarray, shape=[k, n_train]
        The centralised weights a(x) (``PrivateStructuredPrediction.weights``).
    packed : list of list of numpy.ndarray
        packed[t][i], shape=[n_i, 4]: agent i's rows [n_i a_ij(x_t), y_ij].
    targets : numpy.ndarray, shape=[n_train, 3]
    """
    features, embeddings, names = load_wordnet_mammals()
    features, embeddings = to_numpy(features), to_numpy(embeddings)
    train, test = held_out_split(names, n_held_out - 2, seed)
    primate = int(np.flatnonzero(names == "primate.n.02")[0])
    train, test = np.setdiff1d(train, [primate]), np.concatenate([[primate], test])
    model = PrivateStructuredPrediction(SPACE, BANDWIDTH, REGULARIZATION, clip_norm=CLIP,
                                        method="rgd")
    central = model.fit(features[train], embeddings[train]).weights(features[test])
    agents = np.array_split(np.random.default_rng(seed).permutation(train), N_AGENTS)
    packed = [[np.column_stack([len(a) * kernel_weights(
        features[a], features[t:t + 1], BANDWIDTH, REGULARIZATION)[0], embeddings[a]])
        for a in agents] for t in test]
    return names[test], embeddings[test], central, packed, embeddings[train]


def run(output_dir, quick=False):
    """Write the CSV and the figure; print the last round's summary."""
    n_held_out, epsilons, seeds, rounds = ((2, (5.0,), 1, 5) if quick
                                           else (N_HELD_OUT, EPSILONS, SEEDS, ROUNDS))
    words, truths, central, packed, targets = prepare(n_held_out)
    inner = WeightedSquaredDistanceLoss(SPACE, CLIP)
    loss = PackedPairsLoss(inner)
    rows = []
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for word, truth, row, agents in zip(words, truths, central, packed):
            pooled = loss.check_data(np.concatenate(agents))
            sizes = np.array([len(a) for a in agents])

            def measure(point, truth=truth, pooled=pooled, sizes=sizes):
                point = to_numpy(point)
                if not np.isfinite(point).all():
                    return {"distance": np.nan, "cost": np.nan}
                values = to_numpy(inner.values(to_backend(point), pooled))
                return {"distance": distance(point, truth),  # cost: sum_i p_i f_i
                        "cost": float(np.sum(values) / sizes.sum())}

            tic = time.perf_counter()
            reference = nonprivate_prediction(SPACE, row, targets, 200, radius=CLIP)
            rows.append(dict(word=word, method="RGD (centralised, non-private)",
                             epsilon="inf", seed=0, round=rounds, accountant="-",
                             local_epsilon="inf", fit_seconds=time.perf_counter() - tic,
                             **measure(reference)))
            clip_norm = max(np.abs(a[:, 0]).max() for a in agents) * CLIP
            for method in ("rsgd", "rsvrg"):
                for epsilon in epsilons:
                    for seed in range(seeds):
                        tic = time.perf_counter()
                        est = PriRFed(SPACE, loss=loss, epsilon=epsilon, delta=1e-5,
                                      n_rounds=rounds, n_sampled=1, local_steps=3,
                                      local_method=method, clip_norm=clip_norm,
                                      batch_size=BATCH_SIZE, step_size=STEP_SIZE[method],
                                      init_point=ORIGIN, random_state=seed).fit(agents)
                        rows += curves(est, measure, ORIGIN, word=word,
                                       method=f"DP-{method.upper()}", epsilon=epsilon,
                                       seed=seed, fit_seconds=time.perf_counter() - tic,
                                       failed=sum(len(r["failed"]) for r in est.history_))
    write_csv(output_dir / "federated_wordnet.csv", rows)
    private = [r for r in rows if r["method"].startswith("DP")]
    plot_curves(private, output_dir / "federated_wordnet.png", "method", ("distance",),
                ("epsilon",), f"PriRFed structured prediction, WordNet mammals, 9 agents, "
                f"s=1, K=3, median over {len(words)} words x {seeds} seeds (band: quartiles)",
                stat="median")
    summarise(rows, rounds)


def summarise(rows, last):
    """Print, per (method, epsilon), the median distance to the truth at the last round
    over the finite releases, and how many releases were not finite."""
    for method, epsilon in dict.fromkeys((r["method"], r["epsilon"]) for r in rows):
        sel = np.array([r["distance"] for r in rows if r["method"] == method
                        and r["epsilon"] == epsilon and r["round"] == last])
        finite = sel[np.isfinite(sel)]
        print({"method": method, "epsilon": epsilon, "n": len(sel),
               "not_finite": int(len(sel) - len(finite)),
               "median_distance": round(float(np.median(finite)), 3) if len(finite) else None,
               "quartiles": np.round(np.percentile(finite, [25, 75]), 3).tolist()
               if len(finite) else None}, flush=True)
