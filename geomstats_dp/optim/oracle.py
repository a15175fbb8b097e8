"""What every strategy queries: clipped, weighted sums of per-sample gradients, and noise."""

import functools
import math

import geomstats.backend as gs
import numpy as np

from geomstats_dp._backend import to_numpy
from geomstats_dp._dask import DaskClippedSums, is_dask_array
from geomstats_dp._dask import gradient_norms as dask_gradient_norms
from geomstats_dp.optim.clipping import clip_factors
from geomstats_dp.optim.streams import shared_stream
from geomstats_dp.optim.streams import split_streams as split
from geomstats_dp.optim.warm_logs import record_bases_for
from geomstats_dp.privacy.stages import noisy_stage

# Per-sample gradients are computed CHUNK_BYTES of data at a time, at least MIN_CHUNK_ROWS
# rows: the gradient of a loss holds several arrays the size of its chunk (logarithms,
# eigendecompositions), so the memory of a full-batch step stays bounded whatever n. With
# 256 kB (512 SPD(8) points) a fresh process's DP-RGD fit on 2,000 SPD(8) points took
# 85 ms against 99 ms with 4 MB chunks (CPU, numpy; each pass's fresh multi-megabyte
# temporaries were page-faulted in again), the same on pytorch and at 10^5 points; the
# row floor keeps wide rows (S^783: 512 rows, 3 MB) from paying a call per few rows.
CHUNK_BYTES = 256 * 2**10
MIN_CHUNK_ROWS = 512
# ``norms_then_clipped_sum`` holds the chunks' gradients (for the squared distance on SPD:
# their eigendecompositions, about the data's size) between the norms and the sum when the
# data take at most this many bytes (500,000 SPD(8) points); beyond, it computes them twice.
HELD_BYTES = 256 * 2**20


