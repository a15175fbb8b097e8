"""The compiled block of DP-RGD / DP-RSGD steps of the squared distance on SPD(n), n >= 3,
with the affine-invariant metric (possibly scaled), for ``optim.compiled_blocks``.

Per step, with F F^T = P the iterate's factor (kept from the map that formed it, as
``geodesics.SPDAffineGeodesics`` keeps it): per record one ``eigh`` of the whitened
W_i = F^-1 X_i F^-T = U_i diag(l_i) U_i^T, the norm sqrt(scale) |log l_i|, the clip
factor and the sum F (sum_i c_i U_i diag(-log l_i) U_i^T) F^T (``affine_log``); the
noise L A L^T, L the Cholesky factor of P and A the normals in the coordinates of
``distributions.spd`` (``SPDAffineTransport.draw_one``); the optional projection of
``step_cap``; the exponential map G G^T, G = F Q diag(exp(m / 2)) from one ``eigh`` of
M = F^-1 V F^-T, and the running averages with (.)^(t / 2) (``geodesics``), with the
bound on the condition number that decides when the spectrum is floored
(``onto_space.floor_spectrum``). numba's ``eigh`` is LAPACK's (through SciPy), the
loop's numpy's: the two routes agree to rounding. Numba caches the kernel on disk keyed
on this file: the formulas are written here (the loop's are array code), so editing the
loop's formulas means editing these (the tests compare the two routes).
"""

import math

import numpy as np

from geomstats_dp.optim.affine_log import (
    AffineLogSums,
    known_factors,
    square_root_factor,
)
from geomstats_dp.optim.onto_space import SPD_CONDITION_LIMIT, floor_spectrum


def state(point):
    """The kernel's point: (P, F, F^-1, [kappa]) [4, n, n], F F^T = P, kappa (at [3, 0,
    0]) a bound on the condition number of P (inf: unknown, as for a point the
    geodesics did not form)."""
    chain = np.zeros((4, *point.shape))
    chain[0] = point
    chain[1], chain[2] = square_root_factor(point)
    chain[3, 0, 0] = math.inf
    return chain


def records(data):
    """The data as the kernel reads them: [n_samples, n, n]."""
    return np.require(data, np.float64, ["C", "W"])


def _clipped_gradient(records, weights, indices, start, end, chain, settings):
    """(sum_i (n / b) w_i clip_C(-Log_P(X_i)) over ``indices[start:end]`` [n, n], True);
    False where the factor F^-1 is not finite (an iterate that underflowed: the loop's
    ``eigh`` of the whitened batch raises, the kernel stops, ``raise_failure``). A record
    whose whitened matrix is not finite (entries near the float64 maximum) adds nothing,
    as in the loop (``AffineLogSums.eigen``)."""
    batch_scale, clip_norm, norm_scale = settings[0], settings[1], settings[2]
    factor, inverse = chain[1], chain[2]
    total = np.zeros(factor.shape)
    if not np.isfinite(inverse).all():
        return total, False
    for position in range(start, end):
        index = indices[position]
        whitened = inverse @ records[index] @ inverse.T
        if not np.isfinite(whitened).all():
            continue
        eigvals, eigvecs = np.linalg.eigh(whitened)
        logs = np.log(eigvals)
        norm = math.sqrt((logs * logs).sum()) * norm_scale
        if norm < math.inf:  # a record of non-finite norm adds nothing
            coefficient = batch_scale * weights[index] * (clip_norm / max(norm, clip_norm))
            total += (eigvecs * (logs * -coefficient)) @ eigvecs.T
    return factor @ total @ factor.T, True


