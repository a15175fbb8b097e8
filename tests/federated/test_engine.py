"""``federated.engine``: the in-process engine's rounds, failures and timeouts; dispatch."""

import math
from types import SimpleNamespace

import numpy as np
import pytest

from geomstats_dp.federated import engine, flower_app

pytestmark = pytest.mark.backend_independent


def fake_run(round_timeout=None, last_rounds=None):
    """Two rounds of agents [0, 1] then [1]; a reply is the point plus the agent's data;
    the aggregate is the mean of the replies (its ``last_round`` flags appended to
    ``last_rounds``)."""
    def aggregate(start, agents, replies, last_round=False):
        (last_rounds if last_rounds is not None else []).append(last_round)
        return np.mean(replies, axis=0) if replies else start

    return SimpleNamespace(
        start=np.zeros(1), round_timeout=round_timeout, engine="local", n_rounds=2,
        sample_agents=lambda: [[0, 1], [1]],
        train=lambda round_index, agent, point, data: point + data,
        aggregate=aggregate, report=lambda round_index, n_replies: None)


def test_rounds_train_the_sampled_agents_on_their_own_records():
    last_rounds = []
    history = engine.run_local(fake_run(last_rounds=last_rounds),
                               {0: np.array([1.0]), 1: np.array([3.0])})
    assert last_rounds == [False, True]  # the server knows its last aggregation
    assert [record["sampled"] for record in history] == [[0, 1], [1]]
    assert [record["failed"] for record in history] == [[], []]
    np.testing.assert_array_equal(history[0]["point"], [2.0])  # mean of 1 and 3
    np.testing.assert_array_equal(history[1]["point"], [5.0])  # 2 + 3


@pytest.mark.parametrize("round_timeout", [None, 5.0])
def test_an_agent_that_raises_is_recorded_and_the_round_goes_on(round_timeout):
    data = {0: np.array([1.0]), 1: np.array([3.0])}
    history = engine.run_local(fake_run(round_timeout), data, {(0, 1): "raise"})
    assert [record["failed"] for record in history] == [[1], []]
    np.testing.assert_array_equal(history[0]["point"], [1.0])  # agent 0's reply alone


def test_a_reply_later_than_the_timeout_counts_as_failed():
    data = {0: np.array([1.0]), 1: np.array([3.0])}
    history = engine.run_local(fake_run(0.3), data, {(1, 1): math.inf})
    assert [record["failed"] for record in history] == [[], [1]]
    np.testing.assert_array_equal(history[1]["point"], history[0]["point"])  # no reply


def test_the_engine_is_chosen_by_the_run(monkeypatch):
    calls = []
    monkeypatch.setattr(flower_app, "run_flower",
                        lambda run, datasets: calls.append(("flower", datasets)) or [])
    monkeypatch.setattr(engine, "run_local",
                        lambda run, datasets: calls.append(("local", datasets)) or [])
    engine.run_engine(SimpleNamespace(engine="flower"), "records")
    engine.run_engine(SimpleNamespace(engine="local"), "records")
    assert calls == [("flower", "records"), ("local", "records")]
