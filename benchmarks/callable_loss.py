"""Plain-function losses against the same loss as a PerSampleLoss subclass, per backend.

The loss is the Gaussian negative log-likelihood of a covariance X at P on SPD(2) with the
affine-invariant metric, f(P; X) = tr(P^-1 X) + log det P (minimised at the mean of the
X), on 1,000 and on 10,992 generated 2 x 2 covariances (10,992: the size of the UCI
pen-digits covariances); its Riemannian gradient is P - X. One private fit (DP-RGD,
epsilon = 1, delta = 1e-5, C = 5, the default steps from the identity) per route, best
of 5 wall times (the repeats taken round the routes in turn), in one fresh
single-threaded process per backend and size. ``first_seconds`` is the process's first
fit of the route: it also pays what later fits share (the callable's tries on dummy
records, ``optim.shared_decisions``) and first-use costs of the backend.

- ``per_sample_loss``: a ``PerSampleLoss`` subclass with batched values and gradients;
- ``callable_gradient``: ``PrivateERM(space, loss, gradient=...)``, a callable written
  with ``geomstats.backend`` that broadcasts over rows, and its closed-form gradient;
- ``callable_derived``: the same callable without a gradient: the Jacobian at the one
  point of the batch, by the complex step on d copies of the point (autograd and
  pytorch, ``optim.complex_step``), or by forward finite differences of one-point
  batched calls (numpy), all clipped and summed through the conversion's matrix at the
  point (``optim.euclidean_sums``);
- ``autodiff_loss``: an ``AutodiffLoss`` of the same function on paired rows (autodiff
  of the sum over a batch of replicated points; finite differences on numpy), the route
  ``callable_derived`` took before the Jacobian at one point;
- ``callable_rows``: a callable and gradient written for one record only (they do not
  broadcast): one call per record, the cost of a loss that cannot be batched.

The ratio is each route's time over ``per_sample_loss``'s at the same size (goal: within
2x).
"""

import json
import os
import subprocess
import sys

from benchmarks.accounting import write_csv

BACKENDS = ("numpy", "autograd", "pytorch")
N_SAMPLES, N_QUICK = 10_992, 1_000
SIZES = (N_QUICK, N_SAMPLES)
REPEATS = 5
LOSS_OBJECTS = ("per_sample_loss", "autodiff_loss")  # routes built as loss objects

_SCRIPT = """
import json, sys
from benchmarks.callable_loss import time_routes
print(json.dumps(time_routes(int(sys.argv[1]), int(sys.argv[2]))))
"""


def covariances(n_samples, seed=0):
    """``n_samples`` SPD(2) matrices: sample covariances of 8 Gaussian draws each."""
    import numpy as np

    rng = np.random.default_rng(seed)
    scales = np.array([[1.0, 0.6], [0.0, 0.8]])
    draws = rng.standard_normal((n_samples, 8, 2)) @ scales
    return np.einsum("kti,ktj->kij", draws, draws) / 8 + 1e-3 * np.eye(2)


def _routes():
    """The estimators' (loss, extra parameters) of every route, on the active backend."""
    import geomstats.backend as gs

    from geomstats_dp.optim import AutodiffLoss, PerSampleLoss
    from geomstats_dp.optim.losses import AUTODIFF_BACKENDS, backend_name

    def nll(point, sample):
        inverse = gs.linalg.inv(point)
        return gs.einsum("...ij,...ji->...", inverse, sample) + gs.log(gs.linalg.det(point))

    def nll_gradient(point, sample):
        return point - sample

    def nll_one_record(point, sample):
        if point.ndim != 2 or sample.ndim != 2:
            raise TypeError("one point and one record at a time")
        return gs.sum(gs.linalg.inv(point) * sample) + gs.log(gs.linalg.det(point))

    def gradient_one_record(point, sample):
        if point.ndim != 2 or sample.ndim != 2:
            raise TypeError("one point and one record at a time")
        return point - sample

    class NLLLoss(PerSampleLoss):
        def values(self, point, data):
            return nll(gs.repeat(point[None], data.shape[0], axis=0), data)

        def gradients(self, point, data):
            return point[None] - data

    def autodiff_loss(space):
        derivation = ("autodiff" if backend_name() in AUTODIFF_BACKENDS
                      else "finite_differences")
        return AutodiffLoss(space, nll, differentiation=derivation)

    return {
        "per_sample_loss": (NLLLoss, {}),
        "callable_gradient": (nll, {"gradient": nll_gradient}),
        "callable_derived": (nll, {}),
        "autodiff_loss": (autodiff_loss, {}),
        "callable_rows": (nll_one_record, {"gradient": gradient_one_record}),
    }


