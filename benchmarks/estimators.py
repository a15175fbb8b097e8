"""Every private estimator against its non-private solver: fit time, timed in the same run.

One row per entry of ``ENTRIES``. To add an estimator, append an ``Entry`` whose ``make``
returns ``(private_fit, baseline_fit)``: two zero-argument callables that fit on the same
data (built once, outside the timing). Each callable runs ``REPEATS`` times, alternating
with the other, and keeps its fastest run.
"""

import os
import time
from dataclasses import dataclass
from functools import partial

import geomstats.backend as gs
import numpy as np
from threadpoolctl import threadpool_limits

from benchmarks.accounting import write_csv

REPEATS = 7


@dataclass(frozen=True)
class Entry:
    """One estimator: its name, its non-private solver's name and the two fits."""

    estimator: str
    baseline: str
    problem: str
    make: object  # quick: bool -> (private_fit, baseline_fit)


def _frechet_mean(quick, method):
    from geomstats.geometry.spd_matrices import SPDMatrices
    from geomstats.learning.frechet_mean import FrechetMean

    from geomstats_dp.learning import PrivateFrechetMean

    space = SPDMatrices(8)
    gs.random.seed(0)
    points = space.random_point(200 if quick else 2000)

    def private():
        PrivateFrechetMean(space, epsilon=1.0, delta=1e-5, method=method, clip_norm=3.0,
                           random_state=0).fit(points)

    def baseline():
        FrechetMean(space).fit(points)

    return private, baseline


def _pca(quick):
    from geomstats_dp.learning import PrivatePCA

    rng = np.random.default_rng(0)
    n_rows, n_features = (500, 20) if quick else (5000, 50)
    rows = rng.standard_normal((n_rows, n_features)) * np.linspace(2.0, 0.5, n_features)
    rows /= np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1.0)

    def private():
        PrivatePCA(n_components=1, epsilon=1.0, delta=1e-5, data_norm=1.0,
                   random_state=0).fit(rows)

    def baseline():
        centred = rows - rows.mean(axis=0)
        np.linalg.eigh(centred.T @ centred)

    return private, baseline


def _erm(quick):
    from geomstats.geometry.hypersphere import Hypersphere

    from geomstats_dp.learning import PrivateERM
    from geomstats_dp.optim import CallableLoss, FullBatch, minimize

    sphere = Hypersphere(2)
    rng = np.random.default_rng(0)
    raw = np.array([1.0, 0.0, 0.0]) + 0.3 * rng.standard_normal((200 if quick else 2000, 3))
    records = raw / np.linalg.norm(raw, axis=1, keepdims=True)

    def loss(point, sample):
        return -gs.sum(point * sample)

    def gradient(point, sample):
        return -sample

    n_iter = 10

    def private():
        PrivateERM(sphere, loss, epsilon=1.0, delta=1e-5, clip_norm=1.0, n_iter=n_iter,
                   gradient=gradient, gradient_kind="euclidean", random_state=0).fit(records)

    def baseline():
        minimize(CallableLoss(sphere, loss, gradient, "euclidean"), records,
                 FullBatch(1.0, 0.0), n_iter, 0.5, random_state=0)

    return private, baseline


def _structured_prediction(quick):
    from geomstats.geometry.hyperboloid import Hyperboloid

    from geomstats_dp.learning import PrivateStructuredPrediction
    from geomstats_dp.learning.structured_prediction import nonprivate_prediction

    space = Hyperboloid(2)
    rng = np.random.default_rng(0)
    features = rng.uniform(-1.0, 1.0, (100 if quick else 300, 2))
    origin = gs.array([1.0, 0.0, 0.0])
    tangents = np.concatenate([np.zeros((len(features), 1)), features], axis=1)
    targets = space.metric.exp(gs.array(tangents), origin)
    queries = rng.uniform(-1.0, 1.0, (2 if quick else 5, 2))
    clip, n_iter = 2.0, 20  # the private step is its noise-aware default, the other 0.5

    def private():
        model = PrivateStructuredPrediction(space, bandwidth=0.3, method="rgd", epsilon=1.0,
                                            delta=1e-5, clip_norm=clip, n_iter=n_iter,
                                            random_state=0)
        model.fit(features, targets).predict(queries)

    model = PrivateStructuredPrediction(space, bandwidth=0.3, clip_norm=clip, method="rgd")
    model.fit(features, targets)

    def baseline():
        for weights in model.weights(queries):
            nonprivate_prediction(space, weights, targets, n_iter, 0.5, radius=clip)

    return private, baseline


