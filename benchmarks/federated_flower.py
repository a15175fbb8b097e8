"""Where a PriRFed run on Flower's simulation engine spends its time, against the local one.

``python -m benchmarks federated_flower [--quick]`` writes
``benchmarks/results/federated_flower.csv``: the same run (3 agents on S^2 holding 20
points each, s = 2, K = 5 DP-RGD steps, T = 20 rounds) on the in-process engine and on
Flower's simulation engine (Ray, two workers), the latter with Flower's own polling
(0.1 s) and with the library's (``flower_runtime.POLL_S``), alternated, ``REPEATS`` times
each, all in one run. Each Flower run is split by timestamps taken around Flower's
``RayBackend.init_ray`` and in the ServerApp's strategy: ``ray_init_s`` (from ``fit`` to
Ray started), ``workers_s`` (from there to the first round: the two worker processes
start, import the library, receive the run and answer the nodes' identification), the
rounds, and the shutdown (after the last round); ``startup_s`` is the sum of the first
two. The training a round does is the in-process engine's time per round; the rest of a
Flower round is messaging and polling (``overhead_per_round_s``).
"""

import os
import time

import numpy as np

from benchmarks.federated import write_csv
from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.federated import PriRFed, flower_app, flower_runtime

REPEATS = 3
N_ROUNDS = 20
FLOWER_POLL_S = 0.1  # Flower 1.41's pull interval and message extractor's wait


def agents():
    from geomstats.geometry.hypersphere import Hypersphere

    space = Hypersphere(2)
    rng = np.random.default_rng(0)
    north = np.array([0.0, 0.0, 1.0])
    return space, [to_numpy(space.projection(to_backend(north + 0.3 * rng.normal(size=(20, 3)))))
                   for _ in range(3)]


class RoundClock:
    """Timestamps of Ray's start and of the strategy's rounds, for one run: wraps
    ``RayBackend.init_ray`` and ``ManifoldStrategy`` (restored on exit)."""

    def __init__(self):
        self.stamps = []
        self.ray_started = None
        strategy = flower_app.ManifoldStrategy
        self.original = strategy.configure_train, strategy.aggregate_train

    def __enter__(self):
        from flwr.server.superlink.fleet.vce.backend.raybackend import RayBackend

        configure, aggregate = self.original
        stamps = self.stamps
        self.init_ray = init_ray = RayBackend.init_ray

        def timed_init_ray(backend, *args, **kwargs):
            init_ray(backend, *args, **kwargs)
            self.ray_started = time.perf_counter()

        RayBackend.init_ray = timed_init_ray

        def timed_configure(strategy, *args, **kwargs):
            stamps.append(time.perf_counter())
            return configure(strategy, *args, **kwargs)

        def timed_aggregate(strategy, *args, **kwargs):
            result = aggregate(strategy, *args, **kwargs)
            stamps.append(time.perf_counter())
            return result

        flower_app.ManifoldStrategy.configure_train = timed_configure
        flower_app.ManifoldStrategy.aggregate_train = timed_aggregate
        return self

    def __exit__(self, *exc):
        from flwr.server.superlink.fleet.vce.backend.raybackend import RayBackend

        RayBackend.init_ray = self.init_ray
        flower_app.ManifoldStrategy.configure_train, flower_app.ManifoldStrategy.aggregate_train = (
            self.original
        )


def timed_fit(space, data, engine, n_rounds, poll_s=None):
    """One fit: a row with its seconds (and, for Flower, their split)."""
    run_flower = flower_app.run_flower
    if poll_s is not None:
        flower_app.run_flower = lambda run, datasets: run_flower(run, datasets, poll_s=poll_s)
    try:
        with RoundClock() as clock:
            tic = time.perf_counter()
            est = PriRFed(space, epsilon=1.0, n_rounds=n_rounds, n_sampled=2, local_steps=5,
                          local_method="rgd", clip_norm=1.0, engine=engine,
                          random_state=0).fit(data)
            toc = time.perf_counter()
    finally:
        flower_app.run_flower = run_flower
    row = {"engine": engine if poll_s is None else f"flower (poll {poll_s:g} s)",
           "n_rounds": n_rounds, "seconds": toc - tic,
           "estimate": " ".join(f"{v:.12f}" for v in to_numpy(est.estimate_))}
    if clock.stamps:
        first, last = clock.stamps[0], clock.stamps[-1]
        row.update(ray_init_s=clock.ray_started - tic, workers_s=first - clock.ray_started,
                   startup_s=first - tic, rounds_s=last - first, shutdown_s=toc - last)
        row["per_round_s"] = row["rounds_s"] / n_rounds
    else:
        row["per_round_s"] = row["seconds"] / n_rounds
    row["loadavg"] = " ".join(f"{v:.2f}" for v in os.getloadavg())
    return row


def run(output_dir, quick=False):
    """Write ``federated_flower.csv`` under ``output_dir``."""
    space, data = agents()
    n_rounds, repeats = (5, 1) if quick else (N_ROUNDS, REPEATS)
    rows = []
    for repeat in range(repeats):
        local = timed_fit(space, data, "local", n_rounds)
        for poll_s in (FLOWER_POLL_S, flower_runtime.POLL_S):
            row = timed_fit(space, data, "flower", n_rounds, poll_s)
            row["overhead_per_round_s"] = row["per_round_s"] - local["per_round_s"]
            rows.append(dict(row, repeat=repeat))
        rows.append(dict(local, repeat=repeat))
    for row in rows:
        print(row, flush=True)
    write_csv(output_dir / "federated_flower.csv", rows)