def time_routes(n_samples, repeats):
    """Best and first wall time of one fit per route on the active backend (seconds).

    The repeats go round the routes in turn, so that a burst of load from other processes
    slows every route alike rather than one route's every fit.
    """
    import time
    import warnings

    from geomstats.geometry.spd_matrices import SPDMatrices

    from geomstats_dp._backend import to_backend
    from geomstats_dp.learning import PrivateERM
    from geomstats_dp.privacy import PrivacyBudget

    space = SPDMatrices(2)
    data = to_backend(covariances(n_samples))
    routes = {route: (make_loss(space) if route in LOSS_OBJECTS else make_loss, extra)
              for route, (make_loss, extra) in _routes().items()}
    timings = {route: {"seconds": float("inf")} for route in routes}
    first = {}
    for seed in range(repeats):
        for route, (loss, extra) in routes.items():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                estimator = PrivateERM(space, loss, epsilon=1.0, delta=1e-5, clip_norm=5.0,
                                       random_state=seed, budget=PrivacyBudget(1.0, 1e-5),
                                       **extra)
                start = time.perf_counter()
                estimator.fit(data)
                seconds = time.perf_counter() - start
            first.setdefault(route, seconds)
            timings[route] = {"seconds": min(timings[route]["seconds"], seconds),
                              "first_seconds": first[route],
                              "n_iter": int(estimator.n_iter_)}
    return timings


def _run_backend(backend, n_samples, repeats):
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
           "GEOMSTATS_BACKEND": backend}
    script = _SCRIPT if backend != "pytorch" else (
        "import torch; torch.set_num_threads(1)\n" + _SCRIPT)
    completed = subprocess.run(
        [sys.executable, "-c", script, str(n_samples), str(repeats)],
        capture_output=True, text=True, check=True, env=env,
    )
    return json.loads(completed.stdout.strip().splitlines()[-1])


def run(output_dir, quick=False):
    """Write ``callable_loss[_quick].csv``: one fresh process per backend and size (1,000
    records only with ``quick``)."""
    rows = []
    for n_samples in (N_QUICK,) if quick else SIZES:
        for backend in BACKENDS:
            timings = _run_backend(backend, n_samples, REPEATS)
            reference = timings["per_sample_loss"]["seconds"]
            for route, found in timings.items():
                ratio = found["seconds"] / reference
                rows.append({"backend": backend, "route": route, "n_samples": n_samples,
                             "n_iter": found["n_iter"],
                             "seconds": round(found["seconds"], 4),
                             "first_seconds": round(found["first_seconds"], 4),
                             "ratio_to_per_sample_loss": round(ratio, 2)})
                print(f"  {n_samples:6d} {backend:8s} {route:18s} {found['seconds']:8.4f} s"
                      f"  x{ratio:.2f}  (first fit {found['first_seconds']:.4f} s)",
                      flush=True)
    prefix = "callable_loss_quick" if quick else "callable_loss"
    write_csv(output_dir / f"{prefix}.csv", rows)
    plot(rows, output_dir / f"{prefix}.png")


def plot(rows, path):
    """Time of each route over the PerSampleLoss subclass's, one group of bars a backend,
    one panel a size."""
    import matplotlib.pyplot as plt
    import numpy as np

    routes = list(dict.fromkeys(row["route"] for row in rows))
    sizes = list(dict.fromkeys(row["n_samples"] for row in rows))
    figure, axes = plt.subplots(1, len(sizes), figsize=(6.5 * len(sizes), 3.8),
                                sharey=True, squeeze=False)
    width = 0.8 / len(routes)
    for axis, n_samples in zip(axes[0], sizes):
        for index, route in enumerate(routes):
            ratios = [next(r["ratio_to_per_sample_loss"] for r in rows
                           if r["backend"] == backend and r["route"] == route
                           and r["n_samples"] == n_samples)
                      for backend in BACKENDS]
            axis.bar(np.arange(len(BACKENDS)) + index * width, ratios, width, label=route)
        axis.axhline(2.0, color="black", linestyle=":", label="goal: 2x")
        axis.set(xticks=np.arange(len(BACKENDS)) + 0.4 - width / 2, xticklabels=BACKENDS,
                 yscale="log", title=f"plain-function losses, {n_samples} SPD(2) records")
    axes[0][0].set_ylabel("fit time / PerSampleLoss subclass")
    axes[0][-1].legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
