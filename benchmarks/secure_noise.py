"""The cost of floating-point-safe noise: default draws against ``secure=True`` draws.

Rows, each a ratio of two timings made in the same run (alternating rounds, each variant
keeping its fastest round, so that load from other processes hits both alike):

- ``normal``: 10^5 standard normals in one call, numpy's PCG64 against ``SecureGenerator``
  (OS entropy; each normal the sum of two inverse-transform draws, Holohan & Braghin
  2021), and one normal per call;
- ``gamma``: 10^4 gamma draws of shape 10 (the Riemannian Laplace radii), likewise;
- ``score``: one private score's noise (scalar), the continuous Gaussian against the
  default discrete Laplace on the grid and the secure discrete Gaussian (Canonne, Kamath &
  Steinke 2020);
- ``fit``: one default ``PrivateFrechetMean`` fit (SPD(8), affine-invariant, epsilon 1,
  clip_norm 5) on the 975 "rock" EMG covariances, default against ``secure=True``.
"""

import os

import numpy as np
from geomstats.geometry.spd_matrices import SPDMatrices
from threadpoolctl import threadpool_limits

from benchmarks.accounting import write_csv
from benchmarks.sampler_overhead import _seconds_per_call
from geomstats_dp._backend import SecureGenerator
from geomstats_dp.datasets import load_emg_covariances
from geomstats_dp.learning import PrivateFrechetMean
from geomstats_dp.model_selection.scores import (
    DiscreteGaussianScore,
    GaussianScore,
    LaplaceScore,
)
from geomstats_dp.privacy import PrivacyBudget

ROUNDS = 5
SENSITIVITY = 10.0 / 50  # a score's B / n


def _score_call(mechanism, rng):
    (event,) = mechanism.events(0.5, 1e-5, SENSITIVITY, "score")
    return lambda: mechanism.noise(event, SENSITIVITY, rng)


def _fit_call(points, secure):
    def fit():
        PrivateFrechetMean(SPDMatrices(8), epsilon=1.0, delta=1e-5, clip_norm=5.0,
                           budget=PrivacyBudget(1.0, 1e-5),
                           random_state=None if secure else 0, secure=secure).fit(points)

    return fit


def cases(quick):
    """(row label, baseline name, {variant name: call}) for every row."""
    rng, secure = np.random.default_rng(0), SecureGenerator()
    size = 10**4 if quick else 10**5
    listed = [
        (f"normal x{size}", "default", {
            "default": lambda: rng.standard_normal(size),
            "secure": lambda: secure.standard_normal(size)}),
        ("normal x1", "default", {
            "default": lambda: rng.standard_normal(),
            "secure": lambda: secure.standard_normal()}),
        (f"gamma(10) x{size // 10}", "default", {
            "default": lambda: rng.gamma(10.0, 1.0, size // 10),
            "secure": lambda: secure.gamma(10.0, 1.0, size // 10)}),
        ("score noise", "continuous_gaussian", {
            "continuous_gaussian": _score_call(GaussianScore(), rng),
            "discrete_laplace": _score_call(LaplaceScore(), rng),
            "discrete_gaussian_secure": _score_call(DiscreteGaussianScore(), secure)}),
    ]
    points, _ = load_emg_covariances("rock")
    if quick:
        points = points[:200]
    listed.append((f"PrivateFrechetMean fit, {len(points)} EMG covariances", "default", {
        "default": _fit_call(points, False), "secure": _fit_call(points, True)}))
    return listed


def rows(quick):
    """One row per (case, variant): seconds per call and the ratio to the case's baseline."""
    found = []
    budget_s = 0.02 if quick else 0.3
    for label, baseline, calls in cases(quick):
        best = {name: float("inf") for name in calls}
        for _ in range(2 if quick else ROUNDS):
            for name, call in calls.items():
                best[name] = min(best[name], _seconds_per_call(call, budget_s))
        for name, seconds in best.items():
            found.append({"case": label, "variant": name, "seconds": seconds,
                          "ratio": seconds / best[baseline],
                          "load_average": os.getloadavg()[0]})
            print(f"  {label} {name}: {seconds:.3g} s ({seconds / best[baseline]:.2f}x)",
                  flush=True)
    return found


def run(output_dir, quick=False):
    """Write ``secure_noise[_quick].csv``."""
    with threadpool_limits(limits=1):
        found = rows(quick)
    write_csv(output_dir / f"secure_noise{'_quick' if quick else ''}.csv", found)
