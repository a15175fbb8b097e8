"""The tangent releases as specs of public quantities (``mechanisms.tangent``)."""

import math

import numpy as np
import pytest
from geomstats.geometry.euclidean import Euclidean
from geomstats.geometry.hypersphere import Hypersphere

from geomstats_dp.learning.mechanisms import AutoClip, TangentRelease, TwoStageRelease
from geomstats_dp.learning.mechanisms.tangent import (
    LOCALISE_EPSILON_FRACTION,
    STEP_SHARE_RATIO,
    step_shares,
)
from geomstats_dp.optim import SquaredDistanceLoss, canonical_point
from geomstats_dp.optim.losses import PerSampleLoss
from geomstats_dp.privacy import calibrate_gaussian, compose_epsilon

SPHERE = Hypersphere(2)


def _spec(kind, **fields):
    return kind(**{"space": SPHERE, "loss": SquaredDistanceLoss(SPHERE, 1e-6),
                   "n_samples": 40, "epsilon": 1.0, "delta": 1e-5, "steps_epsilon": 1.0,
                   "clip_norm": 1.0, "init_point": canonical_point(SPHERE), **fields})


def test_step_shares_travel_then_grow_fourfold_and_sum_to_one():
    shares = step_shares(3, n_travel=2)
    assert shares.sum() == pytest.approx(1.0)
    assert shares[0] == shares[1] == shares[2]
    assert shares[4] / shares[3] == pytest.approx(STEP_SHARE_RATIO)


def test_one_shot_release_is_one_gaussian_release_at_2c_over_n():
    (event,) = _spec(TangentRelease, clip_norm=1.5).events()
    assert event.noise_multiplier == pytest.approx(calibrate_gaussian(1.0, 1e-5, 1))
    assert event.sensitivity == pytest.approx(2 * 1.5 / 40)
    weighted = _spec(TangentRelease, weights=np.r_[np.full(39, 0.5 / 39), 0.5])
    assert weighted.events()[0].sensitivity == pytest.approx(2 * 40 * 0.5 / 40)


def test_two_stage_steps_compose_to_the_gaussian_share():
    spec = _spec(TwoStageRelease, clip_norm=AutoClip(0.5, 0.1), steps_epsilon=0.9)
    quantiles, steps = spec.events()[:2], spec.events()[2:]
    assert [event.epsilon for event in quantiles] == pytest.approx(
        [0.1, LOCALISE_EPSILON_FRACTION])
    # exact Gaussian-DP composition: 1 / z^2 = sum_k 1 / z_k^2, z of the steps' epsilon
    z = calibrate_gaussian(0.9 - LOCALISE_EPSILON_FRACTION, 1e-5, 1)
    assert sum(event.noise_multiplier ** -2 for event in steps) == pytest.approx(z ** -2)
    assert len(steps) >= 2
    assert compose_epsilon(spec.events(), 1e-5) <= 1.0 + 1e-6


def test_a_loss_whose_samples_are_not_points_is_refused_when_built():
    class Rows(PerSampleLoss):
        def values(self, point, data):
            return ((point - data) ** 2).sum(axis=-1)

        def gradients(self, point, data):
            return 2 * (point - data)

    flat = Euclidean(2)
    with pytest.raises(TypeError, match="method='tangent' releases a tangent mean"):
        _spec(TangentRelease, space=flat, loss=Rows(flat),
              init_point=canonical_point(flat))


def test_more_data_means_less_noise_in_the_noise_ratio():
    ratios = [_spec(TangentRelease, n_samples=n).noise_ratio for n in (40, 400)]
    assert ratios[1] == pytest.approx(ratios[0] / 10, rel=1e-6)
    assert math.isfinite(ratios[0])
