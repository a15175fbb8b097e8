"""The default DP-RGD schedule of PrivateERM against its documented formula, computed here.

``learning._defaults``: T = ceil(log(n^2 epsilon^2 / (d log(1/delta))) / (2 eta)) steps of
the constant step eta = 0.5 s, s = C / sqrt(C^2 + d sigma^2), sigma the standard
deviation of the noise actually drawn at each step.
"""

import math
import warnings

import geomstats.backend as gs
import numpy as np
import pytest
from geomstats.geometry.hypersphere import Hypersphere

from geomstats_dp.learning import PrivateERM
from geomstats_dp.optim import ConstantStep
from geomstats_dp.privacy import PrivacyBudget
from tests.optim.spies import TangentGaussianSpy


def linear_loss(point, sample):
    return -gs.sum(point * sample, axis=-1)


def linear_gradient(point, sample):
    return -sample


@pytest.mark.parametrize("n_samples, epsilon, clip_norm", [
    (400, 1.0, 1.0),   # the noise is small against the clipped gradients: s near 1
    (30, 0.3, 0.5),    # the noise dominates: the step shrinks well below 0.5
])
def test_default_rgd_steps_follow_the_documented_formula(monkeypatch, n_samples, epsilon,
                                                         clip_norm):
    steps = []
    original = ConstantStep.__call__

    def recording_call(schedule, step):
        steps.append((step, original(schedule, step)))
        return steps[-1][1]

    monkeypatch.setattr(ConstantStep, "__call__", recording_call)  # the steps taken
    spy = TangentGaussianSpy(monkeypatch)
    sphere, delta = Hypersphere(2), 1e-5
    rng = np.random.default_rng(0)
    points = rng.normal(size=(n_samples, 3)) + np.array([3.0, 0.0, 0.0])
    points /= np.linalg.norm(points, axis=1, keepdims=True)
    estimator = PrivateERM(sphere, linear_loss, gradient=linear_gradient,
                           gradient_kind="euclidean", epsilon=epsilon, delta=delta,
                           clip_norm=clip_norm, random_state=1,
                           budget=PrivacyBudget(epsilon, delta))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        estimator.fit(points)
    dim = 2
    ratio = (n_samples * epsilon) ** 2 / (dim * math.log(1 / delta))
    expected_steps = math.ceil(max(1.0, math.log(ratio)) / (2 * 0.5))
    assert expected_steps == estimator.n_iter_ == len(spy.sigmas)
    sigma = spy.sigmas[0]
    assert np.allclose(spy.sigmas, sigma, rtol=1e-12)
    expected_step = 0.5 * clip_norm / math.sqrt(clip_norm**2 + dim * sigma**2)
    assert {t for t, _ in steps} == set(range(expected_steps))  # a constant schedule
    np.testing.assert_allclose([eta for _, eta in steps], expected_step, rtol=1e-12)
