"""The compiled block of DP-RGD / DP-RSGD steps of the squared distance on the sphere S^d
(geomstats' metric, extrinsic coordinates), for ``optim.compiled_blocks``.

Per step, in loops over the d + 1 coordinates: the clipped weighted sum of the
gradients -Log_x(z_i) = (theta / tan theta) x - (theta / sin theta) z_i,
theta = arccos <x, z_i> (``geodesics.sphere_log``), each projected onto the tangent
space at x and clipped in its Euclidean norm, as ``losses.PerSampleLoss.gradient_sums``
and ``clipping.clip_factors`` form them; the pole transport of d normals
(``distributions.sphere.PoleTransport.draw_one``); the optional projection of
``step_cap``; the exponential map with its one projection of the direction and
geomstats' Taylor coefficients where the step is tiny (``geodesics.SphereGeodesics``),
then ``onto_space.onto_sphere``; the running averages Exp_a(c Log_a(w)) of ``outputs``.
Numba caches the kernel on disk keyed on this file: the formulas are written here (the
loop's helpers are array code), so editing the loop's formulas means editing these (the
tests compare the two routes).
"""

import math

import numpy as np
from geomstats import algebra_utils

from geomstats_dp.optim.onto_space import SPHERE_TOLERANCE

FASTMATH = {"contract", "reassoc", "arcp", "nsz"}
ORDER = 4  # the Taylor order of ``geodesics.SphereGeodesics.step``
TAYLOR_THRESHOLD = algebra_utils.EPSILON
COS_TAYLOR = tuple(algebra_utils.cos_close_0["coefficients"][:ORDER])
SINC_TAYLOR = tuple(algebra_utils.sinc_close_0["coefficients"][:ORDER])


def state(point):
    """The kernel's point: [1, d + 1], a copy."""
    return np.array(point, dtype=np.float64).reshape((1, -1))


def records(data):
    """The data as the kernel reads them: [n, d + 1]."""
    return np.require(data, np.float64, ["C", "W"])


def _dot(left, right):
    """<left, right> of two vectors."""
    total = 0.0
    for entry in range(left.shape[0]):
        total += left[entry] * right[entry]
    return total


def _clipped_gradient(records, weights, indices, start, end, point, settings, total,
                      gradient):
    """total = sum_i (n / b) w_i clip_C(-Log_x(z_i)) over ``indices[start:end]``, each
    gradient projected at x (``gradient``: work space)."""
    batch_scale, clip_norm = settings[0], settings[1]
    total[:] = 0.0
    base_squared = _dot(point, point)
    for position in range(start, end):
        index = indices[position]
        record = records[index]
        angle = math.acos(min(1.0, max(-1.0, _dot(record, point))))
        towards, away = 1.0, 1.0  # theta / sin theta, theta / tan theta; 1, 1 at 0
        if angle > 0:
            towards, away = angle / math.sin(angle), angle / math.tan(angle)
        for entry in range(point.shape[0]):
            gradient[entry] = away * point[entry] - towards * record[entry]
        along = _dot(gradient, point) / base_squared
        for entry in range(point.shape[0]):
            gradient[entry] -= along * point[entry]
        norm = math.sqrt(_dot(gradient, gradient))
        if norm < math.inf:  # a record of non-finite norm adds nothing
            coefficient = batch_scale * weights[index] * (clip_norm / max(norm, clip_norm))
            for entry in range(point.shape[0]):
                total[entry] += coefficient * gradient[entry]


def _add_noise(direction, point, normals, scale):
    """direction += scale u, u the pole transport of ``normals`` [d] to x; False (nothing
    added) where the sampler rejects x (its first entry not finite)."""
    head = point[0]
    sign = 1.0 if head >= 0 else -1.0
    coefficient = _dot(normals, point[1:]) * (1.0 / (1.0 + sign * head))
    first = coefficient * -(head + sign)
    if not math.isfinite(first):
        return False
    direction[0] += first * scale
    for entry in range(1, point.shape[0]):
        direction[entry] += (normals[entry - 1] - coefficient * point[entry]) * scale
    return True


def _cap(direction, bound):
    """direction min(1, B / |direction|) (``step_cap.cap_norm``; 0 if not finite)."""
    norm = math.sqrt(_dot(direction, direction))
    factor = bound / max(norm, bound) if norm < math.inf else 0.0
    for entry in range(direction.shape[0]):
        direction[entry] *= factor


def _taylor(squared, coefficients):
    """sum_k c_k squared^k."""
    total, power = 0.0, 1.0
    for coefficient in coefficients:
        total += coefficient * power
        power *= squared
    return total


