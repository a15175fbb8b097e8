"""The single optimisation loop behind DP-RGD, DP-RSGD and DP-RSVRG (+ restarts)."""

import geomstats.backend as gs

from geomstats_dp._backend import get_rng, to_backend
from geomstats_dp._validation import check_positive_int
from geomstats_dp.distributions import TangentGaussian
from geomstats_dp.optim.affine_log import known_factors
from geomstats_dp.optim.compiled_blocks import compiled_block_runner
from geomstats_dp.optim.geodesics import geodesics_for
from geomstats_dp.optim.initial_point import check_init_point
from geomstats_dp.optim.losses import PerSampleLoss
from geomstats_dp.optim.oracle import GradientOracle
from geomstats_dp.optim.outputs import OUTPUTS, make_tracker
from geomstats_dp.optim.result import OptimizerResult
from geomstats_dp.optim.schedules import step_size_values
from geomstats_dp.optim.step_cap import cap_norm
from geomstats_dp.optim.strategies import Strategy
from geomstats_dp.optim.transport import resolve_transport
from geomstats_dp.optim.weights import normalize_sample_weight


def minimize(
    loss,
    data,
    strategy,
    n_iter,
    step_size,
    init_point=None,
    *,
    sample_weight=None,
    output="last",
    retraction=None,
    random_state=None,
    noise_sampler=None,
    transport=None,
    callback=None,
    keep_iterates=False,
    data_checked=False,
    direction_bound=None,
):
    """Minimise sum_i w_i f(x; z_i) on a manifold with noisy clipped Riemannian gradients.

    Every step t at x_t asks ``strategy`` for a noisy gradient g_t (clipped per-sample
    gradients combined with the weights, plus N_{x_t}(0, sigma^2) tangent noise) and moves
    to x_(t+1) = R_{x_t}(-eta_t g_t), R the exponential map or ``retraction``. The number
    of steps, the step sizes and the number and order of random draws are fixed by the
    arguments and n = len(data) alone: neighbouring datasets of equal size produce the same
    sequence of draws. There is no stopping rule.

    Runs of the squared distance on SPD(n) with the affine-invariant metric or on a
    hypersphere (DP-RGD or DP-RSGD, the default sampler, no retraction or callback,
    numpy backend) are run a block of steps at a time in compiled code when numba is
    installed (the ``speed`` extra; ``optim.compiled_blocks``): the same draws, iterates
    (to rounding) and result. On the pytorch backend, long DP-RSGD runs of fixed batch
    size on the sphere and SPD(n), n >= 3, run in blocks compiled by ``torch.compile``
    (``optim.compiled_torch``), with the same guarantee.

    Parameters
    ----------
    loss : PerSampleLoss
        f(x; z) and its Riemannian gradient; ``loss.space`` is where x lives.
    data : array-like, shape=[n, ...]
        The samples z_i.
    strategy : FullBatch, MiniBatch or VarianceReduced
        DP-RGD, DP-RSGD or DP-RSVRG (+ restarts); holds clip norms and noise stds.
    n_iter : int
        Steps (FullBatch, MiniBatch) or epochs per round (VarianceReduced).
    step_size : float or callable
        eta_t, a constant or a schedule ``t -> eta_t`` of the global step index
        (``ConstantStep``, ``InverseTimeStep``, ``InverseSqrtStep``).
    init_point : array-like, shape=[*space.shape], optional
        Data-independent starting point; default ``canonical_point(space)``.
    sample_weight : array-like, shape=[n], optional
        Public weights w_i >= 0, normalised to sum 1; uniform by default. They scale the
        sensitivity by n max_i w_i (see ``strategy.queries``).
    output : {"last", "random", "average", "weighted_average"}
        Which point to return (see ``geomstats_dp.optim.outputs``).
    retraction : callable, optional
        ``retraction(tangent_vec, base_point) -> point``; default the exponential map
        (closed form on SPD with the affine-invariant metric, ``optim.geodesics``).
    random_state : None, int, numpy.random.Generator or SecureGenerator
        The one source of randomness: batches, indices, noise, random output, restarts.
    noise_sampler : object, optional
        ``sample(base_point, n_samples=1, sigma=..., random_state=rng)`` returning a
        tangent vector; default ``TangentGaussian(space, validate=False)``: the iterates
        are retractions of the checked starting point, and a failed membership test on
        them would be an error that depends on the data (finiteness is still checked).
    transport : VectorTransport, optional
        For VarianceReduced; default ``resolve_transport(space)``.
    callback : callable, optional
        ``callback(step, point)`` after every step; its return value is ignored, and it
        must not modify ``point`` in place (the next step starts from it).
    keep_iterates : bool
        Record the starting point of every step and the final point.
    data_checked : bool
        The caller already ran ``loss.check_data`` on ``data`` (and passes its result):
        do not validate the values again.
    direction_bound : float, optional
        B: each noisy gradient g_t is projected onto the ball of radius B of its tangent
        space, g_t min(1, B / |g_t|), before the step (``optim.step_cap``). With B at
        least the norm of the noiseless gradient (``strategy.signal_bound``) the
        projection never moves g_t further from it, and it keeps a noisy step from
        leaving the manifold numerically; post-processing of g_t. Default: no cap.

    Returns
    -------
    result : OptimizerResult
    """
    if not isinstance(loss, PerSampleLoss):
        raise TypeError(f"loss must be a PerSampleLoss, got {type(loss).__name__}")
    if not isinstance(strategy, Strategy):
        raise TypeError(
            f"strategy must be FullBatch, MiniBatch or VarianceReduced, "
            f"got {type(strategy).__name__}"
        )
    n_iter = check_positive_int(n_iter, "n_iter")
    if output not in OUTPUTS:
        raise ValueError(f"output must be one of {OUTPUTS}, got {output!r}")
    space = loss.space
    point = check_init_point(space, init_point)
    steps_per_round = strategy.steps_per_round(n_iter)
    step_sizes = step_size_values(step_size, strategy.n_rounds * steps_per_round)
    geodesics = geodesics_for(space)

    if not data_checked:
        data = loss.check_data(data)
    n_samples = int(data.shape[0])
    strategy.check_n_samples(n_samples)
    weights = to_backend(normalize_sample_weight(sample_weight, n_samples))
    rng = get_rng(random_state)
    if noise_sampler is None and any(std > 0 for std in strategy.noise_stds):
        noise_sampler = TangentGaussian(space, validate=False)
    if transport is None and strategy.needs_transport:
        transport = resolve_transport(space)
    oracle = GradientOracle(loss, data, weights, noise_sampler, rng, strategy.blocks_draws)
    runner = compiled_block_runner(loss, strategy, data, noise_sampler, len(step_sizes),
                                   retraction=retraction, callback=callback, output=output)
    if runner is None:
        point, iterates = _run_steps(
            oracle, strategy, transport, point, step_sizes.tolist(), steps_per_round, output,
            rng, geodesics, retraction, callback, keep_iterates, direction_bound)
    else:  # the same steps, draws and result, a block of steps per compiled call
        point, iterates = runner(point, oracle, step_sizes, output, rng, keep_iterates,
                                 direction_bound)
    return OptimizerResult(
        point=point,
        output=output,
        n_iter=n_iter,
        n_steps=len(step_sizes),
        n_gradient_evaluations=oracle.n_gradient_evaluations,
        n_noise_draws=oracle.n_noise_draws,
        step_sizes=step_sizes,
        iterates=iterates,
    )


