"""Step-size schedules and their checks."""

import numpy as np
import pytest

from geomstats_dp.optim import ConstantStep, InverseSqrtStep, InverseTimeStep
from geomstats_dp.optim.schedules import step_size_values


@pytest.mark.backend_independent
def test_schedules_follow_their_formulas():
    steps = np.arange(5)
    np.testing.assert_allclose(step_size_values(0.3, 5), np.full(5, 0.3))
    np.testing.assert_allclose(step_size_values(ConstantStep(0.3), 5), np.full(5, 0.3))
    # Han et al. 2024 Theorem 3: eta_t = 1 / (beta (t + 1)) with beta = 2
    np.testing.assert_allclose(step_size_values(InverseTimeStep(0.5), 5), 0.5 / (steps + 1))
    np.testing.assert_allclose(
        step_size_values(InverseSqrtStep(2.0, offset=4.0), 5), 2.0 / np.sqrt(steps + 4)
    )
    np.testing.assert_allclose(step_size_values(lambda t: 1.0 / (t + 2), 5), 1 / (steps + 2))


@pytest.mark.backend_independent
@pytest.mark.parametrize(
    "step_size, error, message",
    [
        (0.0, ValueError, "step_size"),
        (float("inf"), ValueError, "step_size"),
        (lambda t: 1.0 if t < 3 else float("nan"), ValueError, "step 3"),
        ("0.1", TypeError, "step_size"),
        (True, TypeError, "step_size"),
    ],
)
def test_bad_step_sizes_are_rejected(step_size, error, message):
    with pytest.raises(error, match=message):
        step_size_values(step_size, 5)
