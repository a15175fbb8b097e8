"""One agent's private local training: the SAME function for every engine.

The agent runs ``geomstats_dp.optim.minimize`` (the library's one optimisation loop) with a
strategy calibrated by ``learning.plan_gradient_release`` from the broadcast
point, with a numpy Generator derived from the run's root seed by (round, agent), so that
the reply does not depend on where the agent executes.
"""

import math
import threading

import numpy as np

from geomstats_dp._backend import quiet_numerics, to_backend, to_numpy
from geomstats_dp.distributions import TangentGaussian
from geomstats_dp.optim import minimize
from geomstats_dp.optim.geodesics import geodesics_for

SERVER_KEY = 0
AGENT_KEY = 1
REPLIES = ("point", "tangent")


def agent_seed(entropy, round_index, agent_index):
    """The SeedSequence of agent ``agent_index`` in round ``round_index`` of a run."""
    return np.random.SeedSequence(entropy, spawn_key=(AGENT_KEY, round_index, agent_index))


def server_seed(entropy):
    """The SeedSequence of the server (agent sampling, random output)."""
    return np.random.SeedSequence(entropy, spawn_key=(SERVER_KEY,))


def inject_fault(fault):
    """Tests' fault injection: None (none), "raise", or a delay in seconds before the
    agent answers (``math.inf``: it never answers)."""
    if fault == "raise":
        raise RuntimeError("injected failure")
    if fault is not None:
        threading.Event().wait(None if math.isinf(fault) else fault)


def local_train(loss, data, strategy, n_steps, step_size, start, seed,
                output="last", noise_method="transport", direction_bound=None,
                reply="point"):
    """K private local steps of one agent from the broadcast point.

    Parameters
    ----------
    loss : PerSampleLoss
    data : array-like, shape=[n_i, ...]
        The agent's records (values already checked).
    strategy : FullBatch, MiniBatch or VarianceReduced
        Calibrated by the server's plan (noise stds fixed there).
    n_steps : int
        K (steps; epochs for VarianceReduced).
    step_size : float or callable
    start : array-like, shape=[*space.shape]
        The broadcast point.
    seed : numpy.random.SeedSequence
        From ``agent_seed``.
    output : str
        Which local iterate is returned ("last" by default).
    noise_method : str
        TangentGaussian method.
    direction_bound : float, optional
        Each noisy gradient is projected onto the ball of this radius of its tangent space
        before its step (``optim.step_cap``); PriRFed passes ``strategy.signal_bound``
        where the injectivity radius is infinite (``RunSpec.direction_bound``).
    reply : {"point", "tangent"}
        "point": the local output point; "tangent": the one local step's tangent vector
        -eta g at ``start`` (one step only), the release itself before the exponential
        map, which on a sphere wraps a step longer than pi.

    Returns
    -------
    reply : numpy.ndarray, shape=[*space.shape]
        The agent's reply (private with respect to its records): a point, or a tangent
        vector at ``start``.
    """
    if reply not in REPLIES:
        raise ValueError(f"reply must be one of {REPLIES}, got {reply!r}")
    steps, retraction = [], None
    if reply == "tangent":
        if strategy.n_rounds * strategy.steps_per_round(n_steps) != 1:
            raise ValueError("reply='tangent' returns the step of a one-step run, got "
                             f"n_steps={n_steps}")
        exp = geodesics_for(loss.space).exp

        def retraction(tangent_vec, base_point):  # records the step it maps
            steps.append(tangent_vec)
            return exp(tangent_vec, base_point)

    with quiet_numerics():
        result = minimize(
            loss, data, strategy, n_steps, step_size, to_backend(to_numpy(start)),
            output=output, random_state=np.random.default_rng(seed),
            noise_sampler=TangentGaussian(loss.space, noise_method, validate=False),
            data_checked=True, direction_bound=direction_bound, retraction=retraction,
        )
    return to_numpy(steps[0] if steps else result.point)
