"""Per-call overhead of ``TangentGaussian.sample``: the library against minimal numpy.

One draw at one base point per call, default settings (validation on), against a minimal
numpy implementation of the same transport written inline (no checks, no objects): the
normal draw, the closed-form map, nothing else. Library and minimal calls alternate over
rounds and each keeps its fastest round, so that load from other processes on the shared
machine hits both alike. Target: the library within 3x of the minimal code everywhere.
"""

import os
import time

import geomstats.backend as gs
import numpy as np
from geomstats.geometry.grassmannian import Grassmannian
from geomstats.geometry.hyperboloid import Hyperboloid
from geomstats.geometry.hypersphere import Hypersphere
from geomstats.geometry.poincare_ball import PoincareBall
from geomstats.geometry.spd_matrices import (
    SPDAffineMetric,
    SPDBuresWassersteinMetric,
    SPDLogEuclideanMetric,
    SPDMatrices,
)
from geomstats.geometry.stiefel import Stiefel
from scipy.linalg import lapack
from threadpoolctl import threadpool_limits

from benchmarks.accounting import write_csv
from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.distributions import TangentGaussian
from geomstats_dp.distributions.grassmann import range_basis

TARGET = 3.0
ROUNDS = 5


def _sphere(point, rng):
    coefficients = rng.standard_normal(point.size - 1)
    sign = 1.0 if point[0] >= 0 else -1.0
    coef = (point[1:] @ coefficients) / (1.0 + sign * point[0])
    draw = np.empty_like(point)
    draw[1:] = coefficients - coef * point[1:]
    draw[0] = -coef * (point[0] + sign)
    return draw


def _hyperboloid(point, rng):
    coefficients = rng.standard_normal(point.size - 1)
    coef = (point[1:] @ coefficients) / (1.0 + point[0])
    draw = np.empty_like(point)
    draw[1:] = coefficients + coef * point[1:]
    draw[0] = coef * (1.0 + point[0])
    return draw


def _poincare(point, rng):
    return rng.standard_normal(point.size) * ((1.0 - point @ point) / 2)


def _symmetric_draw(size, rng, scale=1.0):
    """C * A: N(0, 1) diagonal, N(0, 1/2) off it (the average of a and a^T)."""
    entries = rng.standard_normal((size, size))
    return (entries + entries.T) * (scale / 2)


def _spd_affine(point, rng):
    factor = np.linalg.cholesky(point)
    return factor @ _symmetric_draw(point.shape[0], rng) @ factor.T


def _eigenbasis(kernel, scale):
    def draw(point, rng):
        eigvals, eigvecs = np.linalg.eigh(point)
        rotated = eigvecs.T @ _symmetric_draw(point.shape[0], rng, scale) @ eigvecs
        return eigvecs @ (kernel(eigvals) * rotated) @ eigvecs.T

    return draw


def _bures_wasserstein_kernel(eigvals):
    return np.sqrt((eigvals[:, None] + eigvals[None, :]) / 2)


def _log_euclidean_kernel(eigvals):
    logs = np.log(eigvals)
    gaps = logs[:, None] - logs[None, :]
    safe = np.where(gaps == 0, 1.0, gaps)
    return eigvals[None, :] * np.where(gaps == 0, 1.0, np.expm1(safe) / safe)


def _householder_apply(frame, stack):
    """M stack with M = Q diag(s, I), frame = Q R (LAPACK geqrf / ormqr)."""
    factor, tau, _, _ = lapack.dgeqrf(frame)
    rank = frame.shape[1]
    signed = stack.copy()
    signed[:rank] *= np.where(np.diag(factor) >= 0, 1.0, -1.0)[:, None]
    return lapack.dormqr("L", "N", factor, tau, signed, max(1, stack.shape[1]) * 64 + 4160)[0]


def _stiefel(point, rng):
    size, rank = point.shape
    upper = np.triu(rng.standard_normal((rank, rank)), 1)
    reference = np.empty((size, rank))
    reference[:rank] = upper - upper.T
    reference[rank:] = rng.standard_normal((size - rank, rank))
    return _householder_apply(point, reference)


def _grassmann(point, rank):
    def draw(projector, rng):
        size = projector.shape[0]
        frame = range_basis(projector[None], rank)[0]
        lifted = np.zeros((size, rank))
        lifted[rank:] = rng.standard_normal((size - rank, rank)) / np.sqrt(2)
        moved = _householder_apply(frame, lifted)
        product = moved @ frame.T
        return product + product.T

    return draw


def _spd(metric_class, size):
    space = SPDMatrices(size, equip=False)
    space.equip_with_metric(metric_class)
    return space


def cases():
    """(label, space, minimal draw function) for every family at the issue's sizes."""
    listed = []
    for size in (1000, 2000):
        listed += [
            (f"sphere m={size}", Hypersphere(size - 1), _sphere),
            (f"hyperboloid m={size}", Hyperboloid(size - 1), _hyperboloid),
            (f"poincare_ball m={size}", PoincareBall(size), _poincare),
        ]
    listed += [
        ("spd_affine m=30", _spd(SPDAffineMetric, 30), _spd_affine),
        (
            "spd_bures_wasserstein m=30",
            _spd(SPDBuresWassersteinMetric, 30),
            _eigenbasis(_bures_wasserstein_kernel, 2.0),
        ),
        (
            "spd_log_euclidean m=30",
            _spd(SPDLogEuclideanMetric, 30),
            _eigenbasis(_log_euclidean_kernel, 1.0),
        ),
        ("stiefel (1000, 20)", Stiefel(1000, 20), _stiefel),
        ("grassmann (1000, 20)", Grassmannian(1000, 20), _grassmann(None, 20)),
    ]
    return listed


def _seconds_per_call(call, budget_s):
    call()
    n_calls, start = 0, time.perf_counter()
    while n_calls < 3 or time.perf_counter() - start < budget_s:
        call()
        n_calls += 1
    return (time.perf_counter() - start) / n_calls


def rows(budget_s):
    """One row per case: seconds per call of the library (validated and not) and minimal."""
    found = []
    for label, space, minimal in cases():
        gs.random.seed(0)
        point = to_numpy(space.random_point())
        backend_point = to_backend(point)
        rng = np.random.default_rng(0)
        variants = {
            "library": TangentGaussian(space),
            "library_validate_false": TangentGaussian(space, validate=False),
        }
        calls = {
            name: (lambda sampler=sampler: sampler.sample(backend_point, random_state=rng))
            for name, sampler in variants.items()
        }
        calls["minimal"] = lambda: minimal(point, rng)
        best = {name: float("inf") for name in calls}
        for _ in range(ROUNDS):
            for name, call in calls.items():
                best[name] = min(best[name], _seconds_per_call(call, budget_s))
        row = {"case": label, **{f"{name}_seconds": value for name, value in best.items()}}
        row["ratio"] = best["library"] / best["minimal"]
        row["ratio_validate_false"] = best["library_validate_false"] / best["minimal"]
        row["met"] = row["ratio"] <= TARGET
        row["load_average"] = os.getloadavg()[0]
        found.append(row)
        print(f"  {label}: {row['ratio']:.2f}x (validate=False {row['ratio_validate_false']:.2f}x)",
              flush=True)
    return found


def run(output_dir, quick=False):
    """Write ``sampler_overhead[_quick].csv``."""
    prefix = "sampler_overhead_quick" if quick else "sampler_overhead"
    with threadpool_limits(limits=1):
        found = rows(budget_s=0.02 if quick else 0.2)
    write_csv(output_dir / f"{prefix}.csv", found)