class GradientOracle:
    """Per-sample gradients at a point, clipped in the Riemannian norm and combined.

    Parameters
    ----------
    loss : PerSampleLoss
    data : array-like, shape=[n, ...]
        Checked by ``loss.check_data``; a Dask array's chunks are summed by its workers
        (``geomstats_dp._dask``), only the sums reaching this process.
    weights : array-like, shape=[n]
        Backend array of sample weights summing to 1.
    noise_sampler : object
        ``noise_sampler.sample(base_point, n_samples=1, sigma=..., random_state=rng)``
        returns a tangent vector at ``base_point`` (e.g. ``TangentGaussian``). A sampler
        with ``prepare(sigma, random_state)`` (``TangentGaussian.prepare``) is prepared
        once per noise level and its draw called at each step instead.
    rng : numpy.random.Generator or SecureGenerator
        The run's only source of randomness.
    split_streams : bool
        Draw batches and noise from two streams split from ``rng``
        (``streams.split_streams``), so that each can be drawn a block of steps at a
        time; otherwise both come from ``rng`` itself, the noise's normals drawn ahead
        only as far as the strategy reserves them (``reserve_noise``).

    Attributes
    ----------
    batch_rng : numpy.random.Generator or SecureGenerator
        The stream of the batches and sampled indices.
    noise_rng : BufferedNormals
        The stream of the noise.
    n_gradient_evaluations : int
        Per-sample gradients computed so far.
    n_noise_draws : int
        Calls made to the noise sampler so far.
    max_weight : float
        max_i w_i (public: the weights are).
    weight_factor : float
        n max_i w_i: exactly 1.0 for equal weights (``strategies.weight_factor``).

    Notes
    -----
    The full-batch queries of numpy data of ``warm_logs.MIN_ROWS_TO_LOAD`` records or more
    start each record's eigendecomposition (SPD, affine-invariant metric) from the one at
    the previous point (``warm_logs.RecordBases``): the same sums to rounding, cheaper.
    """

    def __init__(self, loss, data, weights, noise_sampler, rng, split_streams=False):
        self.loss = loss
        self.metric = loss.space.metric
        self.data = data
        self.weights = weights
        self.n_samples = int(data.shape[0])
        numpy_weights = self._weights = to_numpy(weights)
        self.max_weight = float(numpy_weights.max())
        self.weight_factor = (1.0 if numpy_weights.min() == self.max_weight
                              else self.n_samples * self.max_weight)
        self.noise_sampler = noise_sampler
        self.batch_rng, self.noise_rng = (
            split(rng) if split_streams else (rng, shared_stream(rng)))
        self.n_gradient_evaluations = 0
        self.n_noise_draws = 0
        self._noise_draws = {}  # sigma -> draw(base_point)
        self._dask_sums = (DaskClippedSums(loss, data, weights, clipped_sum_in_chunks)
                           if is_dask_array(data) else None)
        self._record_bases = record_bases_for(loss, data)

    def clipped_sum(self, point, clip_norm, indices=None, scale=1.0):
        """sum_i scale * w_i * clip_C(grad f(point; z_i)) over ``indices`` (all if None).

        Parameters
        ----------
        point : array-like, shape=[*space.shape]
        clip_norm : float
        indices : numpy.ndarray of int, shape=[k], optional
        scale : float

        Returns
        -------
        tangent_vec : array-like, shape=[*space.shape]
        """
        if self._dask_sums is not None:
            self.n_gradient_evaluations += (
                self.n_samples if indices is None else len(indices))
            return self._dask_sums(point, clip_norm, indices, scale)
        if indices is None:
            self.n_gradient_evaluations += self.n_samples
            return clipped_sum_in_chunks(self._all_rows_sums(point), self.data, self.weights,
                                         clip_norm, scale)
        self.n_gradient_evaluations += len(indices)
        sums = self.loss.gradient_sums(point)  # the point's own work, once per query
        if len(indices) == 1 and hasattr(sums, "clipped_one"):  # closed form, in scalars
            index = int(indices[0])
            return sums.clipped_one(self.data[index], scale * float(self._weights[index]),
                                    clip_norm)
        if len(indices) <= MIN_CHUNK_ROWS and not hasattr(sums, "rows"):  # one chunk
            rows = _row_slice(indices)
            norms, weighted_sum = sums(gather_rows(self.data, rows))
            return weighted_sum(scale * self.weights[rows] * clip_factors(norms, clip_norm))
        return clipped_sum_in_chunks(sums, gather_rows(self.data, indices),
                                     self.weights[indices], clip_norm, scale)

    def norms_then_clipped_sum(self, point, choose_clip):
        """The norms of every record's gradient at ``point``, then the clipped sum at a
        radius chosen from them, the gradients computed once.

        The chunks' gradients are held between the two (up to ``HELD_BYTES`` of data; on
        larger data and on a Dask array the norms and the sum are two passes).

        Parameters
        ----------
        point : array-like, shape=[*space.shape]
        choose_clip : callable
            ``choose_clip(norms) -> C``, norms a numpy array of shape [n] (not finite
            for a record whose gradient is not).

        Returns
        -------
        clip_norm : float
            C.
        tangent_vec : array-like, shape=[*space.shape]
            sum_i w_i clip_C(grad f(point; z_i)), as ``clipped_sum(point, C)``.
        """
        if self._dask_sums is not None:
            clip_norm = choose_clip(gradient_norms(self.loss, self.data, point))
            return clip_norm, self.clipped_sum(point, clip_norm)
        sums = self._all_rows_sums(point)
        held = data_bytes(self.data) <= HELD_BYTES
        parts = list(chunk_parts(sums, self.data)) if held else chunk_parts(sums, self.data)
        clip_norm = choose_clip(to_numpy(gs.concatenate([norms for _, norms, _ in parts])))
        if not held:  # the chunks' gradients again, for the sum
            parts = chunk_parts(sums, self.data)
        self.n_gradient_evaluations += self.n_samples
        return clip_norm, clipped_sum_of_parts(parts, self.weights, clip_norm)

    def _all_rows_sums(self, point):
        """``loss.gradient_sums(point)`` for chunks of the whole data, with the run's
        eigenbases where they apply (``warm_logs``)."""
        sums = self.loss.gradient_sums(point)  # the point's own work, once per query
        return sums if self._record_bases is None else self._record_bases.bind(sums)

    def draw_noise(self, point, sigma):
        """One draw xi ~ N_point(0, sigma^2) of the noise sampler (sigma > 0)."""
        self.n_noise_draws += 1
        draw = self._noise_draws.get(sigma)
        if draw is None:
            draw = self._noise_draws[sigma] = prepared_draw(
                self.noise_sampler, sigma, self.noise_rng)
        return draw(point)

    def reserve_noise(self, n_draws):
        """Promise that the next ``n_draws`` noise draws come before any other draw of
        the run's generator, so that their normals may be drawn (and, on pytorch,
        converted) at once: the same values, the generator left where the draws one at
        a time leave it. Nothing changes where the sampler's draws are not known to read
        normals only (``TangentGaussian.normals_per_draw``)."""
        per_draw = getattr(self.noise_sampler, "normals_per_draw", None)
        if per_draw is not None:
            self.noise_rng.reserve(n_draws * per_draw)

    def add_noise(self, tangent_vec, point, sigma, *, label, sensitivity, sampling_rate=1.0,
                  adjacency="replace_one"):
        """tangent_vec + xi with xi ~ N_point(0, sigma^2): one Gaussian stage
        (``privacy.stages.noisy_stage``) whose statistic is ``tangent_vec``, of the stated
        ``sensitivity`` in the Riemannian norm at ``point``, its noise in the manifold's
        dimension; no draw and no stage when sigma == 0 (nothing private is released).
        """
        if sigma == 0:
            return tangent_vec
        return noisy_stage(
            tangent_vec, self.draw_noise(point, sigma), label=label, law="gaussian",
            scale=sigma, sensitivity=sensitivity, dim=int(self.loss.space.dim),
            norm=functools.partial(tangent_norm, self.metric, point), adjacency=adjacency,
            sampling_rate=sampling_rate)


