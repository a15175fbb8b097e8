"""The compiled block of DP-RGD / DP-RSGD steps of the squared distance on SPD(2) with the
affine-invariant metric (possibly scaled), for ``optim.compiled_blocks``.

Per step: the clipped weighted sum of -Log_P(X_i) (the closed form of ``affine_log``),
the noise L U L^T (``distributions.spd``), the optional projection of ``step_cap``, the
exponential map and the output's running average (the closed forms of ``geodesics``,
whose helpers it compiles, with the floor of ``onto_space`` that keeps a point on SPD).
The helpers stay plain Python functions for the loop; numba compiles them here. Its
on-disk cache is keyed on this file alone: after editing a helper it compiles
(``geodesics``, ``onto_space``, ``symmetric_2x2``, ``distributions.spd``), touch this
file so that the kernel is compiled again (the tests compare the two routes).
"""

import math

import numpy as np

from geomstats_dp.distributions.spd import cholesky_2x2, draw_2x2
from geomstats_dp.optim.affine_log import square_root_factor
from geomstats_dp.optim.geodesics import (
    factor_map_2x2,
    function_2x2,
    product_2x2,
    transpose_2x2,
    whitened_spectrum_2x2,
)
from geomstats_dp.optim.onto_space import floor_spectrum_2x2
from geomstats_dp.optim.symmetric_2x2 import function_coefficients, spectrum_2x2

FASTMATH = {"contract", "reassoc", "arcp", "nsz"}


def state(point):
    """The kernel's point: (P, F, F^-1) [3, 2, 2], F F^T = P."""
    return np.stack([point, *square_root_factor(point)])


def records(data):
    """The data as the kernel reads them: [n, 4], row-major 2x2."""
    return np.require(data, np.float64, ["C", "W"]).reshape((data.shape[0], 4))


# The kernel, in plain Python (compiled by ``compiled_kernel``). Matrices [2, 2] are nested
# tuples of floats; arrays hold them as [..., 2, 2].


def _read(array, index):
    """array[index] as nested tuples."""
    return ((array[index, 0, 0], array[index, 0, 1]), (array[index, 1, 0], array[index, 1, 1]))


def _write(array, index, matrix):
    """array[index] = matrix."""
    (array[index, 0, 0], array[index, 0, 1]), (array[index, 1, 0], array[index, 1, 1]) = matrix


def _add_scaled(matrix, other, scale):
    """matrix + scale * other."""
    return ((matrix[0][0] + scale * other[0][0], matrix[0][1] + scale * other[0][1]),
            (matrix[1][0] + scale * other[1][0], matrix[1][1] + scale * other[1][1]))


def _scaled(matrix, scale):
    """scale * matrix."""
    return ((scale * matrix[0][0], scale * matrix[0][1]),
            (scale * matrix[1][0], scale * matrix[1][1]))


def _clip_factor(norm, clip_norm):
    """``clipping.clip_factors`` of one finite norm: min(1, C / norm), exactly 1 if
    norm <= C."""
    return clip_norm / max(norm, clip_norm)


def _clipped_gradient(records, weights, indices, start, end, point, inverse, settings):
    """sum_i scale w_i clip_C(-Log_P(X_i)) over ``indices[start:end]``, as
    ``AffineLogSums`` on SPD(2): log W_i = alpha_i I + beta_i W_i, W_i = F^-1 X_i F^-T,
    -Log_P(X_i) = -(alpha_i P + beta_i X_i), norm sqrt(scale) |log eig(W_i)|."""
    batch_scale, clip_norm, norm_scale = settings[0], settings[1], settings[2]
    alpha_sum, data_sum = 0.0, ((0.0, 0.0), (0.0, 0.0))
    for position in range(start, end):
        index = indices[position]
        record = ((records[index, 0], records[index, 1]),
                  (records[index, 2], records[index, 3]))
        _, low, high, mean, gap = whitened_spectrum_2x2(record, inverse)
        log_low, log_high = math.log(low), math.log(high)
        norm = norm_scale * math.sqrt(log_low * log_low + log_high * log_high)
        if norm < math.inf:  # a record of non-finite norm adds nothing
            alpha, beta = function_coefficients(log_low, log_high, mean, gap)
            coefficient = batch_scale * weights[index] * _clip_factor(norm, clip_norm)
            alpha_sum += coefficient * alpha
            data_sum = _add_scaled(data_sum, record, coefficient * beta)
    return _add_scaled(_scaled(data_sum, -1.0), point, -alpha_sum)


def _capped(tangent_vec, inverse, bound, norm_scale):
    """``step_cap.cap_norm``: the norm at P is sqrt(scale tr(M M)), M = F^-1 V F^-T."""
    (whitened, _, _, _, _) = whitened_spectrum_2x2(tangent_vec, inverse)
    (m00, m01), (m10, m11) = whitened
    norm = norm_scale * math.sqrt(m00 * m00 + m01 * m10 + m10 * m01 + m11 * m11)
    return _scaled(tangent_vec, min(1.0, bound / max(norm, 1e-300)))


