"""The SPD(2) kernel's own helpers (``optim.compiled_spd2``; the closed forms it compiles
are the loop's, tested in their modules), run as plain Python: the clip factor and the
step cap are the loop's (the whole kernel against the loop:
tests/optim/test_compiled_blocks.py)."""

import numpy as np
import pytest
from geomstats.geometry.scalar_product_metric import ScalarProductMetric
from geomstats.geometry.spd_matrices import SPDMatrices

from geomstats_dp.optim import compiled_spd2
from geomstats_dp.optim.clipping import clip_factors
from geomstats_dp.optim.step_cap import cap_norm

pytestmark = pytest.mark.backend_independent


def test_the_clip_factor_is_the_loops():
    norms = np.array([0.0, 0.5, 1.0, 1.5, 40.0])
    expected = np.asarray(clip_factors(norms, 1.0))
    found = [compiled_spd2._clip_factor(norm, 1.0) for norm in norms]
    np.testing.assert_array_equal(found, expected)


def test_the_state_and_records_layout():
    point = np.array([[2.0, 0.5], [0.5, 1.0]])
    point_state = compiled_spd2.state(point)
    assert point_state.shape == (3, 2, 2)
    np.testing.assert_allclose(point_state[1] @ point_state[1].T, point, rtol=1e-14)
    np.testing.assert_allclose(point_state[1] @ point_state[2], np.eye(2), atol=1e-14)
    data = np.stack([point, 2 * point])
    np.testing.assert_array_equal(compiled_spd2.records(data), data.reshape((2, 4)))


@pytest.mark.parametrize("bound", [0.1, 100.0])  # active, inactive
def test_the_step_cap_is_the_loops(bound):
    space = SPDMatrices(2)
    space.equip_with_metric(ScalarProductMetric(space, 4.0))
    point = np.array([[2.0, 0.5], [0.5, 1.0]])
    tangent_vec = np.array([[0.3, -0.2], [-0.2, 0.1]])
    point_state = compiled_spd2.state(point)
    found = compiled_spd2._capped(tangent_vec.tolist(), compiled_spd2._read(point_state, 2),
                                  bound, 2.0)
    np.testing.assert_allclose(np.array(found), cap_norm(space.metric, tangent_vec, point,
                                                         bound), rtol=1e-13)
