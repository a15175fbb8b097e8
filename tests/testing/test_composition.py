"""The independent composition of stages (testing._composition) against closed forms.

The references are computed here: the Gaussian mechanism's exact delta with scipy's normal
law, sums of pure epsilons, and dp-accounting's repeat-and-select bound.
"""

import math

import pytest
from scipy import stats

from geomstats_dp.privacy import GaussianEvent, PureEvent, SelectionEvent, compose
from geomstats_dp.privacy.stages import Stage
from geomstats_dp.testing._composition import (
    independent_epsilon,
    selection_epsilon,
    stages_rdp,
)


def gaussian(std, sensitivity=1.0, rate=1.0, label="step"):
    return Stage(label, 0.0, 0.0, "gaussian", std, sensitivity, sampling_rate=rate)


def laplace(scale, sensitivity=1.0):
    return Stage("laplace", 0.0, 0.0, "laplace", scale, sensitivity)


def exact_gaussian_delta(epsilon, mu):
    """delta(epsilon) of the Gaussian mechanism of sensitivity/std = mu (Balle & Wang
    2018), with scipy's normal law."""
    return (stats.norm.cdf(-epsilon / mu + mu / 2)
            - math.exp(epsilon) * stats.norm.cdf(-epsilon / mu - mu / 2))


@pytest.mark.backend_independent
@pytest.mark.parametrize("std, sensitivity, delta", [(2.0, 1.0, 1e-5), (0.8, 0.5, 1e-3),
                                                     (5.0, 2.0, 1e-6)])
def test_one_gaussian_stage_meets_the_exact_delta(std, sensitivity, delta):
    epsilon = independent_epsilon([gaussian(std, sensitivity)], delta)
    mu = sensitivity / std
    assert exact_gaussian_delta(epsilon, mu) == pytest.approx(delta, rel=1e-6)


@pytest.mark.backend_independent
def test_t_gaussian_stages_compose_as_one_gaussian_dp_mechanism():
    """T stages of noise multiplier z: mu = sqrt(T)/z (Dong, Roth & Su 2022)."""
    stages = [gaussian(3.0, 1.0)] * 16 + [gaussian(2.0, 0.5)] * 9
    mu = math.sqrt(16 / 9 + 9 / 16)
    epsilon = independent_epsilon(stages, 1e-5)
    assert exact_gaussian_delta(epsilon, mu) == pytest.approx(1e-5, rel=1e-6)


@pytest.mark.backend_independent
def test_pure_stages_add_at_delta_zero():
    stages = [laplace(2.0, 1.0), laplace(0.5, 0.25),
              Stage("choice", None, None, "exponential", 0.3, 1.0)]
    assert independent_epsilon(stages, 0.0) == pytest.approx(0.5 + 0.5 + 0.3, rel=1e-12)
    assert independent_epsilon(stages + [gaussian(1.0)], 0.0) == math.inf
    assert independent_epsilon([], 1e-5) == 0.0


@pytest.mark.backend_independent
def test_pld_route_agrees_with_the_closed_forms():
    """Mixed stages go through the PLD: a Gaussian with a negligible pure stage stays at
    its exact Gaussian-DP epsilon, and a pure stage alone costs at most its epsilon."""
    exact = independent_epsilon([gaussian(2.0)] * 4, 1e-5)
    mixed = independent_epsilon([gaussian(2.0)] * 4 + [laplace(1e4)], 1e-5)
    assert exact <= mixed <= exact * 1.01 + 2e-3
    assert 0.9 < independent_epsilon([laplace(1.0)], 1e-5) <= 1.0 + 2e-3


@pytest.mark.backend_independent
def test_subsampling_lowers_the_cost():
    """A batch of rate q costs less than the full batch, and the full batch through the PLD
    (rate 1 with a pure stage) is the Gaussian-DP value."""
    full = independent_epsilon([gaussian(1.5)] * 10, 1e-5)
    sampled = [independent_epsilon([gaussian(1.5, rate=rate)] * 10, 1e-5)
               for rate in (0.05, 0.2, 0.6)]
    assert sampled[0] < sampled[1] < sampled[2] < full


@pytest.mark.backend_independent
@pytest.mark.parametrize("shape", [0.0, 0.5, 1.0, math.inf])
@pytest.mark.parametrize("mean", [1.0, 3.0, 10.0])
def test_selection_event_is_dp_accountings_repeat_and_select(shape, mean):
    """The package's SelectionEvent against dp-accounting's Papernot & Steinke bound, the
    run's RDP composed here from its stages (two candidates, a Laplace score)."""
    event = SelectionEvent(((GaussianEvent(4.0, n_steps=5),), (GaussianEvent(6.0, n_steps=5),)),
                           (PureEvent(0.3),), mean, shape)
    runs = [stages_rdp([gaussian(4.0)] * 5), stages_rdp([gaussian(6.0)] * 5),
            stages_rdp([laplace(1 / 0.3)])]
    assert compose([event], 1e-5).epsilon == pytest.approx(
        selection_epsilon(runs, mean, shape, 1e-5), rel=1e-8)