def _run_block(records, weights, indices, starts, ends, normals, etas, first, settings,
               iterate, tracked, trail):
    """Run ``len(etas)`` steps of ``minimize`` from ``iterate``, in place.

    Parameters
    ----------
    records : numpy.ndarray, shape=[n, 4]
        The data, row-major 2x2.
    weights : numpy.ndarray, shape=[n]
    indices, starts, ends : numpy.ndarray of int
        Step s reads the records ``indices[starts[s]:ends[s]]``.
    normals : numpy.ndarray, shape=[3 len(etas)] or [0] without noise
    etas : numpy.ndarray, shape=[k]
    first : int
        Index in the run of the block's first step.
    settings : tuple
        (n / b or 1, C, sqrt(scale), sigma / sqrt(scale) or 0, direction bound or inf,
        power of the running average or 0, index of the random output or -1).
    iterate, tracked : numpy.ndarray, shape=[3, 2, 2]
        The point with a factor F (F F^T = point) and F^-1; the output's running average
        with its factors (or, at [0], the random output).
    trail : numpy.ndarray, shape=[n_steps + 1, 2, 2] or [0, 2, 2]
        Where the point each step starts from is kept (``keep_iterates``).

    Returns
    -------
    done : int
        Steps run: ``len(etas)``, or the step whose point the noise sampler rejects.
    """
    noise_scale, bound, power, chosen = settings[3], settings[4], settings[5], settings[6]
    for step in range(etas.shape[0]):
        point, inverse = _read(iterate, 0), _read(iterate, 2)
        if trail.shape[0] > 0:
            _write(trail, first + step, point)
        if first + step == chosen:
            _write(tracked, 0, point)
        direction = _clipped_gradient(records, weights, indices, starts[step], ends[step],
                                      point, inverse, settings)
        if noise_scale > 0:
            if not math.isfinite(point[0][0] + point[0][1] + point[1][0] + point[1][1]):
                return step
            cholesky = cholesky_2x2(point)
            if cholesky is None:
                return step
            noise = draw_2x2(cholesky, normals[3 * step : 3 * step + 3])
            direction = _add_scaled(direction, noise, noise_scale)
        if bound < math.inf:
            direction = _capped(direction, inverse, bound, settings[2])
        _geodesic_step(iterate, _scaled(direction, -etas[step]), 0.0)  # Exp_P(-eta g)
        if power > 0:  # a_k = Exp_a(c Log_a(w_k)), c = min(1, power / k)
            coefficient = min(1.0, power / (first + step + 1))
            if coefficient == 1.0:
                tracked[:] = iterate
            else:
                _geodesic_step(tracked, _read(iterate, 0), coefficient)
    return etas.shape[0]


def _geodesic_step(chain, matrix, power):
    """``chain`` = (P, F, F^-1) [3, 2, 2] becomes the point F h(M) F^T with its factors,
    M = F^-1 matrix F^-T: h = exp(. / 2) for power 0 (Exp_P(matrix)), (.)^(power / 2)
    otherwise (Exp_P(power Log_P(matrix))): ``SPDAffineGeodesics.exp`` / ``interpolate``."""
    factor, inverse = _read(chain, 1), _read(chain, 2)
    whitened, low, high, mean, gap = whitened_spectrum_2x2(matrix, inverse)
    if power == 0.0:
        half_low, half_high = math.exp(low / 2), math.exp(high / 2)
    else:
        half_low, half_high = low ** (power / 2), high ** (power / 2)
    moved = factor_map_2x2(whitened, mean, gap, half_low, half_high, factor, inverse)
    for part in range(3):
        _write(chain, part, moved[part])


_HELPERS = (
    _read, _write, _add_scaled, _scaled, _clip_factor, _clipped_gradient, _capped,
    _geodesic_step,
    product_2x2, transpose_2x2, function_2x2, whitened_spectrum_2x2, factor_map_2x2,
    floor_spectrum_2x2, spectrum_2x2, function_coefficients, cholesky_2x2, draw_2x2,
)


def compile_kernel():
    """``_run_block`` compiled by numba (``njit(cache=True)``, IEEE division); the
    helpers it calls, here and in ``geodesics``, ``symmetric_2x2`` and
    ``distributions.spd``, stay plain Python functions for the loop and are registered
    with numba (``register_jitable``)."""
    import numba
    from numba.extending import register_jitable

    for helper in _HELPERS:
        register_jitable(error_model="numpy", fastmath=FASTMATH)(helper)
    return numba.njit(cache=True, error_model="numpy", fastmath=FASTMATH)(_run_block)
