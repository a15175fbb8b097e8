"""Stages: every noisy release reports itself to an active observer, which may replace what
is released; without one, ``statistic + noise`` (or the choice) is released unchanged."""

import threading

import numpy as np
import pytest

from geomstats_dp.privacy.stages import (
    Stage,
    discrete_stage,
    noisy_stage,
    observe_stages,
    observing,
    stage_group,
)

pytestmark = pytest.mark.backend_independent


def _gaussian(statistic, noise):
    return noisy_stage(statistic, noise, label="mean", law="gaussian", scale=0.5,
                       sensitivity=0.1, dim=2)


def test_without_an_observer_the_sum_is_released():
    assert not observing()
    np.testing.assert_array_equal(_gaussian(np.array([1.0, 2.0]), np.array([0.5, -1.0])),
                                  [1.5, 1.0])
    assert discrete_stage("b", label="pick", epsilon=1.0, sensitivity=1.0) == "b"


def test_an_observer_sees_each_stage_and_decides_the_release():
    seen = []

    def observer(stage):
        seen.append(stage)
        return stage.release() * 10 if stage.law == "gaussian" else "a"

    with observe_stages(observer):
        assert observing()
        released = _gaussian(np.array([1.0, 2.0]), np.array([0.5, -1.0]))
        choice = discrete_stage("b", label="pick", epsilon=0.3, sensitivity=1.0,
                                utility=np.array([0.0, -1.0]))
    assert not observing()
    np.testing.assert_array_equal(released, [15.0, 10.0])
    assert choice == "a"
    gaussian, exponential = seen
    assert gaussian.public() == ("mean", "gaussian", 0.5, 0.1, 2, "replace_one", 1.0)
    assert (exponential.law, exponential.scale, exponential.choice) == ("exponential", 0.3, "b")


def test_groups_prefix_the_labels_outermost_first():
    seen = []
    with (observe_stages(lambda stage: seen.append(stage) or stage.release()),
          stage_group("round 1"), stage_group("agent 0")):
        _gaussian(np.zeros(2), np.ones(2))
    assert seen[0].label == "round 1: agent 0: mean"
    assert seen[0].group == "round 1: agent 0"


def test_a_stage_measures_in_its_law_s_norm():
    gaussian = Stage("g", np.array([3.0, 4.0]), None, "gaussian", 1.0, 1.0)
    laplace = Stage("l", np.array([3.0, 4.0]), None, "laplace", 1.0, 1.0)
    exponential = Stage("e", np.array([3.0, -4.0]), None, "exponential", 1.0, 1.0)
    assert gaussian.measure(np.array([3.0, 4.0])) == 5.0  # l2
    assert laplace.measure(np.array([3.0, -4.0])) == 7.0  # l1
    assert exponential.measure(np.array([3.0, -4.0])) == 4.0  # sup
    other = Stage("g", np.array([0.0, 0.0]), None, "gaussian", 1.0, 1.0)
    assert gaussian.distance(other) == 5.0
    metric = Stage("m", 2.0, None, "exponential", 1.0, 1.0, dist=lambda a, b: abs(a - b) / 2)
    assert metric.distance(Stage("m", 6.0, None, "exponential", 1.0, 1.0)) == 2.0


def test_an_observer_is_not_seen_from_another_thread():
    seen = []
    with observe_stages(lambda stage: seen.append(stage) or stage.release()):
        worker = threading.Thread(target=lambda: _gaussian(np.zeros(2), np.ones(2)))
        worker.start()
        worker.join()
    assert seen == []
