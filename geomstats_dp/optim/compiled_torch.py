"""DP-RSGD steps on the pytorch backend run a block at a time through ``torch.compile``,
for the squared distance on the sphere S^d and on SPD(n), n >= 3 (affine-invariant
metric, possibly scaled): the pytorch counterpart of the numba blocks of
``optim.compiled_blocks``.

On pytorch a step of ``minimize`` is some thirty to fifty tensor calls of a few
microseconds of dispatch each. Here a block of ``BLOCK_STEPS`` steps (the step math of
``optim.torch_steps``, unrolled) is one function compiled by ``torch.compile``
(``fullgraph=True``, fixed shapes): its tensor calls are fused into one compiled
program, called once per block. The block's batches and noise normals are drawn by the
very code the loop uses (``compiled_blocks._DrawnBatches``, the stream of
``GradientOracle``: the same normals in the same order, on pytorch one conversion per
refill), its batch's rows gathered by one index outside the compiled function: the law
of the run, its adjacency and sensitivity are the loop's, and so are its draws; with the
same seed its release equals the loop's to rounding. Every tensor stays on the data's
device (CPU or CUDA): nothing crosses to numpy but the batch indices, drawn in numpy as
in the loop.

Where the loop branches on a value in a way a compiled block cannot (``torch_steps``: a
point the noise sampler rejects; on SPD(n) the flooring of the spectrum), the block
stops before that step (a block sure to stop at its first step, as at the start of an
SPD(n) run, is not called) and the driver runs it eagerly, the step math called without
compilation and the floor as the loop applies it; at a point the sampler rejects the
driver runs the loop's own code for the step, which raises the loop's error.

The route (``torch_block_runner``, called by ``compiled_blocks.compiled_block_runner``)
is decided from public quantities: the pytorch backend, float64 tensor data, a
``MiniBatch`` of fixed size (Poisson batches vary: the loop), ``compiled_blocks.ENABLED``
(``GEOMSTATS_DP_COMPILED=0`` turns both routes off), no stage observer, the block already
compiled in the process or a run of at least ``MIN_STEPS_TO_COMPILE`` steps. The block is
compiled before anything of the run is drawn; if ``torch.compile`` fails (no C++
compiler, an unsupported platform) a ``RuntimeWarning`` says so once and every run takes
the loop, with the same release. Timings of the first compilation: docs/benchmarks/
optimizers.md ("Compiled torch blocks").
"""

import logging
import math
import types
import warnings

import numpy as np
import torch

from geomstats_dp.distributions.tangent_gaussian import TangentGaussian
from geomstats_dp.optim.affine_log import known_factors
from geomstats_dp.optim.compiled_blocks import _DrawnBatches, kernel_kind
from geomstats_dp.optim.geodesics import geodesics_for
from geomstats_dp.optim.initial_point import canonical_point
from geomstats_dp.optim.mini_batch import MiniBatch
from geomstats_dp.optim.outputs import make_tracker
from geomstats_dp.optim.torch_steps import SPDSteps, SphereSteps

BLOCK_STEPS = 32
"""Steps unrolled in one compiled block."""

MIN_STEPS_TO_COMPILE = 10**6
"""A run compiles its block (or loads it from inductor's on-disk cache) only if it has at
least this many steps; once compiled, every run of the same shapes that qualifies takes
the route. A compiled step saves some tens of microseconds of dispatch; the first
compilation costs tens of seconds (timings: docs/benchmarks/optimizers.md)."""

COMPILE_OPTIONS = {"cpp_wrapper": True, "cpp.enable_loop_tail_vec": False}
"""Inductor's options: the compiled block's wrapper (which allocates its many small
buffers and calls its kernels) in C++, where Python's would cost more than the steps;
loops shorter than a vector (SPD(n)'s rows of n < 16 doubles) in scalar code, where
masked vector loads and stores would cost more than the arithmetic."""

STEPS = {"sphere": SphereSteps, "spd": SPDSteps}
"""The step math of each kernel kind (``compiled_blocks.kernel_kind``) taken here."""

_BLOCKS = {}  # (kind, shape, b, device, average, K) -> (steps, compiled block)
_FAILURE = []  # the message of torch.compile's failure, once seen


