"""The calibration of a gradient run and the one home of its formulas
(``learning._gradient_plan``)."""

import pytest

from geomstats_dp.learning._gradient_plan import (
    FAMILIES,
    GRADIENT_METHODS,
    n_manifold_steps,
    plan_gradient_release,
)
from geomstats_dp.privacy import calibrate_gaussian

pytestmark = pytest.mark.backend_independent


def test_manifold_steps_of_each_family():
    assert GRADIENT_METHODS == ("rgd", "rsgd", "rsvrg")
    assert [FAMILIES[m].batched for m in GRADIENT_METHODS] == [False, True, False]
    assert n_manifold_steps("rgd", 7, 3) == 7
    assert n_manifold_steps("rsgd", 7, 3) == 7
    assert n_manifold_steps("rsvrg", 7, 3) == 21


def test_rgd_plan_charges_the_noise_it_draws():
    epsilon, delta, n, n_iter, clip_norm = 1.0, 1e-5, 100, 12, 2.0
    plan = plan_gradient_release("rgd", epsilon, delta, n, n_iter, clip_norm, label="X")
    (event,) = plan.events
    z = calibrate_gaussian(epsilon, delta, n_iter)  # independent: the accountant itself
    assert event.noise_multiplier == pytest.approx(z)
    assert event.sensitivity == pytest.approx(2 * clip_norm / n)
    assert plan.strategy.noise_std == pytest.approx(z * 2 * clip_norm / n)
    assert event.n_steps == n_iter
    assert event.label.startswith("X DP-RGD")


@pytest.mark.parametrize(("sampling", "adjacency", "per_record"), [
    ("without_replacement", "replace_one", 2.0), ("poisson", "add_remove", 1.0)])
def test_rsgd_plan_sensitivity_and_adjacency(sampling, adjacency, per_record):
    n, batch = 200, 20
    plan = plan_gradient_release("rsgd", 1.0, 1e-5, n, 50, 1.0, batch_size=batch,
                                 sampling=sampling,
                                 sampling_rate=batch / n if sampling == "poisson" else None)
    (event,) = plan.events
    assert event.adjacency == adjacency
    assert event.sampling_rate == pytest.approx(batch / n)
    noise_std = plan.strategy.noise_std
    assert noise_std == pytest.approx(event.noise_multiplier * per_record / batch)
