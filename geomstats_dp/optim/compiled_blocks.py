"""DP-RGD and DP-RSGD steps run a block at a time in compiled code (numba), for the
squared distance on SPD(n) with the affine-invariant metric (possibly scaled) and on the
sphere S^d with geomstats' metric.

A step of ``minimize`` is a few hundred (SPD(2)) to a few thousand (S^783, SPD(11))
floating-point operations per record and some tens of microseconds of Python and numpy
calls around them. Here the calls are paid once per block of steps: the block's batches
and noise normals are drawn in Python by the very code the loop uses
(``strategy.batch_stream`` and the noise stream of ``GradientOracle``: the same normals
in the same order as the space's ``TangentGaussian`` draw reads them, ``space.dim`` a
step), and a kernel compiled by numba runs the block's steps on them: the clipped
weighted sum of -Log_P(X_i), the tangent noise, the optional projection of
``step_cap``, the exponential map and the output's running average. One kernel per
space (``KINDS``): ``compiled_spd2`` (closed forms, no ``eigh``), ``compiled_spd``
(SPD(n), n >= 3: one ``eigh`` per record and per map, as ``affine_log`` and
``geodesics``) and ``compiled_sphere`` (closed-form log and exp). The law of the run,
its adjacency and sensitivity are those of the Python loop, and so are its random
draws: the kernel changes the cost of a run, never its release; with the same seed its
iterates equal the loop's up to rounding. (A ``SecureGenerator``, which serves batches
and noise from one unseeded stream, is read in another order, a block's batches then
its normals: independent draws of the same law.)

A kernel branches on data values only where the loop does: a record whose norm is not
finite adds nothing (``clipping.clip_factors``), and a step whose point the noise
sampler would reject (not finite, or no Cholesky factor) stops the block so that the
sampler raises its own error, as it does in the loop.

``compiled_block_runner`` decides from public quantities whether a run takes this route
(numpy backend, numba importable, ``ENABLED``, ``MIN_STEPS_TO_LOAD``, no stage observer:
the kernel adds its noise without ``privacy.stages``, so a run observed by the
conformance checks takes the loop, whose releases are the same); otherwise
``minimize`` runs its Python loop. The first use of a kernel compiles it, which numba
caches on disk for later processes (timings: docs/benchmarks/optimizers.md, "Speed of
the routes a user takes"); the cache is keyed on the kernel's module (see each).
"""

import importlib
import math
import os

import numpy as np
from geomstats.geometry.hypersphere import Hypersphere, HypersphereMetric
from geomstats.geometry.spd_matrices import SPDAffineMetric

from geomstats_dp._backend import to_backend
from geomstats_dp.distributions.registry import unwrap_metric
from geomstats_dp.distributions.spd import SPDAffineTransport
from geomstats_dp.distributions.sphere import HypersphereTransport
from geomstats_dp.distributions.tangent_gaussian import TangentGaussian
from geomstats_dp.optim import streams
from geomstats_dp.optim.full_batch import FullBatch
from geomstats_dp.optim.losses import SquaredDistanceLoss, backend_name
from geomstats_dp.optim.mini_batch import MiniBatch
from geomstats_dp.optim.outputs import make_tracker
from geomstats_dp.privacy.stages import observing

ENABLED = os.environ.get("GEOMSTATS_DP_COMPILED", "1") != "0"
"""Whether runs that qualify take the compiled route (environment variable
``GEOMSTATS_DP_COMPILED=0`` turns it off; tests and benchmarks set this flag)."""

MIN_STEPS_TO_LOAD = 8000
"""A run loads its kernel (importing numba and reading the compiled kernel from its
on-disk cache, or compiling it on a first use) only if it has at least this many steps;
once loaded, every run that qualifies takes the route. A compiled step saves the loop's
fixed cost of Python calls, so shorter runs would not pay the load back (timings:
docs/benchmarks/optimizers.md, "Speed of the routes a user takes")."""

KINDS = {"spd2": SPDAffineTransport, "spd": SPDAffineTransport,
         "sphere": HypersphereTransport}
"""The kernels (module ``optim.compiled_<kind>``) and the noise family each draws as."""

_KERNELS = {}  # kind -> the compiled kernel, once loaded


def numba_importable():
    """Whether numba can be imported (the ``speed`` extra)."""
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


def kernel_module(kind):
    """The module ``optim.compiled_<kind>``: a numba kernel's (``state``, ``records``,
    ``compile_kernel``), or "torch", the pytorch blocks (``torch_block_runner``)."""
    return importlib.import_module(f"geomstats_dp.optim.compiled_{kind}")


def compiled_kernel(kind="spd2"):
    """The kernel ``kind`` compiled by numba (``njit(cache=True)``), loaded on first use."""
    if kind not in _KERNELS:
        _KERNELS[kind] = kernel_module(kind).compile_kernel()
    return _KERNELS[kind]


def kernel_kind(space):
    """The kernel of the squared distance on ``space``, or None (public: the space, its
    metric class and shape)."""
    metric, _ = unwrap_metric(space.metric)
    shape = tuple(space.shape)
    if type(metric) is SPDAffineMetric:
        return "spd2" if shape == (2, 2) else "spd"
    if (type(space.metric) is HypersphereMetric and isinstance(space, Hypersphere)
            and shape == (int(space.dim) + 1,)):
        return "sphere"
    return None