def _run_steps(oracle, strategy, transport, point, etas, steps_per_round, output, rng,
               geodesics, retraction, callback, keep_iterates, direction_bound):
    """The steps of ``minimize`` in Python: (output point, iterates or None)."""
    space = oracle.loss.space
    if retraction is None:
        retract = geodesics.step
    else:
        def retract(direction, coefficient, base_point):
            return retraction(coefficient * direction, base_point)
    direction = strategy.stepper(oracle, transport, steps_per_round)
    iterates = [] if keep_iterates else None
    step = 0
    with known_factors(geodesics.known_factor):  # the iterates' SPD factors, reused
        for round_index in range(strategy.n_rounds):
            last_round = round_index == strategy.n_rounds - 1
            tracker = make_tracker(
                output if last_round else "random", geodesics, steps_per_round, rng
            )
            for round_step in range(steps_per_round):
                tracker.before_step(round_step, point)
                if keep_iterates:
                    iterates.append(point)
                tangent_vec = direction(point, round_step)
                if direction_bound is not None:
                    tangent_vec = cap_norm(space.metric, tangent_vec, point, direction_bound)
                point = retract(tangent_vec, -etas[step], point)
                tracker.after_step(round_step, point)
                if callback is not None:
                    callback(step, point)
                step += 1
            if not last_round:
                point = tracker.point
    if keep_iterates:
        iterates.append(point)
        iterates = gs.stack(iterates)
    return tracker.point, iterates
