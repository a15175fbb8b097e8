"""The agents' local methods: the tangent mean is a full-batch DP-RGD step of unit size at
sensitivity 2C/n_i, calibrated to the agent's guarantee; the gradient methods' events."""

import math

import pytest
from geomstats.geometry.hypersphere import Hypersphere
from scipy import stats

from geomstats_dp.federated.local_methods import LOCAL_METHODS, TangentMean
from geomstats_dp.learning.pca import PCALoss
from geomstats_dp.optim import SquaredDistanceLoss

SIZE, CLIP, STEPS = 50, 2.0, 3


def gaussian_delta(epsilon, mu):
    """delta(epsilon) of a mu-GDP mechanism (Dong, Roth & Su 2022, Corollary 2.13)."""
    return (stats.norm.cdf(-epsilon / mu + mu / 2)
            - math.exp(epsilon) * stats.norm.cdf(-epsilon / mu - mu / 2))


@pytest.mark.backend_independent
@pytest.mark.parametrize(("epsilon", "delta"), [(1.0, 1e-5), (0.3, 1e-6)])
def test_tangent_mean_is_unit_step_rgd_calibrated_to_the_agent_guarantee(epsilon, delta):
    plan, step = LOCAL_METHODS["tangent_mean"].plan(epsilon, delta, SIZE, STEPS, CLIP, None, 2)
    (event,) = plan.events
    assert step(0) == 1.0 and step(5) == 1.0
    assert event.sensitivity == pytest.approx(2 * CLIP / SIZE)
    assert event.n_steps == STEPS and event.sampling_rate == 1.0
    assert plan.strategy.noise_std == pytest.approx(event.noise_multiplier * 2 * CLIP / SIZE)
    mu = math.sqrt(STEPS) / event.noise_multiplier  # K-fold composition of 1/z-GDP
    assert gaussian_delta(epsilon, mu) == pytest.approx(delta, rel=0.02)


@pytest.mark.backend_independent
def test_minibatch_method_charges_2c_over_b_at_the_sampling_rate():
    plan, _ = LOCAL_METHODS["rsgd"].plan(1.0, 1e-5, SIZE, STEPS, CLIP, 10, 2)
    (event,) = plan.events
    assert event.sensitivity == pytest.approx(2 * CLIP / 10)
    assert event.sampling_rate == pytest.approx(10 / SIZE)
    assert plan.strategy.noise_std == pytest.approx(event.noise_multiplier * 2 * CLIP / 10)


@pytest.mark.backend_independent
def test_tangent_mean_refuses_another_loss_and_another_step():
    method = TangentMean()
    method.check_loss(SquaredDistanceLoss(Hypersphere(2)))
    with pytest.raises(TypeError, match="loss must be the squared distance.*PCALoss"):
        method.check_loss(PCALoss(Hypersphere(2), data_norm=1.0))
    with pytest.raises(ValueError, match="step_size must be None, got 0.5"):
        method.plan(1.0, 1e-5, SIZE, STEPS, CLIP, None, 2, step_size=0.5)
