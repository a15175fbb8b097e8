"""DP-RGD and DP-RSGD steps run a block at a time in compiled code (numba), for one pair:
the squared distance on SPD(2) with the affine-invariant metric (possibly scaled).

A step of ``minimize`` on 2x2 matrices is a few hundred floating-point operations per
record and some tens of microseconds of Python and numpy calls around them. Here the
calls are paid once per block of steps: the block's batches and noise normals are drawn
in Python by the very code the loop uses (``strategy.batch_stream`` and the noise stream
of ``GradientOracle``, the same normals in the same order as ``TangentGaussian.sample``
on SPD(2) reads them), and a kernel compiled by numba runs the block's steps on them:
the clipped weighted sum of -Log_P(X_i) (the closed form of ``affine_log``), the noise
L U L^T (``distributions.spd``), the optional projection of ``step_cap``, the
exponential map and the output's running average (the closed forms of ``geodesics``,
whose helpers it compiles, with the floor of ``onto_space`` that keeps a point on SPD).
The law of the run, its adjacency and sensitivity are those of the Python loop, and so are its random draws: the kernel changes the cost of a run,
never its release; with the same seed its iterates equal the loop's up to rounding. (A
``SecureGenerator``, which serves batches and noise from one unseeded stream, is read in
another order, a block's batches then its normals: independent draws of the same law.)

The kernel branches on data values only where the loop does: a record whose norm is not
finite adds nothing (``clipping.clip_factors``), and a step whose point the noise
sampler would reject (not finite, or no Cholesky factor) stops the block so that the
sampler raises its own error, as it does in the loop.

``compiled_block_runner`` decides from public quantities whether a run takes this route
(numpy backend, numba importable, ``ENABLED``, ``MIN_STEPS_TO_LOAD``, no stage observer:
the kernel adds its noise without ``privacy.stages``, so a run observed by the
conformance checks takes the loop, whose releases are the same); otherwise
``minimize`` runs its Python loop. The first use compiles the kernel, which numba caches
on disk for later processes (timings: docs/benchmarks/optimizers.md, "Speed of the routes
a user takes"). Its cache is keyed on this file alone: after
editing a helper it compiles (``geodesics``, ``onto_space``, ``symmetric_2x2``,
``distributions.spd``), touch this file so that the kernel is compiled again (the tests
compare the two routes).
"""

import math
import os

import numpy as np
from geomstats.geometry.spd_matrices import SPDAffineMetric

from geomstats_dp._backend import to_backend
from geomstats_dp.distributions.registry import unwrap_metric
from geomstats_dp.distributions.spd import SPDAffineTransport, cholesky_2x2, draw_2x2
from geomstats_dp.distributions.tangent_gaussian import TangentGaussian
from geomstats_dp.optim import streams
from geomstats_dp.optim.affine_log import square_root_factor
from geomstats_dp.optim.full_batch import FullBatch
from geomstats_dp.optim.geodesics import (
    factor_map_2x2,
    function_2x2,
    product_2x2,
    transpose_2x2,
    whitened_spectrum_2x2,
)
from geomstats_dp.optim.losses import SquaredDistanceLoss, backend_name
from geomstats_dp.optim.mini_batch import MiniBatch
from geomstats_dp.optim.onto_space import floor_spectrum_2x2
from geomstats_dp.optim.outputs import make_tracker
from geomstats_dp.optim.symmetric_2x2 import function_coefficients, spectrum_2x2
from geomstats_dp.privacy.stages import observing

ENABLED = os.environ.get("GEOMSTATS_DP_COMPILED", "1") != "0"
"""Whether runs that qualify take the compiled route (environment variable
``GEOMSTATS_DP_COMPILED=0`` turns it off; tests and benchmarks set this flag)."""

MIN_STEPS_TO_LOAD = 8000
"""A run loads the kernel (importing numba and reading the compiled kernel from its
on-disk cache, or compiling it on a first use) only if it has at least this many steps;
once loaded, every run that qualifies takes the route. A compiled step saves the loop's
fixed cost of Python calls, so shorter runs would not pay the load back (timings:
docs/benchmarks/optimizers.md, "Speed of the routes a user takes")."""


def numba_importable():
    """Whether numba can be imported (the ``speed`` extra)."""
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