def compiled_block_runner(loss, strategy, data, noise_sampler, n_steps, *, retraction=None,
                          callback=None, output="last"):
    """The compiled runner of a ``minimize`` call, or None where it does not apply.

    Public quantities only: the route is taken for ``type(loss) is SquaredDistanceLoss``
    (a subclass may override ``gradients``) on SPD(n) with the affine-invariant metric
    (``ScalarProductMetric`` scaling included) or on a hypersphere with geomstats'
    metric (``kernel_kind``), a ``FullBatch`` or ``MiniBatch`` strategy (``MiniBatch``
    only on SPD(n), n >= 3: a full-batch pass is one ``eigh`` per record on either
    route, numba's no faster than numpy's batched one, and the loop's passes start them
    warm, ``warm_logs``), numpy data in
    memory on the numpy backend, the default noise sampler (a ``TangentGaussian`` of the
    space's family with method "transport" and no validation, or none when there is no
    noise), no ``retraction`` and no ``callback``, with numba importable and
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
    output : str
        As given to ``minimize``.

    Returns
    -------
    runner : CompiledBlocks, compiled_torch.TorchBlocks or None
        On the pytorch backend the blocks compiled by ``torch.compile``
        (``compiled_torch.torch_block_runner`` decides).
    """
    if not ENABLED or retraction is not None or callback is not None or observing():
        return None
    if type(loss) is not SquaredDistanceLoss or type(strategy) not in (FullBatch, MiniBatch):
        return None
    kind = kernel_kind(loss.space)
    if kind is None or (kind == "spd" and type(strategy) is FullBatch):  # ``warm_logs``
        return None
    _, scale = unwrap_metric(loss.space.metric)
    if noise_sampler is not None and not _default_sampler(noise_sampler, loss.space, kind,
                                                          scale):
        return None
    if backend_name() == "pytorch":  # torch's blocks, imported with the backend only
        return kernel_module("torch").torch_block_runner(loss, strategy, data, noise_sampler,
                                                         n_steps, kind, scale, output)
    if backend_name() != "numpy" or not isinstance(data, np.ndarray):
        return None
    if kind not in _KERNELS and (n_steps < MIN_STEPS_TO_LOAD or not numba_importable()):
        return None
    return CompiledBlocks(strategy, scale, kind)


def _default_sampler(noise_sampler, space, kind, scale):
    """Whether ``noise_sampler`` draws as the kernel does: the transport sampler of the
    kernel's family on a space of the same shape, with the same scale, without
    membership checks."""
    return (type(noise_sampler) is TangentGaussian and noise_sampler.method == "transport"
            and not noise_sampler.validate and noise_sampler.scale == scale
            and type(noise_sampler.sampler) is KINDS[kind]
            and tuple(noise_sampler.space.shape) == tuple(space.shape))


class CompiledBlocks:
    """The steps of one ``minimize`` run, a block at a time through the compiled kernel.

    Parameters
    ----------
    strategy : FullBatch or MiniBatch
    scale : float
        The metric is ``scale`` times the space's own (1 on the sphere).
    kind : str
        The kernel (``KINDS``).
    """

    def __init__(self, strategy, scale, kind="spd2"):
        self.strategy = strategy
        self.scale = scale
        self.kind = kind

    def __call__(self, point, oracle, step_sizes, output, rng, keep_iterates=False,
                 direction_bound=None):
        """Run every step of the run; the loop's draws in the loop's order.

        Parameters
        ----------
        point : array-like, shape=[*space.shape]
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
        point : array-like, shape=[*space.shape]
            The output.
        iterates : array-like, shape=[n_steps + 1, *space.shape] or None
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
        module, point = kernel_module(self.kind), np.asarray(point)
        records = module.records(oracle.data)
        weights = np.require(oracle.weights, np.float64, ["C", "W"])
        iterate = module.state(point)  # the point, and what the kernel keeps with it
        tracked = iterate.copy()  # the running average (and its state), or w_k
        trail = np.empty((n_steps + 1 if keep_iterates else 0, *point.shape))
        batches = self._batches(oracle)
        kernel, dim = compiled_kernel(self.kind), int(oracle.loss.space.dim)
        for first in range(0, n_steps, batches.block):
            etas = step_sizes[first : first + batches.block]
            indices, starts, ends = batches.next(len(etas))
            normals = (oracle.noise_rng.standard_normal(dim * len(etas)) if sigma > 0
                       else np.empty(0))
            done = kernel(records, weights, indices, starts, ends, normals, etas, first,
                          settings, iterate, tracked, trail)
            oracle.n_gradient_evaluations += int((ends[:done] - starts[:done]).sum())
            oracle.n_noise_draws += done if sigma > 0 else 0
            if done < len(etas):  # the error the loop raises at that step
                batch = indices[starts[done] : ends[done]]
                getattr(module, "raise_failure", _no_failure)(iterate, oracle.data, batch)
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


def _no_failure(state, data, batch):
    """A kernel that stops only where the noise sampler rejects its point (SPD(2), the
    sphere)."""


def _raise_rejection(oracle, point, sigma):
    """Raise the noise sampler's own error for the point the kernel found it rejects."""
    oracle.draw_noise(to_backend(point), sigma)
    raise AssertionError("the noise sampler accepted a point the kernel rejected")
