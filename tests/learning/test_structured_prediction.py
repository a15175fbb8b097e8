"""PrivateStructuredPrediction per row: weights, the non-private limit, charging, noise,
errors (the label release: test_structured_prediction_labels.py)."""

import math

import numpy as np
import pytest
from geomstats.geometry.hyperboloid import Hyperboloid

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.datasets.wordnet import poincare_to_hyperboloid
from geomstats_dp.distributions import TangentGaussian
from geomstats_dp.learning import PrivateStructuredPrediction
from geomstats_dp.learning._weighted_distance import nonprivate_prediction
from geomstats_dp.optim.onto_space import HYPERBOLOID_RADIUS
from geomstats_dp.privacy import BudgetExceededError, PrivacyBudget, gdp_epsilon
from tests.conftest import shifted
from tests.optim.spies import TangentGaussianSpy

SPACE = Hyperboloid(2)
CLIP = 3.0  # D: the targets lie within distance ~1.2 of the origin (and of each other)


def _data(n_samples=100, seed=0):
    """Features on [0, 1]; targets on a curve of the hyperbolic plane, plus noise."""
    rng = np.random.default_rng(shifted(seed))
    x = np.sort(rng.uniform(0, 1, n_samples))
    ball = np.stack([0.6 * x - 0.3, 0.3 * np.sin(4 * x)], axis=1)
    ball += 0.02 * rng.standard_normal(ball.shape)
    return x[:, None], poincare_to_hyperboloid(ball)


def _estimator(**params):
    defaults = dict(bandwidth=0.2, regularization=1e-2, epsilon=5.0, delta=1e-5,
                    clip_norm=CLIP, method="rgd", random_state=shifted(0))
    return PrivateStructuredPrediction(SPACE, **{**defaults, **params})


def _karcher(weights, targets, n_iter=300, step=0.5):
    """Independent weighted Frechet mean by gradient steps on geomstats' Hyperboloid."""
    point = to_backend(np.array([1.0, 0.0, 0.0]))
    targets = to_backend(targets)
    for _ in range(n_iter):
        logs = to_numpy(SPACE.metric.log(targets, point))
        point = SPACE.metric.exp(to_backend(step * (weights[:, None] * logs).sum(0)), point)
    return to_numpy(point)


def test_huge_epsilon_gives_the_weighted_frechet_mean_with_negative_weights():
    X, Y = _data()
    X_new = np.array([[0.25]])
    estimator = _estimator(bandwidth=0.08, epsilon=1e9, n_iter=60, step_size=0.8)
    (weights,) = estimator.fit(X, Y).weights(X_new)
    assert weights.min() < -0.01 and weights.sum() == pytest.approx(1.0)  # -0.016 to -0.11 over 200 seed blocks
    (prediction,) = to_numpy(estimator.predict(X_new))
    (event,) = estimator.predict_events_
    expected = _karcher(weights, Y, n_iter=100, step=0.8)
    # the accountant's noise at epsilon = 1e9 is small but not zero: 5 of its sigmas
    assert event.noise_std < 1e-2
    assert float(SPACE.metric.dist(to_backend(prediction), to_backend(expected))) < (
        5 * event.noise_std)
    noiseless = nonprivate_prediction(SPACE, weights, Y, n_iter=60, step_size=0.8)
    assert np.abs(to_numpy(noiseless) - expected).max() < 1e-9  # dist floors at sqrt(2 eps)
    assert bool(SPACE.belongs(to_backend(prediction)))


def test_each_row_is_charged_and_rows_compose():
    X, Y = _data()
    budget = PrivacyBudget(20.0, 1e-4)
    estimator = _estimator(epsilon=4.0, n_iter=20, budget=budget).fit(X, Y)
    assert budget.events == ()  # fit releases nothing, and records no release
    assert not hasattr(estimator, "events_") and not hasattr(estimator, "budget_")
    estimator.predict(np.array([[0.2], [0.4]]))
    assert len(budget.events) == 2 and estimator.predict_events_ == budget.events
    assert estimator.predict_budget_ is budget
    estimator.predict(np.array([[0.6]]))
    assert len(budget.events) == 3 and estimator.predict_events_ == budget.events[2:]
    assert not hasattr(estimator, "events_")  # fit's attributes are left as they are
    # independent accountant: each row is 20 Gaussian steps of multiplier z, i.e.
    # mu = sqrt(20) / z; three rows compose to mu sqrt(3)
    mu = math.sqrt(3 * 20) / estimator.noise_multiplier_
    assert budget.spent_epsilon == pytest.approx(gdp_epsilon(mu, 1e-4), rel=1e-6)
    row_mu = math.sqrt(20) / estimator.noise_multiplier_
    assert gdp_epsilon(row_mu, 1e-5) == pytest.approx(4.0, rel=1e-6)