def compiled_block_runner(loss, strategy, data, noise_sampler, n_steps, *, retraction=None,
                          callback=None):
    """The compiled runner of a ``minimize`` call, or None where it does not apply.

    Public quantities only: the route is taken for ``type(loss) is SquaredDistanceLoss``
    (a subclass may override ``gradients``) on 2x2 matrices with the affine-invariant
    metric (``ScalarProductMetric`` scaling included), a ``FullBatch`` or ``MiniBatch``
    strategy, numpy data in memory on the numpy backend, the default noise sampler (a
    ``TangentGaussian`` with method "transport" and no validation, or none when there is
    no noise), no ``retraction`` and no ``callback``, with numba importable and
    ``ENABLED``, if the kernel is loaded or the run has ``MIN_STEPS_TO_LOAD`` steps, and
    no stage observer is active (``privacy.stages.observing``).

    Parameters
    ----------
    loss : PerSampleLoss
    strategy : Strategy
    data : array-like, shape=[n, ...]
        As checked by ``loss.check_data``.
    noise_sampler : object or None
        The sampler the loop would use.
    n_steps : int
        Steps of the run.
    retraction, callback : callable, optional
        As given to ``minimize``.

    Returns
    -------
    runner : CompiledBlocks or None
    """
    if not ENABLED or retraction is not None or callback is not None or observing():
        return None
    if type(loss) is not SquaredDistanceLoss or type(strategy) not in (FullBatch, MiniBatch):
        return None
    metric, scale = unwrap_metric(loss.space.metric)
    if type(metric) is not SPDAffineMetric or tuple(loss.space.shape) != (2, 2):
        return None
    if backend_name() != "numpy" or not isinstance(data, np.ndarray):
        return None
    if noise_sampler is not None and not _default_sampler(noise_sampler, scale):
        return None
    if not _KERNEL and (n_steps < MIN_STEPS_TO_LOAD or not numba_importable()):
        return None
    return CompiledBlocks(strategy, scale)


def _default_sampler(noise_sampler, scale):
    """Whether ``noise_sampler`` draws as the kernel does: the transport sampler of SPD(2)
    with the same scale, without membership checks."""
    return (type(noise_sampler) is TangentGaussian and noise_sampler.method == "transport"
            and not noise_sampler.validate and noise_sampler.scale == scale
            and type(noise_sampler.sampler) is SPDAffineTransport
            and tuple(noise_sampler.space.shape) == (2, 2))


class CompiledBlocks:
    """The steps of one ``minimize`` run, a block at a time through the compiled kernel.

    Parameters
    ----------
    strategy : FullBatch or MiniBatch
    scale : float
        The metric is ``scale`` times the affine-invariant one.
    """

    def __init__(self, strategy, scale):
        self.strategy = strategy
        self.scale = scale

    def __call__(self, point, oracle, step_sizes, output, rng, keep_iterates=False,
                 direction_bound=None):
        """Run every step of the run; the loop's draws in the loop's order.

        Parameters
        ----------
        point : array-like, shape=[2, 2]
            The checked starting point.
        oracle : GradientOracle
            Its streams are read and its counters advanced as the loop does.
        step_sizes : numpy.ndarray, shape=[n_steps]
        output : str
        rng : numpy.random.Generator or SecureGenerator
            The run's generator ("random" draws its index from it, as the loop does).
        keep_iterates : bool
        direction_bound : float, optional

        Returns
        -------
        point : array-like, shape=[2, 2]
            The output.
        iterates : array-like, shape=[n_steps + 1, 2, 2] or None
        """
        strategy, n_samples = self.strategy, oracle.n_samples
        n_steps, sigma = len(step_sizes), strategy.noise_std
        tracker = make_tracker(output, None, n_steps, rng)  # "random" draws here
        settings = (  # one type signature for every run: one compiled kernel
            n_samples / strategy.batch_size if type(strategy) is MiniBatch else 1.0,
            float(strategy.clip_norm), math.sqrt(self.scale), sigma / math.sqrt(self.scale),
            math.inf if direction_bound is None else float(direction_bound),
            float(getattr(tracker, "power", 0)), int(getattr(tracker, "index", -1)),
        )
        records = np.require(oracle.data, np.float64, ["C", "W"]).reshape((n_samples, 4))
        weights = np.require(oracle.weights, np.float64, ["C", "W"])
        iterate = np.stack([np.asarray(point), *square_root_factor(np.asarray(point))])
        tracked = iterate.copy()  # the running average with its factors, or w_k
        trail = np.empty((n_steps + 1 if keep_iterates else 0, 2, 2))
        batches = self._batches(oracle)
        kernel = compiled_kernel()
        for first in range(0, n_steps, batches.block):
            etas = step_sizes[first : first + batches.block]
            indices, starts, ends = batches.next(len(etas))
            normals = (oracle.noise_rng.standard_normal(3 * len(etas)) if sigma > 0
                       else np.empty(0))
            done = kernel(records, weights, indices, starts, ends, normals, etas, first,
                          settings, iterate, tracked, trail)
            oracle.n_gradient_evaluations += int((ends[:done] - starts[:done]).sum())
            oracle.n_noise_draws += done if sigma > 0 else 0
            if done < len(etas):
                _raise_rejection(oracle, iterate[0], sigma)
        found = iterate if output == "last" else tracked
        iterates = None
        if keep_iterates:
            trail[n_steps] = iterate[0]
            iterates = to_backend(trail)
        return to_backend(found[0]), iterates

    def _batches(self, oracle):
        """The batches of the run's blocks: the loop's ``batch_stream`` for MiniBatch."""
        if type(self.strategy) is MiniBatch:
            return _DrawnBatches(self.strategy, oracle)
        return _FullBatches(oracle.n_samples)


