"""The calibration of a gradient run and the one home of its formulas
(``learning._gradient_plan``)."""

import numpy as np
import pytest

from geomstats_dp.learning._gradient_plan import (
    FAMILIES,
    GRADIENT_METHODS,
    clipped_sum_sensitivity,
    n_manifold_steps,
    plan_gradient_release,
)
from geomstats_dp.privacy import calibrate_gaussian

pytestmark = pytest.mark.backend_independent


def _clipped_mean(vectors, clip_norm, denominator):
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors * np.minimum(1, clip_norm / norms)).sum(axis=0) / denominator


@pytest.mark.parametrize(("adjacency", "per_record"), [("replace_one", 2.0),
                                                       ("add_remove", 1.0)])
def test_sensitivity_is_the_largest_move_of_a_clipped_mean(adjacency, per_record):
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((10, 3)) * 5
    clip_norm, n = 1.5, len(vectors)
    bound = clipped_sum_sensitivity(clip_norm, n, adjacency=adjacency)
    assert bound == pytest.approx(per_record * clip_norm / n)
    # the worst neighbour: a record at the bound replaced by its opposite, or removed
    worst = vectors.copy()
    worst[0] = -vectors[0]
    neighbour = worst if adjacency == "replace_one" else vectors[1:]
    moved = np.linalg.norm(_clipped_mean(vectors, clip_norm, n)
                           - _clipped_mean(neighbour, clip_norm, n))
    assert moved == pytest.approx(bound)
    for _ in range(50 if adjacency == "replace_one" else 0):  # replacements: no more
        other = vectors.copy()
        other[0] = rng.standard_normal(3) * 100
        assert np.linalg.norm(_clipped_mean(vectors, clip_norm, n)
                              - _clipped_mean(other, clip_norm, n)) <= bound + 1e-12


def test_sensitivity_scales_with_the_weight_factor_and_the_multiplier():
    assert clipped_sum_sensitivity(2.0, 8, factor=3.0) == pytest.approx(2 * 2 * 3 / 8)
    assert clipped_sum_sensitivity(2.0, 8, multiplier=5.0) == pytest.approx(5 * 4 / 8)


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
