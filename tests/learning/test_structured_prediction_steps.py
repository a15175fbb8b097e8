"""PrivateStructuredPrediction's default DP-RGD step, against its documented formula.

The docstring: the constant step 1/2 shrunk by 1 / sqrt(1 + d (2 z max_i |a_i(x)|)^2), z the
noise multiplier, d the dimension, a(x) the normalised kernel-ridge weights of the row.
"""

import math

import numpy as np
from geomstats.geometry.hyperboloid import Hyperboloid

from geomstats_dp.datasets.wordnet import poincare_to_hyperboloid
from geomstats_dp.learning import PrivateStructuredPrediction, structured_prediction
from geomstats_dp.privacy import PrivacyBudget


def _steps_taken(monkeypatch, estimator, X_new):
    """The step_size each row's gradient release runs with, in row order."""
    steps = []
    original = structured_prediction.run_release

    def run_release(mechanism, *args, **kwargs):
        steps.append(mechanism.step_size)
        return original(mechanism, *args, **kwargs)

    monkeypatch.setattr(structured_prediction, "run_release", run_release)
    estimator.predict(X_new)
    return steps


def test_default_rgd_step_is_the_documented_noise_aware_constant(monkeypatch):
    rng = np.random.default_rng(0)
    X = np.sort(rng.uniform(0, 1, 40))[:, None]
    Y = poincare_to_hyperboloid(np.stack([0.5 * X[:, 0] - 0.25, 0.1 * np.cos(3 * X[:, 0])], 1))
    space = Hyperboloid(2)
    estimator = PrivateStructuredPrediction(
        space, bandwidth=0.1, regularization=1e-2, epsilon=1.0, delta=1e-5, clip_norm=1.0,
        n_iter=5, method="rgd", random_state=0, budget=PrivacyBudget(10.0, 1e-3),
    ).fit(X, Y)
    X_new = np.array([[0.02], [0.5]])  # an edge row and a central row: different max |a_i|
    steps = _steps_taken(monkeypatch, estimator, X_new)
    max_weights = np.abs(estimator.weights(X_new)).max(axis=1)
    z = estimator.noise_multiplier_
    expected = [0.5 / math.sqrt(1 + 2 * (2 * z * a) ** 2) for a in max_weights]
    values = [step(0) for step in steps]
    assert all(step(0) == step(4) for step in steps)  # constant
    np.testing.assert_allclose(values, expected, rtol=1e-12)
    assert abs(values[0] - values[1]) > 1e-3  # the rows' steps differ, as their weights do
    assert max(values) < 0.5  # noise-aware: shrunk below the non-private step


def test_a_given_step_size_is_used_unchanged(monkeypatch):
    rng = np.random.default_rng(1)
    X = np.sort(rng.uniform(0, 1, 30))[:, None]
    Y = poincare_to_hyperboloid(np.stack([0.4 * X[:, 0] - 0.2, 0.0 * X[:, 0]], 1))
    estimator = PrivateStructuredPrediction(
        Hyperboloid(2), bandwidth=0.2, epsilon=1.0, delta=1e-5, clip_norm=1.0, n_iter=3,
        step_size=0.3, method="rgd", random_state=0, budget=PrivacyBudget(10.0, 1e-3),
    ).fit(X, Y)
    assert _steps_taken(monkeypatch, estimator, np.array([[0.4]])) == [0.3]