def _add_noise(direction, point, normals, scale):
    """direction += scale L A L^T (``SPDAffineTransport.draw_one``); False (nothing
    added) where the sampler rejects P (not finite, or no Cholesky factor)."""
    size = point.shape[0]
    if not math.isfinite(point.sum()):
        return False
    lower = np.zeros((size, size))
    for column in range(size):
        rest = point[column, column] - (lower[column, :column] ** 2).sum()
        if not rest > 0:
            return False
        lower[column, column] = math.sqrt(rest)
        for row in range(column + 1, size):
            lower[row, column] = (point[row, column] - (
                lower[row, :column] * lower[column, :column]).sum()) / lower[column, column]
    at_identity = np.empty((size, size))
    for row in range(size):
        for column in range(size):
            low, high = min(row, column), max(row, column)
            coordinate = normals[low * size - low * (low - 1) // 2 + high - low]
            at_identity[row, column] = coordinate * (1.0 if row == column else math.sqrt(0.5))
    draw = lower @ at_identity @ lower.T
    direction += (draw + draw.T) / 2 * scale
    return True


def _tangent_norm(tangent_vec, inverse, norm_scale):
    """sqrt(scale) |F^-1 V F^-T|_F: the norm of V at P."""
    whitened = inverse @ tangent_vec @ inverse.T
    return norm_scale * math.sqrt((whitened * whitened).sum())


def _floor(chain):
    """``onto_space.floor_spectrum`` of chain[0], in place: the bound it returns."""
    symmetric = (chain[0] + chain[0].T) / 2
    if not np.isfinite(symmetric).all():  # the loop's eigvalsh raises (``raise_failure``)
        return math.inf
    eigvals = np.linalg.eigvalsh(symmetric)
    smallest, largest = eigvals[0], eigvals[-1]
    if smallest >= largest / SPD_CONDITION_LIMIT:
        return largest / smallest if smallest > 0 else math.inf
    eigvals, eigvecs = np.linalg.eigh(symmetric)
    roots = np.sqrt(np.maximum(eigvals, largest / SPD_CONDITION_LIMIT))
    factor = eigvecs * roots
    floored = factor @ factor.T
    chain[0] = (floored + floored.T) / 2
    chain[1] = factor
    chain[2] = eigvecs.T / roots.reshape((-1, 1))
    return SPD_CONDITION_LIMIT


def _whitened_map(chain, matrix, power):
    """``chain`` = (P, F, F^-1, [kappa]) becomes G G^T with its factors and bound,
    G = F Q diag(h(m)), M = F^-1 matrix F^-T = Q diag(m) Q^T: h = exp(. / 2) for power
    0 (Exp_P(matrix)), (.)^(power / 2) otherwise (Exp_P(power Log_P(matrix))). False
    where the point formed is not finite (where the loop's ``eigh`` raises: the kernel
    stops, ``raise_failure``)."""
    whitened = chain[2] @ matrix @ chain[2].T
    if not np.isfinite(whitened).all():
        chain[0] = math.nan
        return False
    eigvals, eigvecs = np.linalg.eigh(whitened)
    halves = np.exp(eigvals / 2) if power == 0.0 else eigvals ** (power / 2)
    factor = chain[1] @ (eigvecs * halves)
    chain[2] = (eigvecs.T / halves.reshape((-1, 1))) @ chain[2]
    chain[1] = factor
    chain[0] = factor @ factor.T
    bound = chain[3, 0, 0] * (halves.max() / halves.min()) ** 2
    if not bound <= SPD_CONDITION_LIMIT:
        bound = _floor(chain)
    chain[3, 0, 0] = bound
    return math.isfinite(chain[0].sum())


def _run_block(records, weights, indices, starts, ends, normals, etas, first, settings,
               iterate, tracked, trail):
    """Run ``len(etas)`` steps of ``minimize`` from ``iterate``, in place; the arguments
    and the result of ``compiled_spd2._run_block``, except: ``records`` [n_samples, n, n],
    ``normals`` n (n + 1) / 2 a step, ``iterate`` and ``tracked`` [4, n, n] (``state``:
    the point with its factors and bound; the running average with its own, or at [0]
    the random output), ``trail`` [n_steps + 1 or 0, n, n]; ``done`` is also the step
    whose map formed a point that is not finite."""
    noise_scale, bound, power, chosen = settings[3], settings[4], settings[5], settings[6]
    dim = iterate.shape[1] * (iterate.shape[1] + 1) // 2
    for step in range(etas.shape[0]):
        if trail.shape[0] > 0:
            trail[first + step] = iterate[0]
        if first + step == chosen:
            tracked[0] = iterate[0]
        direction, found = _clipped_gradient(records, weights, indices, starts[step],
                                             ends[step], iterate, settings)
        if not found:
            return step
        if noise_scale > 0 and not _add_noise(
                direction, iterate[0], normals[dim * step : dim * (step + 1)], noise_scale):
            return step
        if bound < math.inf:
            norm = _tangent_norm(direction, iterate[2], settings[2])
            direction *= bound / max(norm, bound) if norm < math.inf else 0.0
        if not _whitened_map(iterate, -etas[step] * direction, 0.0):
            return step
        if power > 0:  # a_k = Exp_a(c Log_a(w_k)), c = min(1, power / k)
            coefficient = min(1.0, power / (first + step + 1))
            if coefficient == 1.0:
                tracked[:] = iterate
            elif not _whitened_map(tracked, iterate[0].copy(), coefficient):
                return step
    return etas.shape[0]


def raise_failure(chain, data, batch):
    """Raise the loop's error where the kernel stopped: numpy's, from the loop's own
    computations at ``chain`` (the gradient sums of the step's ``batch`` of ``data``,
    ``AffineLogSums``; the ``onto_space.floor_spectrum`` of a point that is not finite);
    if none raises, the driver raises the noise sampler's."""
    with known_factors(lambda point: (chain[1], chain[2])):
        AffineLogSums(chain[0])(data[batch])
    if not math.isfinite(float(chain[0].sum())):
        floor_spectrum(chain[0])


_HELPERS = (_clipped_gradient, _add_noise, _tangent_norm, _floor, _whitened_map)


def compile_kernel():
    """``_run_block`` compiled by numba (``njit(cache=True)``), its helpers registered
    as jitable."""
    import numba
    from numba.extending import register_jitable

    for helper in _HELPERS:
        register_jitable(error_model="numpy")(helper)
    return numba.njit(cache=True, error_model="numpy")(_run_block)