def _row_slice(indices):
    """A slice for a single index (a view, cheap on every backend), else the indices."""
    if len(indices) == 1:
        index = int(indices[0])
        return slice(index, index + 1)
    return indices


def gather_rows(data, rows):
    """``data[rows]``: for a numpy array and an index array, ``ndarray.take`` (the same
    rows at less cost than fancy indexing, part of the fixed cost of a DP-RSGD step)."""
    if isinstance(data, np.ndarray) and not isinstance(rows, slice):
        return data.take(rows, axis=0)
    return data[rows]


def tangent_norm(metric, point, tangent_vec):
    """The Riemannian norm of ``tangent_vec`` at ``point``, a float."""
    return float(to_numpy(metric.norm(tangent_vec, point)))


def prepared_draw(noise_sampler, sigma, rng):
    """``draw(base_point)``: one draw of ``noise_sampler`` at noise level ``sigma`` from
    ``rng`` per call (``prepare`` where the sampler has it, else ``sample``)."""
    if hasattr(noise_sampler, "prepare"):
        return noise_sampler.prepare(sigma, random_state=rng)
    return functools.partial(noise_sampler.sample, n_samples=1, sigma=sigma, random_state=rng)


def data_bytes(data):
    """Bytes of ``data`` [n, ...] as float64."""
    return 8 * math.prod(data.shape)


def chunk_parts(sums, data):
    """(start, norms, weighted_sum) of each chunk of ``CHUNK_BYTES`` of rows, lazily.

    Parameters
    ----------
    sums : callable
        ``loss.gradient_sums(point)``, called on each chunk; or an object whose
        ``rows(start, chunk)`` is called instead (``warm_logs.WarmLogSums``, bound to
        the rows of ``data``), on chunks of its ``chunk_rows`` rows where it is set.
    data : array-like, shape=[n, ...]

    Yields
    ------
    start : int
        The chunk's first row.
    norms : array-like, shape=[k]
    weighted_sum : callable
        ``weighted_sum(coefficients [k])``, as ``sums`` returns it.
    """
    chunk = (getattr(sums, "chunk_rows", None)
             or max(MIN_CHUNK_ROWS, CHUNK_BYTES // (8 * math.prod(data.shape[1:]))))
    rows = getattr(sums, "rows", None) or (lambda start, part: sums(part))
    for start in range(0, int(data.shape[0]), chunk):
        yield (start, *rows(start, data[start : start + chunk]))


def gradient_norms(loss, data, point):
    """Norms of the per-sample tangent gradients at ``point`` in the metric, numpy [n]:
    the loss's ``gradient_sums`` ``CHUNK_BYTES`` of rows at a time, or by the workers of
    a Dask array."""
    if is_dask_array(data):
        return dask_gradient_norms(loss, data, point)
    parts = chunk_parts(loss.gradient_sums(point), data)
    return to_numpy(gs.concatenate([norms for _, norms, _ in parts]))


def clipped_sum_of_parts(parts, weights, clip_norm, scale=1.0):
    """sum_i scale w_i clip_C(grad f(point; z_i)) from ``chunk_parts``.

    Parameters
    ----------
    parts : iterable of (start, norms, weighted_sum)
    weights : array-like, shape=[n], or float
        One number: the same weight for every row.
    clip_norm : float
    scale : float

    Returns
    -------
    tangent_vec : array-like, shape=[*space.shape]
    """
    total = None
    for start, norms, weighted_sum in parts:
        part_weights = (weights if isinstance(weights, float)
                        else weights[start : start + norms.shape[0]])
        part = weighted_sum(scale * part_weights * clip_factors(norms, clip_norm))
        total = part if total is None else total + part
    return total


def clipped_sum_in_chunks(sums, data, weights, clip_norm, scale=1.0):
    """sum_i scale w_i clip_C(grad f(point; z_i)), ``CHUNK_BYTES`` of rows at a time:
    ``clipped_sum_of_parts`` of ``chunk_parts(sums, data)``, one chunk's gradients held
    at a time; shape=[*space.shape]."""
    return clipped_sum_of_parts(chunk_parts(sums, data), weights, clip_norm, scale)
