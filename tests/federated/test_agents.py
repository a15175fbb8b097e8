"""``federated.agents``: the agents' records split, shape-checked, then value-checked."""

import numpy as np
import pytest
from geomstats.geometry.hypersphere import Hypersphere

from geomstats_dp.federated.agents import (
    check_agents,
    checked_values,
    inferred_clip_norm,
    split_agents,
)
from geomstats_dp.optim import SquaredDistanceLoss
from geomstats_dp.privacy import PrivacyLeakWarning

pytestmark = pytest.mark.backend_independent

SPACE = Hypersphere(2)
NORTH = np.array([0.0, 0.0, 1.0])


def test_groups_split_the_rows_by_agent_in_sorted_label_order():
    X = np.arange(12.0).reshape(6, 2)
    groups = np.array([2, 0, 2, 1, 0, 2])
    agents = split_agents(X, groups)
    assert [agent.tolist() for agent in agents] == [
        [[2.0, 3.0], [8.0, 9.0]], [[6.0, 7.0]], [[0.0, 1.0], [4.0, 5.0], [10.0, 11.0]]]
    first, second = X[:2], X[2:]
    assert [a is b for a, b in zip(split_agents((first, second)), (first, second))] == [
        True, True]


@pytest.mark.parametrize(("datasets", "groups", "error", "match"), [
    (np.zeros((4, 3)), None, TypeError, "list of per-agent arrays"),
    (np.zeros((4, 3)), np.zeros(3), ValueError, r"groups must have shape \(4,\)"),
])
def test_a_bad_split_is_refused_naming_its_argument(datasets, groups, error, match):
    with pytest.raises(error, match=match):
        split_agents(datasets, groups)


@pytest.mark.parametrize(("datasets", "match"), [
    ([], "at least one agent"),
    ([NORTH[None], np.zeros((0, 3))], r"datasets\[1\] \(agent 1\) is empty"),
    ([NORTH[None], np.zeros((2, 4))], r"datasets\[1\] \(agent 1\) has records of shape"),
])
def test_shape_checks_name_the_agent(datasets, match):
    with pytest.raises(ValueError, match=match):
        check_agents(datasets)


def test_shape_checks_read_no_value():
    arrays = check_agents([np.full((2, 3), np.nan), np.full((1, 3), np.inf)])
    assert [array.shape for array in arrays] == [(2, 3), (1, 3)]


def test_value_checks_name_the_agent_and_keep_the_records():
    loss = SquaredDistanceLoss(SPACE)
    good = np.stack([NORTH, -NORTH])
    assert len(checked_values(loss, [good, good[:1]])) == 2
    with pytest.raises(ValueError, match=r"^datasets\[1\] \(agent 1\): "):
        checked_values(loss, [good, np.array([[0.0, 0.0, 2.0]])])


def test_an_inferred_clip_norm_is_the_largest_gradient_norm_and_warns():
    """The squared distance's per-sample gradient at x is -Log_x(z), of norm d(x, z)."""
    loss = SquaredDistanceLoss(SPACE)
    near = np.array([[0.0, np.sin(0.3), np.cos(0.3)]])
    far = np.array([[np.sin(0.7), 0.0, np.cos(0.7)], [0.0, np.sin(0.1), np.cos(0.1)]])
    checked = checked_values(loss, [near, far])
    with pytest.warns(PrivacyLeakWarning, match="not private"):
        clip_norm = inferred_clip_norm(loss, checked, NORTH)
    assert clip_norm == pytest.approx(0.7, rel=1e-9)
