"""LogisticRelease (learning.mechanisms.logistic): without noise it converges to
scikit-learn's regularised multinomial logistic regression; each step's stage states the
noise and the sensitivity 2G of its ledger event."""

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from geomstats_dp.learning.mechanisms.logistic import LogisticRelease
from geomstats_dp.privacy.stages import observe_stages


def _rows(n_samples=90, seed=0):
    """Three classes of 2-d rows of norm below 1 (nothing clipped to the unit ball)."""
    rng = np.random.default_rng(seed)
    codes = np.repeat([0, 1, 2], n_samples // 3)
    centres = np.array([[0.4, 0.0], [-0.2, 0.35], [-0.2, -0.35]])
    rows = centres[codes] + 0.15 * rng.standard_normal((n_samples, 2))
    return rows / np.maximum(1.0, 1.01 * np.linalg.norm(rows, axis=1, keepdims=True)), codes


def _release(noise_multiplier, n_iter, **overrides):
    settings = {"n_samples": 90, "n_classes": 3, "n_features": 2, "gradient_clip": 10.0,
                "regularization": 0.05, "n_iter": n_iter, "step_size": 1.0,
                "noise_multiplier": noise_multiplier}
    return LogisticRelease(**{**settings, **overrides})


def test_noiseless_release_is_the_regularised_logistic_regression():
    """G large enough that no gradient is clipped: the full-batch descent minimises
    (1/n) sum CE + lambda/2 ||W||^2, scikit-learn's objective with C = 1 / (n lambda)."""
    rows, codes = _rows()
    fitted = _release(0.0, 600).release((rows, codes), None, np.random.default_rng(0))
    reference = LogisticRegression(C=1 / (90 * 0.05), tol=1e-12, max_iter=10_000).fit(
        rows, codes)
    # softmax is invariant to a common shift of the classes' parameters
    np.testing.assert_allclose(fitted["coef_"] - fitted["coef_"].mean(axis=0),
                               reference.coef_ - reference.coef_.mean(axis=0), atol=1e-3)
    np.testing.assert_allclose(fitted["intercept_"] - fitted["intercept_"].mean(),
                               reference.intercept_ - reference.intercept_.mean(), atol=1e-3)


def test_each_step_releases_a_stage_at_the_events_noise():
    rows, codes = _rows()
    mechanism = _release(1.5, 4, gradient_clip=0.5)
    stages = []

    def keep(stage):
        stages.append(stage)
        return stage.release()

    with observe_stages(keep):
        mechanism.release((rows, codes), None, np.random.default_rng(0))
    (event,) = mechanism.events()
    assert event.sensitivity == pytest.approx(1.0) and event.n_steps == 4
    assert event.noise_multiplier == pytest.approx(1.5)
    assert len(stages) == 4
    for stage in stages:
        assert stage.sensitivity == pytest.approx(1.0)
        assert stage.scale == pytest.approx(1.5 * 1.0)
        assert stage.dim == 3 * 3