class _FullBatches:
    """Every record at every step: blocks of ``MAX_BLOCK_STEPS`` steps."""

    def __init__(self, n_samples):
        self.block = streams.MAX_BLOCK_STEPS
        self.indices = np.arange(n_samples)
        self.starts = np.zeros(self.block, dtype=np.int64)
        self.ends = np.full(self.block, n_samples, dtype=np.int64)

    def next(self, n_steps):
        """(indices, starts, ends): step s reads ``indices[starts[s]:ends[s]]``."""
        return self.indices, self.starts[:n_steps], self.ends[:n_steps]


class _DrawnBatches:
    """The batches of ``MiniBatch.stepper``, from its ``batch_stream``: the same batches
    whatever the number of steps drawn at once (``streams``), ``MAX_BLOCK_STEPS`` of them
    at a time (Poisson: ``block_steps(n)``, which bounds the uniforms drawn at once)."""

    def __init__(self, strategy, oracle):
        poisson = strategy.sampling == "poisson"
        self.block = (streams.block_steps(oracle.n_samples) if poisson
                      else streams.MAX_BLOCK_STEPS)
        self.draw = strategy.batch_stream(oracle.batch_rng, oracle.n_samples)

    def next(self, n_steps):
        """(indices, starts, ends) of the next ``n_steps`` batches, flat (Poisson batches
        vary in size)."""
        batches = self.draw(n_steps)
        sizes = np.array([len(batch) for batch in batches], dtype=np.int64)
        ends = np.cumsum(sizes)
        indices = np.concatenate(batches).astype(np.int64, copy=False)
        return indices, ends - sizes, ends


def _raise_rejection(oracle, point, sigma):
    """Raise the noise sampler's own error for the point the kernel found it rejects."""
    oracle.draw_noise(to_backend(point), sigma)
    raise AssertionError("the noise sampler accepted a point the kernel rejected")


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
_KERNEL = []
FASTMATH = {"contract", "reassoc", "arcp", "nsz"}


def compiled_kernel():
    """``_run_block`` compiled by numba (``njit(cache=True)``, IEEE division); the
    helpers it calls, here and in ``geodesics``, ``symmetric_2x2`` and
    ``distributions.spd``, stay plain Python functions for the loop and are registered
    with numba (``register_jitable``) on first use."""
    if not _KERNEL:
        import numba
        from numba.extending import register_jitable

        for helper in _HELPERS:
            register_jitable(error_model="numpy", fastmath=FASTMATH)(helper)
        _KERNEL.append(numba.njit(cache=True, error_model="numpy", fastmath=FASTMATH)(_run_block))
    return _KERNEL[0]