def torch_block_runner(loss, strategy, data, noise_sampler, n_steps, kind, scale, output):
    """The runner of a ``minimize`` call on pytorch, or None where the loop runs.

    Called by ``compiled_blocks.compiled_block_runner`` once it has checked what both
    routes share (the loss, the space's kind, the default sampler, no retraction,
    callback or stage observer, ``ENABLED``); public quantities only.

    Parameters
    ----------
    loss : SquaredDistanceLoss
    strategy : Strategy
    data : torch.Tensor, shape=[n, ...]
    noise_sampler : TangentGaussian or None
    n_steps : int
    kind : str
        ``compiled_blocks.kernel_kind`` of the space.
    scale : float
        The metric is ``scale`` times the space's own.
    output : str

    Returns
    -------
    runner : TorchBlocks or None
    """
    if kind not in STEPS or type(strategy) is not MiniBatch or _FAILURE:
        return None
    if strategy.sampling != "without_replacement" or not isinstance(data, torch.Tensor):
        return None
    if data.dtype != torch.float64 or strategy.batch_size > data.shape[0]:
        return None
    key = _block_key(kind, data, strategy.batch_size, output)
    if key not in _BLOCKS and (n_steps < MIN_STEPS_TO_COMPILE
                               or not _compiles(key, loss.space, data)):
        return None
    return TorchBlocks(strategy, scale, key)


def compile_block(space, data, batch_size, output="last"):
    """Compile up front the block that DP-RSGD runs on ``space`` with batches of
    ``batch_size`` records of ``data`` (their shape and device) and ``output`` take,
    as a run of ``MIN_STEPS_TO_COMPILE`` steps would: shorter runs then take the route
    too.

    Parameters
    ----------
    space : Manifold
        The sphere or SPD(n), n >= 3 (``compiled_blocks.kernel_kind``).
    data : torch.Tensor, shape=[n, *space.shape]
        float64, on the device the runs will use.
    batch_size : int
    output : str
        As given to ``minimize`` (the running averages have their own block).

    Returns
    -------
    compiled : bool
        False where the space has no block or ``torch.compile`` fails (warned once).
    """
    kind = kernel_kind(space)
    if kind not in STEPS or _FAILURE:
        return False
    key = _block_key(kind, data, batch_size, output)
    return key in _BLOCKS or _compiles(key, space, data)


def _block_key(kind, data, batch_size, output):
    """The compiled block's key: (kind, record shape, b, device, average, steps)."""
    return (kind, tuple(data.shape[1:]), batch_size, str(data.device),
            output in ("average", "weighted_average"), BLOCK_STEPS)


def _compiles(key, space, data):
    """Compile the block of ``key`` on inputs of the run's shapes (nothing drawn yet);
    False, with a warning the first time, where ``torch.compile`` fails."""
    kind, _, batch_size, _, average, _ = key
    gather = TangentGaussian(space, validate=False).sampler._gather if kind == "spd" else None
    steps = STEPS[kind](space, gather, data.device)
    point = canonical_point(space).to(device=data.device, dtype=data.dtype)
    inputs = _Inputs.placeholder(point, batch_size, int(space.dim))
    settings = torch.tensor([1.0, 1.0, 0.0, math.inf], dtype=data.dtype, device=data.device)
    state = _contiguous(steps.state(point))
    inductor_log = logging.getLogger("torch._inductor.ir")  # LAPACK calls: no C shim
    level = inductor_log.level
    inductor_log.setLevel(logging.ERROR)
    try:  # the running average a copy: aliased inputs would be compiled apart
        compiled = torch.compile(_block_function(steps, average), fullgraph=True,
                                 dynamic=False, options=COMPILE_OPTIONS)
        compiled(state, tuple(part.clone() for part in state), *inputs.tensors,
                 inputs.masks(data.device)[0], settings)
    except Exception as error:  # noqa: BLE001 - any failure of the compiler
        _FAILURE.append(f"{type(error).__name__}: {error}")
        warnings.warn(
            f"torch.compile failed ({_FAILURE[0][:200]}); DP-RSGD runs on pytorch take "
            "the Python loop (the same release)", RuntimeWarning, stacklevel=4)
        return False
    finally:
        inductor_log.setLevel(level)
    _BLOCKS[key] = steps, compiled
    return True


