"""The largest per-fit epsilon whose whole cost fits the target, by bisection on a bracket."""

import pytest

from geomstats_dp.model_selection.calibration import largest_epsilon


@pytest.mark.backend_independent
@pytest.mark.parametrize("runs", [3.0, 7.5, 40.0])
def test_linear_cost_gives_the_target_over_the_number_of_runs(runs):
    """cost(e) = runs * e: the largest feasible e is target / runs."""
    epsilon = largest_epsilon(lambda e: runs * e, 2.0)
    assert runs * epsilon <= 2.0
    assert epsilon == pytest.approx(2.0 / runs, rel=1e-6)


@pytest.mark.backend_independent
def test_a_cheap_release_gets_the_top_of_the_bracket():
    assert largest_epsilon(lambda e: e / 4, 1.5) == 3.0


@pytest.mark.backend_independent
def test_an_unaffordable_release_raises_naming_what_is_calibrated():
    with pytest.raises(ValueError, match="epsilon=1 cannot pay for this refit.*raise epsilon"):
        largest_epsilon(lambda e: 1000 * e, 1.0, name="refit")
