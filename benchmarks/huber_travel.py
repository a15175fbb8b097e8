"""A public travel distance in DP-RGD's noise-aware step, for PrivateERM's Huber mean.

``python -m benchmarks huber_travel [--quick]``. The default DP-RGD step is 0.5 s with
s = C / sqrt(C^2 + d sigma^2) (``learning._defaults.default_step_size``): Han et al.
2024's Theorem 2 step with the distance to travel D set to the clip radius C. Where the
noise dominates, the steps shrink and the run stays near the start. This benchmark tries
D = the radius of the public ball holding the data (the positive orthant's, which the
means suite gives the Frechet mean): s = min(1, D / sqrt(C^2 + d sigma^2)). It is a rule
on public quantities only, tried as a replacement of the default's (patched in for the
run), not offered.

``HuberDistanceLoss(space, 0.5)`` on the means suite's sphere rows (x0 the centre of the
positive orthant, C = 0.5, delta 1e-5), ``method="rgd"`` forced, epsilon 0.1 and 1, 5
seeds; error: the distance to the non-private Huber mean. Writes
``results/huber_travel.csv`` (dataset, epsilon, travel, seed, error, start_distance).
"""

import contextlib
import math
import warnings

from threadpoolctl import threadpool_limits

from benchmarks.baseline_suites.means import (
    HUBER_RADIUS,
    SPHERE_DATASETS,
    huber_mean,
    sphere_public_setting,
)
from benchmarks.federated import write_csv
from benchmarks.huber_rules import _distance, _fit, _setting, print_cells
from geomstats_dp._backend import to_backend
from geomstats_dp.learning import _defaults
from geomstats_dp.optim import ConstantStep

EPSILONS = (0.1, 1.0)
SEEDS = 5


@contextlib.contextmanager
def travel_step(distance):
    """DP-RGD's default step with the travel distance ``distance`` in place of C."""
    default = _defaults.default_step_size

    def step(method, inner_steps, clip_norm, noise_stds, dim, smoothness=1.0):
        if method != "rgd":
            return default(method, inner_steps, clip_norm, noise_stds, dim, smoothness)
        variance = sum(std**2 for std in noise_stds)
        shrink = min(1.0, distance / math.sqrt(clip_norm**2 + dim * variance))
        return ConstantStep(_defaults.RGD_STEP_SIZE * shrink / smoothness)

    _defaults.default_step_size = step
    try:
        yield
    finally:
        _defaults.default_step_size = default


def dataset_rows(name, quick):
    """Forced DP-RGD with D = C (the default) and D = the public ball's radius."""
    points = SPHERE_DATASETS[name]()
    space, x0, loss = _setting(points)
    _, ball_radius = sphere_public_setting(points.shape[1])
    target = to_backend(huber_mean(space, points, x0, HUBER_RADIUS))
    start_distance = _distance(space, x0, target)
    rows = []
    for epsilon in EPSILONS[:1] if quick else EPSILONS:
        for travel, context in (("C", contextlib.nullcontext()),
                                ("ball", travel_step(ball_radius))):
            with context:
                for seed in range(1 if quick else SEEDS):
                    est = _fit(space, loss, points, x0, epsilon, seed, "rgd")
                    rows.append({"dataset": name, "epsilon": epsilon, "travel": travel,
                                 "seed": seed,
                                 "error": _distance(space, est.estimate_, target),
                                 "start_distance": start_distance})
    return rows


def run(output_dir, quick=False):
    """Write ``huber_travel.csv`` under ``output_dir``; print the mean errors per cell."""
    rows = []
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in list(SPHERE_DATASETS)[:1] if quick else SPHERE_DATASETS:
            rows += dataset_rows(name, quick)
    write_csv(output_dir / "huber_travel.csv", rows)
    print_cells(rows, ("dataset", "epsilon", "travel"))