def _exp_step(point, direction, coefficient):
    """point = Exp_x(c V), V projected at x, in place (``SphereGeodesics.step``), then
    renormalised where it left the sphere by more than ``SPHERE_TOLERANCE``."""
    along = _dot(direction, point)
    projection = along / _dot(point, point)
    squared = coefficient * coefficient * max(_dot(direction, direction) - projection * along,
                                              0.0)
    if squared < TAYLOR_THRESHOLD:
        even, odd = _taylor(squared, COS_TAYLOR), _taylor(squared, SINC_TAYLOR)
    else:
        norm = math.sqrt(squared)
        even, odd = math.cos(norm), math.sin(norm) / norm
    odd *= coefficient
    kept = even - odd * projection
    for entry in range(point.shape[0]):
        point[entry] = point[entry] * kept + odd * direction[entry]
    norm = math.sqrt(_dot(point, point))
    if math.isfinite(norm) and norm > 0 and abs(norm - 1) > SPHERE_TOLERANCE:
        for entry in range(point.shape[0]):
            point[entry] /= norm


def _interpolate(average, point, fraction, work):
    """average = Exp_a(t Log_a(w)) in place (``Geodesics.interpolate``: geomstats' log,
    here ``geodesics.sphere_log``, then the exponential map)."""
    angle = math.acos(min(1.0, max(-1.0, _dot(point, average))))
    towards, away = 1.0, 1.0
    if angle > 0:
        towards, away = angle / math.sin(angle), angle / math.tan(angle)
    for entry in range(average.shape[0]):
        work[entry] = fraction * (towards * point[entry] - away * average[entry])
    _exp_step(average, work, 1.0)


def _run_block(records, weights, indices, starts, ends, normals, etas, first, settings,
               iterate, tracked, trail):
    """Run ``len(etas)`` steps of ``minimize`` from ``iterate``, in place.

    Parameters
    ----------
    records : numpy.ndarray, shape=[n, d + 1]
    weights : numpy.ndarray, shape=[n]
    indices, starts, ends : numpy.ndarray of int
        Step s reads the records ``indices[starts[s]:ends[s]]``.
    normals : numpy.ndarray, shape=[d len(etas)] or [0] without noise
    etas : numpy.ndarray, shape=[k]
    first : int
        Index in the run of the block's first step.
    settings : tuple
        (n / b or 1, C, 1, sigma or 0, direction bound or inf, power of the running
        average or 0, index of the random output or -1).
    iterate, tracked : numpy.ndarray, shape=[1, d + 1]
        The point; the output's running average (or the random output).
    trail : numpy.ndarray, shape=[n_steps + 1, d + 1] or [0, d + 1]
        Where the point each step starts from is kept (``keep_iterates``).

    Returns
    -------
    done : int
        Steps run: ``len(etas)``, or the step whose point the noise sampler rejects.
    """
    noise_scale, bound, power, chosen = settings[3], settings[4], settings[5], settings[6]
    point, size = iterate[0], iterate.shape[1]
    direction, work = np.empty(size), np.empty(size)
    for step in range(etas.shape[0]):
        if trail.shape[0] > 0:
            trail[first + step] = point
        if first + step == chosen:
            tracked[0] = point
        _clipped_gradient(records, weights, indices, starts[step], ends[step], point,
                          settings, direction, work)
        if noise_scale > 0 and not _add_noise(
                direction, point, normals[(size - 1) * step : (size - 1) * (step + 1)],
                noise_scale):
            return step
        if bound < math.inf:
            _cap(direction, bound)
        _exp_step(point, direction, -etas[step])
        if power > 0:  # a_k = Exp_a(c Log_a(w_k)), c = min(1, power / k)
            coefficient = min(1.0, power / (first + step + 1))
            if coefficient == 1.0:
                tracked[0] = point
            else:
                _interpolate(tracked[0], point, coefficient, work)
    return etas.shape[0]


_HELPERS = (_dot, _clipped_gradient, _add_noise, _cap, _taylor, _exp_step, _interpolate)


def compile_kernel():
    """``_run_block`` compiled by numba (``njit(cache=True)``, IEEE division), its
    helpers registered as jitable."""
    import numba
    from numba.extending import register_jitable

    for helper in _HELPERS:
        register_jitable(error_model="numpy", fastmath=FASTMATH)(helper)
    return numba.njit(cache=True, error_model="numpy", fastmath=FASTMATH)(_run_block)