def test_refused_beyond_the_budget_before_anything_is_computed(monkeypatch):
    X, Y = _data()
    calls = []
    monkeypatch.setattr(TangentGaussian, "sample", lambda *args, **kwargs: calls.append(1))
    budget = PrivacyBudget(1.2, 1e-5)
    estimator = _estimator(epsilon=1.0, n_iter=10, budget=budget).fit(X, Y)
    with pytest.raises(BudgetExceededError):
        estimator.predict(np.array([[0.2], [0.4]]))  # two rows of epsilon 1 > 1.5
    assert budget.events == () and calls == []
    assert not hasattr(estimator, "predict_events_")


def test_noise_drawn_is_the_calibrated_noise(monkeypatch):
    X, Y = _data()
    spy = TangentGaussianSpy(monkeypatch)
    sigmas, draws = spy.sigmas, spy.draws
    X_new = np.array([[0.3], [0.8]])
    estimator = _estimator(epsilon=20.0, n_iter=50).fit(X, Y)
    weights = estimator.weights(X_new)
    estimator.predict(X_new)
    max_weights = np.abs(weights).max(axis=1)
    sensitivities = [event.sensitivity for event in estimator.predict_events_]
    assert np.allclose(sensitivities, 2 * max_weights * CLIP, rtol=1e-12)
    assert np.allclose(estimator.clip_norms_, len(X) * max_weights * CLIP, rtol=1e-12)
    expected = np.repeat(estimator.noise_multiplier_ * 2 * max_weights * CLIP, 50)
    assert np.allclose(sigmas, expected, rtol=1e-12)
    # the draws have the calibrated variance: chi-square with 2 dof per draw on H^2
    squared = sum(float(np.sum(draw**2 * [-1, 1, 1])) / s**2 for draw, s in zip(draws, sigmas))
    dof = 2 * len(draws)
    assert abs(squared - dof) < 5 * math.sqrt(2 * dof)


def test_neighbouring_targets_give_identical_public_outputs():
    X, Y = _data()
    other = Y.copy()
    other[3] = poincare_to_hyperboloid(np.array([0.5, -0.5]))
    X_new = np.array([[0.3], [0.6]])
    runs = [_estimator(n_iter=10).fit(X, targets) for targets in (Y, other)]
    for run in runs:
        run.predict(X_new)
    assert np.array_equal(runs[0].clip_norms_, runs[1].clip_norms_)
    assert runs[0].noise_multiplier_ == runs[1].noise_multiplier_
    assert runs[0].predict_events_ == runs[1].predict_events_


def test_bad_input_raises_before_anything_is_charged():
    X, Y = _data()
    budget = PrivacyBudget(10.0, 1e-4)
    with pytest.raises(ValueError, match="Y must hold one target per row of X"):
        _estimator(budget=budget).fit(X, Y[:-1])
    off = Y.copy()
    off[4, 0] += 1.0
    with pytest.raises(ValueError, match="Y.*4"):
        _estimator(budget=budget).fit(X, off)
    nan_X = X.copy()
    nan_X[2, 0] = np.nan
    with pytest.raises(ValueError, match="X"):
        _estimator(budget=budget).fit(nan_X, Y)
    nan_Y = Y.copy()
    nan_Y[5, 1] = np.nan
    with pytest.raises(ValueError, match="Y"):
        _estimator(budget=budget).fit(X, nan_Y)
    with pytest.raises(ValueError, match="bandwidth"):
        _estimator(bandwidth=0.0, budget=budget).fit(X, Y)
    with pytest.raises(ValueError, match="not fitted"):
        _estimator(budget=budget).predict(X[:1])
    estimator = _estimator(budget=budget).fit(X, Y)
    with pytest.raises(ValueError, match="X"):
        estimator.predict(np.array([[0.1], [np.nan]]))
    with pytest.raises(ValueError, match="1 features"):
        estimator.predict(np.ones((2, 2)))
    with pytest.raises(ValueError, match="X row 1"):
        estimator.predict(np.array([[0.5], [1e6]]))  # kernel weights all underflow
    assert budget.events == ()


@pytest.mark.parametrize("method", ["rsgd", "rsvrg"])
def test_a_noisy_release_stays_on_the_hyperboloid(method):
    """epsilon 1, D = 3: steps of norm ~10 carry the iterates where float64 loses the
    hyperboloid (geomstats' exp then divided by a Minkowski norm rounded to 0, or
    returned NaN, for every seed); each prediction is a finite point of the space, no
    farther from the origin than the ball the loop keeps its points in."""
    X, Y = _data(n_samples=40)
    for seed in range(3):
        estimator = _estimator(method=method, epsilon=1.0, bandwidth=0.3,
                               regularization=None, random_state=shifted(seed),
                               budget=PrivacyBudget(100.0, 1e-3))
        predictions = to_numpy(estimator.fit(X, Y).predict(X[:3]))
        assert np.all(np.isfinite(predictions))
        square_norms = (predictions[:, 1:] ** 2).sum(1) - predictions[:, 0] ** 2
        assert np.all(np.abs(square_norms + 1) <= np.maximum(1.0, 1e-15 * predictions[:, 0]**2))
        assert np.all(predictions[:, 0] <= np.cosh(HYPERBOLOID_RADIUS) * (1 + 1e-12))
