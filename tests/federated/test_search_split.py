"""Each agent's records split into training and validation parts of public sizes; the
validation loss noised by every agent."""

import numpy as np
import pytest

from geomstats_dp.federated.search_split import AgentSplit
from geomstats_dp.model_selection.scores import GaussianScore
from tests.conftest import shifted
from tests.model_selection.test_prirfed_search import BOUND, SIZES, _agents


def test_each_agent_is_split_with_public_sizes():
    split = AgentSplit(_agents(), None, 0.25, np.random.default_rng(3))
    assert [len(agent.validation) for agent in split.agents] == [10, 12, 14, 16]
    assert split.train_sizes == [30, 36, 42, 48]
    for agent, size in zip(split.agents, SIZES):
        assert sorted(np.concatenate([agent.train, agent.validation])) == list(range(size))


def test_score_noise_has_the_variance_of_the_agents_draws_summed():
    """The released loss minus the clipped mean: the sum of 4 agents' draws of std s, so
    variance 4 s^2 (4,000 draws: the sample variance is within 10% with probability
    1 - 1e-5)."""
    split = AgentSplit(_agents(), None, 0.25, np.random.default_rng(0))
    losses = [np.full(len(agent.validation), 30.0) for agent in split.agents]  # clipped: B
    event = GaussianScore().events(1.0, 1e-5, BOUND / split.n_validation, "score")[0]
    rng = np.random.default_rng(shifted(7))
    released = np.array([split.noisy_loss(losses, BOUND, GaussianScore(), event, rng)
                         for _ in range(4000)])
    assert np.mean(released) == pytest.approx(BOUND, abs=5 * 2 * event.noise_std / 63)
    assert np.var(released) == pytest.approx(len(SIZES) * event.noise_std**2, rel=0.1)
