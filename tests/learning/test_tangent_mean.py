"""Noisy clipped tangent-mean steps: the statistic, its sensitivity and its event."""

import numpy as np
import pytest
from geomstats.geometry.euclidean import Euclidean

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.learning.mechanisms.tangent_mean import (
    mean_steps_event,
    noisy_mean_steps,
)
from geomstats_dp.privacy.stages import observe_stages


def test_a_step_moves_by_the_mean_of_the_clipped_vectors_plus_its_noise():
    """On R^2 from 0, one step lands on mean_i clip_C(z_i) + xi: the stage's statistic is
    minus that mean (a gradient), its noise is xi, its sensitivity 2C/n."""
    rng = np.random.default_rng(0)
    X = rng.normal(0.0, 2.0, (30, 2))
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    clipped_mean = (X * np.minimum(1.0, 1.0 / norms)).mean(axis=0)
    event = mean_steps_event(3.0, 1.0, 30, 1, "base point")
    stages = []

    def spy(stage):
        stages.append(stage)
        return stage.release()

    with observe_stages(spy):
        point = noisy_mean_steps(Euclidean(2), to_backend(X), to_backend(np.zeros(2)),
                                 event, 1.0, np.random.default_rng(1), "transport")
    (stage,) = stages
    np.testing.assert_allclose(to_numpy(stage.statistic), -clipped_mean, atol=1e-12)
    np.testing.assert_allclose(to_numpy(point), clipped_mean - to_numpy(stage.noise),
                               atol=1e-12)
    assert stage.sensitivity == pytest.approx(2 / 30)
    assert stage.scale == pytest.approx(event.noise_std)
    assert event.noise_multiplier == pytest.approx(3.0)