def _block_function(steps, average):
    """The block: ``BLOCK_STEPS`` steps from ``state`` (and the running average
    ``tracked`` when ``average``), each frozen once a step stops or is inactive;
    returns (state, tracked, the points the steps start from [K, ...], steps done)."""

    def block(state, tracked, rows, prefactors, normals, etas, fractions, active,
              settings):
        going = active[0]
        done = torch.zeros((), dtype=torch.int64, device=etas.device)
        starts = []
        for step in range(etas.shape[0]):
            starts.append(steps.point(state))
            moved, ok, stop = steps.step(state, rows[step], prefactors[step], normals[step],
                                         etas[step], settings)
            going = going & active[step] & ok & ~stop
            if average:
                fraction = fractions[step]
                folded, _, stopped = steps.interpolate(tracked, moved, fraction)
                going = going & ~(stopped & (fraction < 1))
                folded = tuple(torch.where(fraction < 1, new, old)
                               for new, old in zip(folded, moved))
                tracked = _freeze(going, folded, tracked)
            state = _freeze(going, moved, state)
            done = done + going.to(torch.int64)
        return state, tracked, torch.stack(starts), done

    # its own code object: dynamo keeps a function's compiled graphs, and counts its
    # recompilations up to a limit, per code object, and each block is compiled once
    return types.FunctionType(block.__code__.replace(), block.__globals__, block.__name__,
                              block.__defaults__, block.__closure__)


def _contiguous(state):
    """The state's tensors laid out as the block returns them (a block is compiled for
    one layout)."""
    return tuple(part.contiguous() for part in state)


def _freeze(going, new, old):
    """``new`` where ``going``, else ``old`` (tuples of tensors)."""
    return tuple(torch.where(going, fresh, kept) for fresh, kept in zip(new, old))


class _Inputs:
    """The inputs of one block, ``BLOCK_STEPS`` steps (the last block padded):
    rows [K, b, ...], prefactors (n / b) w_i [K, b], normals [K, d], etas [K], the
    running average's coefficients [K]."""

    def __init__(self, tensors):
        self.tensors = tensors

    @classmethod
    def placeholder(cls, point, batch_size, dim):
        """Inputs of the right shapes, no step active."""
        like = {"dtype": point.dtype, "device": point.device}
        size = BLOCK_STEPS
        rows = point.expand(size, batch_size, *point.shape).clone()
        return cls((rows, torch.zeros(size, batch_size, **like),
                    torch.zeros(size, dim, **like), torch.zeros(size, **like),
                    torch.ones(size, **like)))

    @staticmethod
    def masks(device):
        """Which of a block's steps run: ``masks[r]`` the r first, r = 0, ..., K."""
        steps = torch.arange(BLOCK_STEPS, device=device)
        return [steps < count for count in range(BLOCK_STEPS + 1)]

    def step(self, position):
        """The inputs of the block's step ``position``."""
        return tuple(tensor[position] for tensor in self.tensors)

    def after(self, position):
        """The inputs of the steps after ``position`` first (rotated: the steps moved to
        the end are inactive)."""
        return tuple(torch.roll(tensor, -(position + 1), dims=0) for tensor in self.tensors)


