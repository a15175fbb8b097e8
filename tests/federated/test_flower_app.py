"""The Flower app's strategy called directly, without starting Ray or a SuperLink: one TRAIN
message per sampled agent, and the size-weighted mean of the replies that arrived (on
Euclidean space), the others counted as failed."""

import numpy as np
import pytest
from geomstats.geometry.euclidean import Euclidean

from geomstats_dp.federated import PriRFed

pytest.importorskip("flwr")
flower_app = pytest.importorskip("geomstats_dp.federated.flower_app")
from flwr import app

SIZES = [10, 20, 30, 40]


class Reply:
    """A reply as the grid returns it: its content, or an error."""

    def __init__(self, agent, point=None):
        self.content = {flower_app.CONFIG: app.ConfigRecord({"agent": agent})}
        if point is not None:
            self.content[flower_app.ARRAYS] = app.ArrayRecord([np.asarray(point)])

    def has_error(self):
        return flower_app.ARRAYS not in self.content


def strategy():
    estimator = PriRFed(Euclidean(2), n_rounds=3, n_sampled=3, local_method="rgd",
                        local_steps=1, clip_norm=1.0, random_state=4)
    run = estimator.run_spec(SIZES)
    return flower_app.ManifoldStrategy(run, {agent: 100 + agent for agent in range(4)})


def test_each_sampled_agent_gets_the_point_and_the_round(monkeypatch):
    from flwr.supercore.task_identity import TaskIdentity

    monkeypatch.setattr(TaskIdentity, "_run_id", 1)  # a message names its run and sender
    monkeypatch.setattr(TaskIdentity, "_node_id", 1)
    monkeypatch.setattr(TaskIdentity, "_task_id", 1)
    manifold = strategy()
    point = app.ArrayRecord([np.array([0.5, -1.0])])
    for server_round in range(3):
        messages = manifold.configure_train(server_round, point, app.ConfigRecord(), None)
        sampled = manifold.sampled[server_round]
        assert len(sampled) == 3 and len(set(sampled)) == 3
        assert [m.metadata.dst_node_id for m in messages] == [100 + a for a in sampled]
        for message, agent in zip(messages, sampled):
            assert message.metadata.message_type == app.MessageType.TRAIN
            assert dict(message.content[flower_app.CONFIG]) == {"round": server_round,
                                                                "agent": agent}
            np.testing.assert_array_equal(
                message.content[flower_app.ARRAYS].to_numpy_ndarrays()[0], [0.5, -1.0])


def test_the_aggregate_is_the_size_weighted_mean_of_the_replies_that_arrived():
    manifold = strategy()
    sampled = manifold.sampled[0]
    rng = np.random.default_rng(0)
    points = {agent: rng.normal(size=2) for agent in sampled}
    lost = sampled[1]
    replies = [Reply(agent, points[agent]) for agent in sampled if agent != lost]
    replies.append(Reply(lost))  # an error: its agent failed
    point, failed = manifold.aggregate_train(0, replies, np.zeros(2))
    arrived = [agent for agent in sampled if agent != lost]
    weights = np.array([SIZES[agent] for agent in arrived], dtype=float)
    expected = weights @ np.stack([points[agent] for agent in arrived]) / weights.sum()
    np.testing.assert_allclose(point, expected, rtol=1e-12)
    assert failed == [lost]


def test_a_round_without_replies_keeps_the_point():
    manifold = strategy()
    point, failed = manifold.aggregate_train(1, [], np.array([2.0, 3.0]))
    np.testing.assert_array_equal(point, [2.0, 3.0])
    assert failed == manifold.sampled[1]


class Grid:
    """Nodes connecting one per poll."""

    def __init__(self):
        self.polls = 0

    def get_node_ids(self):
        self.polls += 1
        return list(range(self.polls))


def test_the_wait_for_nodes_ends_when_all_connected_or_at_the_limit():
    assert flower_app._wait_for_nodes(Grid(), 2, 5.0) == [0, 1]
    assert flower_app._wait_for_nodes(Grid(), 50, 0.0) == [0]