def _matrix_completion(quick):
    from geomstats_dp.distributions.grassmann_bases import GrassmannBases
    from geomstats_dp.learning import PrivateMatrixCompletion
    from geomstats_dp.learning.matrix_completion import (
        GRADIENT_REGULARIZATION,
        MatrixCompletionLoss,
        start_basis,
    )
    from geomstats_dp.optim import MiniBatch, minimize

    rng = np.random.default_rng(0)
    n_users, n_items, rank = (100, 30, 3) if quick else (400, 60, 3)
    ratings = rng.standard_normal((n_users, rank)) @ rng.standard_normal((rank, n_items))
    ratings += 0.1 * rng.standard_normal(ratings.shape)
    ratings[rng.random(ratings.shape) > 0.3] = np.nan
    n_iter, batch_size, step_size = 50, 20, 0.05
    settings = dict(rank=rank, clip_norm=5.0, method="rsgd", n_iter=n_iter,
                    batch_size=batch_size, step_size=step_size)

    def private():
        PrivateMatrixCompletion(epsilon=1.0, delta=1e-5, random_state=0, **settings).fit(ratings)

    loss = MatrixCompletionLoss(GrassmannBases(n_items, rank), GRADIENT_REGULARIZATION)

    def baseline():
        minimize(loss, gs.array(ratings), MiniBatch(batch_size, 5.0, 0.0), n_iter, step_size,
                 start_basis(n_items, rank), random_state=0)

    return private, baseline


def _prirfed(quick):
    from geomstats.geometry.hypersphere import Hypersphere

    from geomstats_dp.federated import PriRFed
    from geomstats_dp.federated.aggregation import tangent_mean
    from geomstats_dp.federated.local import local_train
    from geomstats_dp.optim import FullBatch, SquaredDistanceLoss

    sphere = Hypersphere(2)
    rng = np.random.default_rng(0)
    n_agents, n_each = (5, 50) if quick else (10, 200)
    raw = np.array([0.0, 0.0, 1.0]) + 0.4 * rng.standard_normal((n_agents, n_each, 3))
    datasets = list(raw / np.linalg.norm(raw, axis=-1, keepdims=True))
    settings = dict(n_rounds=10, n_sampled=3, local_steps=5, local_method="rgd",
                    clip_norm=np.pi, step_size=0.5)
    loss = SquaredDistanceLoss(sphere)
    checked = [loss.check_data(data) for data in datasets]
    start = gs.array([1.0, 0.0, 0.0])

    def private():
        PriRFed(sphere, epsilon=1.0, delta=1e-5, engine="local", init_point=start,
                random_state=0, **settings).fit(datasets)

    def baseline():
        rounds = np.random.default_rng(0)
        point = start
        for round_index in range(settings["n_rounds"]):
            agents = rounds.choice(n_agents, settings["n_sampled"], replace=False)
            replies = [
                local_train(loss, checked[agent], FullBatch(np.pi, 0.0),
                            settings["local_steps"], settings["step_size"], point,
                            np.random.SeedSequence(0, spawn_key=(round_index, int(agent))))
                for agent in agents
            ]
            point = tangent_mean(sphere, gs.array(np.stack(replies)),
                                 gs.ones(len(agents)) / len(agents), point)

    return private, baseline


ENTRIES = [
    Entry("PrivateFrechetMean (rgd)", "geomstats FrechetMean", "SPD(8), 2000 points",
          partial(_frechet_mean, method="rgd")),
    Entry("PrivateFrechetMean (default: auto, here two_stage)", "geomstats FrechetMean",
          "SPD(8), 2000 points", partial(_frechet_mean, method="auto")),
    Entry("PrivatePCA (k=1)", "numpy eigh of the covariance", "5000 x 50 rows", _pca),
    Entry("PrivateERM (callable loss, rgd)", "the same 10 steps without noise (minimize)",
          "S^2, 2000 records, closed-form gradient", _erm),
    Entry("PrivateStructuredPrediction (rgd, 5 queries)",
          "nonprivate_prediction per query (the same 20 RGD steps)",
          "H^2, 300 training pairs", _structured_prediction),
    Entry("PrivateMatrixCompletion (rsgd)", "the same 50 steps without noise (minimize)",
          "400 users x 60 items, rank 3, 30% observed", _matrix_completion),
    Entry("PriRFed (local engine, rgd)",
          "the same rounds and local steps without noise, tangent-mean aggregation",
          "S^2, 10 agents x 200 records, 10 rounds of 3 agents x 5 steps", _prirfed),
]


def _fastest(call):
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def rows(quick):
    """One row per entry: seconds of the private and the non-private fit, and their ratio."""
    found = []
    for entry in ENTRIES:
        private, baseline = entry.make(quick)
        private_s = baseline_s = float("inf")
        for _ in range(REPEATS):
            private_s = min(private_s, _fastest(private))
            baseline_s = min(baseline_s, _fastest(baseline))
        found.append({
            "estimator": entry.estimator, "baseline": entry.baseline, "problem": entry.problem,
            "private_seconds": private_s, "baseline_seconds": baseline_s,
            "ratio": private_s / baseline_s, "loadavg_1min": round(os.getloadavg()[0], 2),
        })
        print(f"  {entry.estimator}: {private_s:.3g} s vs {baseline_s:.3g} s "
              f"({private_s / baseline_s:.2f}x); load {os.getloadavg()}", flush=True)
    return found


def run(output_dir, quick=False):
    """Write ``estimators[_quick].csv``."""
    with threadpool_limits(limits=1):
        found = rows(quick)
    prefix = "estimators_quick" if quick else "estimators"
    write_csv(output_dir / f"{prefix}.csv", found)
