"""One agent's local training: a tangent-mean step is the clipped mean plus Gaussian noise
of the planned std, drawn from the agent's own seed (the same wherever it runs)."""

import math

import numpy as np
import pytest
from geomstats.geometry.euclidean import Euclidean

from geomstats_dp._backend import to_backend
from geomstats_dp.federated.local import agent_seed, local_train, server_seed
from geomstats_dp.federated.local_methods import LOCAL_METHODS
from geomstats_dp.optim import SquaredDistanceLoss
from tests.conftest import shifted

SPACE = Euclidean(2)
SIZE, CLIP = 20, 1.0


def agent_reply(data, seed, epsilon=1.0):
    loss = SquaredDistanceLoss(SPACE)
    plan, step = LOCAL_METHODS["tangent_mean"].plan(epsilon, 1e-5, SIZE, 1, CLIP, None, 2)
    reply = local_train(loss, data, plan.strategy, 1, step, np.zeros(2), seed)
    return reply, plan.strategy.noise_std


def test_a_tangent_mean_step_is_the_clipped_mean_plus_the_planned_noise():
    """From the origin, records of norm 0.5 (unclipped) and 4 (clipped to 1): the reply is
    their clipped mean plus N(0, s^2 I); 400 replies give the mean within 5 standard errors
    and the variance within 25% (its relative standard error is 5%)."""
    rng = np.random.default_rng(shifted(0))
    directions = rng.normal(size=(SIZE, 2))
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    norms = np.where(np.arange(SIZE) < SIZE // 2, 0.5, 4.0)
    data = to_backend(directions * norms[:, None])
    clipped_mean = (directions * np.minimum(norms, CLIP)[:, None]).mean(axis=0)
    replies, std = [], None
    for agent in range(400):
        reply, std = agent_reply(data, agent_seed(shifted(1), 0, agent))
        replies.append(reply)
    noise = np.array(replies) - clipped_mean
    np.testing.assert_array_less(np.abs(noise.mean(axis=0)), 5 * std / math.sqrt(400))
    np.testing.assert_allclose(noise.var(axis=0, ddof=1), std**2, rtol=0.25)


def test_the_reply_depends_only_on_the_run_seed_round_and_agent():
    data = to_backend(np.random.default_rng(2).normal(size=(SIZE, 2)))
    first, _ = agent_reply(data, agent_seed(7, 3, 1))
    np.testing.assert_array_equal(agent_reply(data, agent_seed(7, 3, 1))[0], first)
    for other in (agent_seed(7, 1, 3), agent_seed(8, 3, 1), agent_seed(7, 3, 2)):
        assert not np.array_equal(agent_reply(data, other)[0], first)


@pytest.mark.backend_independent
def test_server_and_agents_draw_independent_streams():
    words = {tuple(server_seed(5).generate_state(4))}
    words |= {tuple(agent_seed(5, r, a).generate_state(4)) for r in range(3) for a in range(3)}
    assert len(words) == 10


def test_a_tangent_reply_is_the_step_whose_exponential_is_the_point_reply():
    """On S^2 the one-step reply as a tangent vector at the start maps by Exp to the point
    reply (same seed), and it keeps a step longer than pi that Log of the point would
    read back shorter; more than one step is refused."""
    from geomstats.geometry.hypersphere import Hypersphere

    space = Hypersphere(2)
    loss = SquaredDistanceLoss(space)
    start = np.array([0.0, 0.0, 1.0])
    data = to_backend(np.array([[0.6, 0.0, 0.8], [0.0, 0.6, 0.8], [0.0, 0.0, 1.0]]))
    for epsilon, long_step in ((5.0, False), (0.02, True)):
        plan, step = LOCAL_METHODS["tangent_mean"].plan(epsilon, 1e-5, 3, 1, CLIP, None, 2)
        seed = agent_seed(shifted(3), 0, 0)
        point = local_train(loss, data, plan.strategy, 1, step, start, seed)
        vector = local_train(loss, data, plan.strategy, 1, step, start, seed, reply="tangent")
        assert abs(vector @ start) < 1e-12  # tangent at the start
        np.testing.assert_allclose(
            np.cos(np.linalg.norm(vector)) * start
            + np.sin(np.linalg.norm(vector)) * vector / np.linalg.norm(vector),
            point, atol=1e-12)
        assert (np.linalg.norm(vector) > math.pi) == long_step
    with pytest.raises(ValueError, match="one-step run, got n_steps=2"):
        local_train(loss, data, plan.strategy, 2, step, start, seed, reply="tangent")
    with pytest.raises(ValueError, match="reply must be one of"):
        local_train(loss, data, plan.strategy, 1, step, start, seed, reply="vector")