class TorchBlocks:
    """The steps of one ``minimize`` run on pytorch, a compiled block at a time.

    Parameters
    ----------
    strategy : MiniBatch
    scale : float
        The metric is ``scale`` times the space's own (1 on the sphere).
    key : tuple
        The compiled block's key (kind, record shape, b, device, average, steps).
    """

    def __init__(self, strategy, scale, key):
        self.strategy = strategy
        self.scale = scale
        self.key = key
        self.kind = key[0]

    def __call__(self, point, oracle, step_sizes, output, rng, keep_iterates=False,
                 direction_bound=None):
        """Run every step of the run; the loop's draws in the loop's order (the
        arguments and result of ``compiled_blocks.CompiledBlocks``)."""
        strategy, data = self.strategy, oracle.data
        n_steps, sigma, batch_size = len(step_sizes), strategy.noise_std, strategy.batch_size
        like = {"dtype": data.dtype, "device": data.device}
        tracker = make_tracker(output, None, n_steps, rng)  # "random" draws here
        power, chosen = getattr(tracker, "power", 0), getattr(tracker, "index", -1)
        settings = torch.tensor([
            strategy.clip_norm, math.sqrt(self.scale), sigma / math.sqrt(self.scale),
            math.inf if direction_bound is None else direction_bound], **like)
        steps, block = _BLOCKS[self.key]
        state = _contiguous(steps.state(point.to(data.device)))
        tracked, found = tuple(part.clone() for part in state), None
        kept = [] if keep_iterates else None
        prefactors = oracle.weights.to(**like) * (oracle.n_samples / batch_size)
        etas = torch.as_tensor(step_sizes, **like)
        fractions = torch.as_tensor(  # c_k = min(1, power / k) of the running average
            np.minimum(1.0, power / np.arange(1, n_steps + 1)) if power else np.ones(n_steps),
            **like)
        batches, dim = _DrawnBatches(strategy, oracle), int(oracle.loss.space.dim)
        masks = _Inputs.masks(data.device)
        for first in range(0, n_steps, BLOCK_STEPS):
            count = min(BLOCK_STEPS, n_steps - first)
            indices = batches.next(count)[0].reshape(count, batch_size)
            index = torch.from_numpy(indices).to(data.device)  # the batches' rows, at once
            inputs = _Inputs(self._padded(
                data[index], prefactors[index],
                oracle.noise_rng.backend_normal(dim * count).reshape(count, dim).to(**like)
                if sigma > 0 else torch.zeros(count, dim, **like),
                etas[first : first + count], fractions[first : first + count]))
            position = 0
            while position < count:
                done = 0  # a block whose first step stops is not called
                if not steps.stops_first(state):
                    state, tracked, starts, done = block(state, tracked, *inputs.tensors,
                                                         masks[count - position], settings)
                    done = int(done)
                    found = self._keep(starts[:done], first + position, chosen, kept,
                                       found)
                position += done
                self._count(oracle, done, sigma)
                if position == count:
                    break
                # the step the block stopped before, eagerly
                found = self._keep(steps.point(state)[None], first + position, chosen, kept,
                                   found)
                state, tracked = self._eager_step(
                    steps, state, tracked, inputs.step(done), settings, oracle,
                    indices[position], sigma)
                inputs.tensors = inputs.after(done)
                position += 1
                self._count(oracle, 1, sigma)
        result = {"last": steps.point(state), "random": found}.get(output)
        iterates = None if kept is None else torch.cat([*kept, steps.point(state)[None]])
        return steps.point(tracked) if result is None else result, iterates

    @staticmethod
    def _keep(starts, first, chosen, kept, found):
        """Keep the points ``starts`` that steps ``first``, ... start from (``kept``
        when kept); the one the random output chose if among them, else ``found``."""
        if kept is not None:
            kept.append(starts)
        if first <= chosen < first + starts.shape[0]:
            return starts[chosen - first]
        return found

    def _padded(self, *tensors):
        """Each input padded to ``BLOCK_STEPS`` steps (copies of its first step)."""
        count = tensors[0].shape[0]
        if count == BLOCK_STEPS:
            return tensors
        return tuple(torch.cat([tensor, tensor[:1].expand(BLOCK_STEPS - count,
                                                          *tensor.shape[1:])])
                     for tensor in tensors)

    def _count(self, oracle, done, sigma):
        """The loop's counters after ``done`` steps."""
        oracle.n_gradient_evaluations += done * self.strategy.batch_size
        oracle.n_noise_draws += done if sigma > 0 else 0

    def _eager_step(self, steps, state, tracked, inputs, settings, oracle, batch, sigma):
        """One step run without compilation on its ``inputs``, the branches as the loop
        takes them: (state, tracked)."""
        rows, prefactors, normals, eta, fraction = inputs
        moved, ok, _ = steps.step(state, rows, prefactors, normals, eta, settings,
                                  eager=True)
        if not bool(ok):
            self._raise_loop_error(steps, state, oracle, batch, float(eta), sigma)
        if self.key[4]:  # the running average, a copy of the point (not aliased)
            tracked = (tuple(part.clone() for part in moved) if float(fraction) == 1 else
                       steps.interpolate(tracked, moved, fraction, eager=True)[0])
        return _contiguous(moved), _contiguous(tracked)

    def _raise_loop_error(self, steps, state, oracle, batch, eta, sigma):
        """Run the loop's own code for the step at ``state`` (the gradient of its batch,
        the noise draw, the map), which raises the loop's error there."""
        point = steps.point(state)
        factors = (state[1], state[2]) if len(state) > 1 else None
        with known_factors(lambda base: factors if base is point else None):
            direction = oracle.clipped_sum(point, self.strategy.clip_norm, np.asarray(batch),
                                           oracle.n_samples / self.strategy.batch_size)
            if sigma > 0:
                direction = direction + oracle.draw_noise(point, sigma)
            geodesics_for(oracle.loss.space).step(direction, -eta, point)
        raise AssertionError("the loop's step ran where the compiled block stopped")
