"""PrivateStructuredPrediction's default release: the targets' log-coordinates, once."""

import math
import warnings

import numpy as np
import pytest
from geomstats.geometry.hyperboloid import Hyperboloid
from scipy.spatial.distance import pdist
from sklearn.kernel_ridge import KernelRidge

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.datasets.wordnet import poincare_to_hyperboloid
from geomstats_dp.learning import NoiseDominatesWarning, PrivateStructuredPrediction
from geomstats_dp.privacy import BudgetExceededError, PrivacyBudget, gdp_epsilon
from tests.optim.spies import TangentGaussianSpy

SPACE = Hyperboloid(2)
ORIGIN = np.array([1.0, 0.0, 0.0])
CLIP = 3.0  # D: the targets lie within distance ~1.2 of the origin


def _data(n_samples=100, seed=0):
    """Features on [0, 1]; targets on a curve of the hyperbolic plane, plus noise."""
    rng = np.random.default_rng(seed)
    x = np.sort(rng.uniform(0, 1, n_samples))
    ball = np.stack([0.6 * x - 0.3, 0.3 * np.sin(4 * x)], axis=1)
    ball += 0.02 * rng.standard_normal(ball.shape)
    return x[:, None], poincare_to_hyperboloid(ball)


def _origin_logs(targets):
    """Log at the origin of H^2 in closed form: d(o, y) (y - cosh(d) o) / sinh(d)."""
    dist = np.arccosh(np.maximum(targets[:, 0], 1.0))
    return (dist / np.sinh(dist))[:, None] * (targets - np.cosh(dist)[:, None] * ORIGIN)


def _origin_exp(vectors):
    """Exp at the origin of H^2 in closed form: cosh|v| o + sinh|v| v / |v|."""
    norms = np.linalg.norm(vectors[:, 1:], axis=1)
    return (np.cosh(norms)[:, None] * ORIGIN
            + (np.sinh(norms) / norms)[:, None] * vectors)


def test_huge_epsilon_gives_kernel_ridge_regression_of_the_log_coordinates():
    X, Y = _data()
    X_new = np.array([[0.05], [0.37], [0.8]])
    estimator = PrivateStructuredPrediction(SPACE, bandwidth=0.2, regularization=0.05,
                                            epsilon=1e9, clip_norm=CLIP, base_point=ORIGIN,
                                            random_state=0)
    predictions = to_numpy(estimator.fit(X, Y).predict(X_new))
    logs = _origin_logs(Y)
    mean = logs.sum(axis=0) / (len(logs) + 0.05)  # the constant's prior: gamma
    ridge = KernelRidge(alpha=0.05, kernel="rbf", gamma=1 / (2 * 0.2**2)).fit(X, logs - mean)
    expected = _origin_exp(mean + ridge.predict(X_new))
    # the accountant's noise at epsilon = 1e9 is small but not zero: it reaches a
    # prediction through the ridge weights beta(x) and the mean, 6 of its sigmas
    (event,) = estimator.events_
    distances = ((X[:, None, 0] - X[None, :, 0]) / 0.2) ** 2
    gram = np.exp(-distances / 2) + 0.05 * np.eye(len(X))
    cross = np.exp(-((X[:, None, 0] - X_new[None, :, 0]) / 0.2) ** 2 / 2)
    beta = np.linalg.solve(gram, cross)
    spread = event.noise_std * (np.linalg.norm(beta, axis=0) + 1)
    gaps = to_numpy(SPACE.metric.dist(to_backend(predictions), to_backend(expected)))
    assert np.all(gaps < 6 * math.sqrt(2) * spread) and event.noise_std < 1e-3
    assert to_numpy(SPACE.belongs(to_backend(predictions))).all()


def test_cost_is_the_same_for_one_and_a_hundred_predictions():
    X, Y = _data()
    costs = []
    for n_rows in (1, 100):
        budget = PrivacyBudget(2.0, 1e-4)
        estimator = PrivateStructuredPrediction(SPACE, epsilon=1.0, clip_norm=CLIP,
                                                budget=budget, random_state=0).fit(X, Y)
        spent = budget.spent_epsilon
        predictions = estimator.predict(np.linspace(0, 1, n_rows)[:, None])
        assert predictions.shape == (n_rows, 3)
        assert budget.spent_epsilon == spent and budget.events == estimator.events_
        costs.append(spent)
    mu = math.sqrt(sum(1 / event.noise_multiplier**2 for event in estimator.events_))
    assert len(estimator.events_) == 2  # the private base point and the coordinates
    assert costs[0] == costs[1] == pytest.approx(gdp_epsilon(mu, 1e-4), rel=1e-6)


def test_refused_beyond_the_budget_before_the_targets_are_read(monkeypatch):
    X, Y = _data()
    spy = TangentGaussianSpy(monkeypatch)
    budget = PrivacyBudget(0.5, 1e-5)
    estimator = PrivateStructuredPrediction(SPACE, epsilon=1.0, clip_norm=CLIP,
                                            budget=budget)
    with pytest.raises(BudgetExceededError):
        estimator.fit(X, np.full_like(Y, np.nan))  # not even read: no value error
    assert budget.events == () and spy.sigmas == []
    assert not hasattr(estimator, "method_")


def test_noise_drawn_is_the_calibrated_noise(monkeypatch, seed_shift=0):
    X, Y = _data(n_samples=400)
    spy = TangentGaussianSpy(monkeypatch)
    estimator = PrivateStructuredPrediction(SPACE, epsilon=2.0, delta=1e-5, clip_norm=CLIP,
                                            base_point=ORIGIN,
                                            random_state=7 + seed_shift).fit(X, Y)
    (event,) = estimator.events_
    # independent accountant: one Gaussian release of multiplier z is sqrt(1)/z-GDP
    assert gdp_epsilon(1 / event.noise_multiplier, 1e-5) == pytest.approx(2.0, rel=1e-6)
    assert event.sensitivity == 2 * CLIP
    assert spy.sigmas == [pytest.approx(event.noise_multiplier * 2 * CLIP, rel=1e-12)]
    noise = to_numpy(estimator.labels_) - _origin_logs(Y)
    assert np.allclose(noise[:, 0], 0.0, atol=1e-9)  # tangent at the origin
    # 800 coordinates of variance sigma^2: chi-square with 800 degrees of freedom
    dof = noise[:, 1:].size
    statistic = float(np.sum(noise[:, 1:] ** 2)) / spy.sigmas[0] ** 2
    assert abs(statistic - dof) < 5 * math.sqrt(2 * dof)


def test_far_and_non_finite_targets_are_clipped_to_the_radius():
    X, Y = _data()
    far = Y.copy()
    far[3] = poincare_to_hyperboloid(np.array([0.999, 0.0]))  # d(o, y) ~ 7.6 > D
    estimator = PrivateStructuredPrediction(SPACE, epsilon=1e9, clip_norm=CLIP,
                                            base_point=ORIGIN, random_state=0).fit(X, far)
    logs = to_numpy(estimator.labels_)
    assert np.linalg.norm(logs[3, 1:]) == pytest.approx(CLIP, abs=10 * estimator.events_[0].noise_std)


def test_neighbouring_targets_give_identical_public_outputs():
    X, Y = _data()
    other = Y.copy()
    other[3] = poincare_to_hyperboloid(np.array([0.5, -0.5]))
    runs = [PrivateStructuredPrediction(SPACE, epsilon=1.0, clip_norm=CLIP,
                                        random_state=0).fit(X, targets)
            for targets in (Y, other)]
    public = ("method_", "bandwidth_", "regularization_", "noise_multiplier_", "events_",
              "n_features_in_")
    for name in public:
        assert getattr(runs[0], name) == getattr(runs[1], name), name


def test_public_defaults_of_bandwidth_and_regularization():
    X, Y = _data()
    estimator = PrivateStructuredPrediction(SPACE, epsilon=1.0, clip_norm=CLIP).fit(X, Y)
    assert estimator.bandwidth_ == pytest.approx(np.median(pdist(X)), rel=1e-12)
    sigma = estimator.noise_multiplier_ * 2 * CLIP
    assert estimator.regularization_ == pytest.approx(3 * 2 * sigma**2 / CLIP**2, rel=1e-12)


def test_empty_prediction_and_bad_input():
    X, Y = _data()
    estimator = PrivateStructuredPrediction(SPACE, epsilon=1.0, clip_norm=CLIP)
    with pytest.raises(ValueError, match="not fitted"):
        estimator.predict(X[:1])
    with pytest.raises(ValueError, match="clip_norm"):
        PrivateStructuredPrediction(SPACE, epsilon=1.0).fit(X, Y)
    with pytest.raises(ValueError, match="method"):
        PrivateStructuredPrediction(SPACE, method="label", clip_norm=CLIP).fit(X, Y)
    estimator.fit(X, Y)
    assert estimator.predict(np.zeros((0, 1))).shape == (0, 3)
    with pytest.raises(ValueError, match="1 features"):
        estimator.predict(np.ones((2, 2)))


def test_noise_that_swamps_the_targets_warns_from_public_quantities():
    X, Y = _data()
    with pytest.warns(NoiseDominatesWarning):
        weak = PrivateStructuredPrediction(SPACE, epsilon=0.1, clip_norm=CLIP,
                                           random_state=0).fit(X, Y)
    assert weak.noise_ratio_ == pytest.approx(weak.regularization_ / len(X))
    assert weak.noise_ratio_ > 1
    with warnings.catch_warnings():
        warnings.simplefilter("error", NoiseDominatesWarning)
        strong = PrivateStructuredPrediction(SPACE, epsilon=50.0, clip_norm=CLIP).fit(X, Y)
    assert strong.noise_ratio_ < 1


@pytest.mark.parametrize("seed", range(3))
def test_private_base_point_stays_within_the_clip_norm_whatever_the_noise(seed_shift, seed):
    # at epsilon 0.1 the base point's noise has norm about 8 here (sigma_0 about 6): the
    # unclipped step put the base point up to 10^8 from the origin, numerically off the
    # hyperboloid, and the coordinates' draw there raised for about 1 fit in 12
    X, Y = _data()
    distances = []
    for run in range(12):
        estimator = PrivateStructuredPrediction(SPACE, epsilon=0.1, clip_norm=CLIP,
                                                random_state=1000 * seed_shift + 12 * seed + run)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NoiseDominatesWarning)
            estimator.fit(X, Y)
        assert np.isfinite(to_numpy(estimator.labels_)).all()
        distances.append(float(to_numpy(SPACE.metric.dist(
            estimator.base_point_, to_backend(ORIGIN)))))
    assert max(distances) <= CLIP * (1 + 1e-9)
    assert np.isclose(distances, CLIP, rtol=1e-6).sum() >= 6  # the outer clip acted


def test_predictions_stay_within_the_public_radius_whatever_the_noise():
    X, Y = _data()
    estimator = PrivateStructuredPrediction(SPACE, epsilon=1e-3, regularization=1e-2,
                                            clip_norm=CLIP, base_point=ORIGIN,
                                            random_state=0).fit(X, Y)
    predictions = to_numpy(estimator.predict(np.linspace(0, 1, 20)[:, None]))
    assert np.isfinite(predictions).all()
    distances = to_numpy(SPACE.metric.dist(to_backend(predictions), to_backend(ORIGIN)))
    assert distances.max() <= CLIP * (1 + 1e-6)


def test_private_base_point_is_the_noisy_clipped_tangent_mean(monkeypatch):
    X, Y = _data(n_samples=200)
    spy = TangentGaussianSpy(monkeypatch)
    estimator = PrivateStructuredPrediction(SPACE, epsilon=1.0, delta=1e-5, clip_norm=CLIP,
                                            random_state=3).fit(X, Y)
    base_event, label_event = estimator.events_
    # the two releases split mu^2 = 1 / z^2 of one (1, 1e-5) Gaussian release: 10% / 90%
    mu = math.sqrt(1 / base_event.noise_multiplier**2 + 1 / label_event.noise_multiplier**2)
    assert gdp_epsilon(mu, 1e-5) == pytest.approx(1.0, rel=1e-6)
    assert 1 / base_event.noise_multiplier**2 == pytest.approx(0.1 * mu**2, rel=1e-9)
    assert base_event.sensitivity == pytest.approx(2 * CLIP / len(X))
    assert spy.sigmas == [pytest.approx(base_event.noise_std), pytest.approx(
        label_event.noise_std)]
    # b = Exp_o(mean of the targets' logs + the first draw), all in closed form here
    expected = _origin_exp((_origin_logs(Y).mean(axis=0) + to_numpy(spy.draws[0]))[None])
    assert np.allclose(to_numpy(estimator.base_point_), expected[0], atol=1e-9)


def _scaled_target(theta, scale):
    """scale x the point at distance theta from the origin along the first axis.

    Off the hyperboloid for scale != 1; its log at the origin, theta / sinh(theta)
    (scale y - cosh(theta) o), has the normal part theta coth(theta) (scale - 1) o, and
    a Minkowski norm theta / sinh(theta) sqrt(cosh^2(theta) (2 scale - 1) - scale^2)
    that vanishes at scale ~ 2 cosh^2(theta): a huge log of norm ~ 0 passes any clip.
    """
    return scale * np.array([np.cosh(theta), np.sinh(theta), 0.0])


def test_the_clipped_statistic_is_tangent_and_within_the_clip_norm_for_any_log():
    """Issue 29, finding 2 (the attack): the log at the origin of 201.7 y (y at distance
    3) has Minkowski norm ~ 0 and a normal part of 600; on the old code it passed the
    clip and the released block moved by 571 (the noise is tangent, so that part was
    released exactly, in every seed) where the sensitivity is 2D. Made tangent before
    its norm is taken, the statistic stays within D of 0, whatever the log."""
    from geomstats_dp.learning.mechanisms.tangent_labels import TangentLabelRelease

    _, Y = _data(n_samples=20)
    mechanism = TangentLabelRelease(SPACE, len(Y), clip_norm=2.0, epsilon=1.0, delta=1e-5,
                                    base_point=ORIGIN)  # built alone: no estimator
    other = Y.copy()
    other[3] = _scaled_target(3.0, 2 * np.cosh(3.0) ** 2 - 1)
    blocks = [to_numpy(mechanism._clipped_logs(targets, to_backend(ORIGIN)))
              for targets in (Y, other)]
    moved = blocks[1] - blocks[0]
    assert np.abs(blocks[1][:, 0]).max() < 1e-12  # tangent at the origin: no normal part
    # at the origin the metric on tangent vectors is the Euclidean one of the last axes
    assert np.linalg.norm(moved) <= 2 * 2.0 * (1 + 1e-12)
    assert not np.delete(moved, 3, axis=0).any()  # only the replaced row moves


@pytest.mark.parametrize("base_point", [ORIGIN, None])
@pytest.mark.parametrize("target, message", [
    (_scaled_target(3.0, 2 * np.cosh(3.0) ** 2 - 1),
     r"^Y holds 1 points not on Hyperboloid \(atol=1e-06\): indices \[3\]$"),
    (np.array([np.nan, 0.0, 0.0]), r"^Y holds a non-finite value at index \(3, 0\)$"),
    (np.array([1.0, np.inf, 0.0]), r"^Y holds a non-finite value at index \(3, 1\)$"),
])
def test_targets_off_the_space_or_not_finite_are_refused_before_any_noise_or_charge(
        monkeypatch, base_point, target, message):
    """Issue 29, finding 2: the label release checks its targets as the per-row methods
    do (same error, the row named), once the budget is checked: nothing drawn, nothing
    charged, the estimator left unfitted."""
    X, Y = _data(n_samples=20)
    Y[3] = target
    spy = TangentGaussianSpy(monkeypatch)
    budget = PrivacyBudget(2.0, 1e-4)
    estimator = PrivateStructuredPrediction(SPACE, epsilon=1.0, clip_norm=CLIP,
                                            base_point=base_point, budget=budget,
                                            random_state=0)
    with pytest.raises(ValueError, match=message):
        estimator.fit(X, Y)
    assert budget.events == () and budget.spent_epsilon == 0 and spy.sigmas == []
    assert not hasattr(estimator, "method_")
    rows = PrivateStructuredPrediction(SPACE, epsilon=1.0, clip_norm=CLIP, method="rgd")
    with pytest.raises(ValueError, match=message):
        rows.fit(X, Y)


def test_a_target_off_the_space_within_the_tolerance_releases_tangent_coordinates():
    """A target accepted by the membership check (off by 4e-7, by rounding) has a log
    with a normal part at b; projected before the clip, the released block has none
    (the noise is tangent: a normal part would be released without noise)."""
    X, Y = _data(n_samples=20)
    Y[3] = _scaled_target(3.0, 1 + 4e-7)
    for base_point in (ORIGIN, None):
        estimator = PrivateStructuredPrediction(SPACE, epsilon=1.0, clip_norm=CLIP,
                                                base_point=base_point,
                                                random_state=0).fit(X, Y)
        base = to_backend(to_numpy(estimator.base_point_))
        normal = to_numpy(SPACE.embedding_space.metric.inner_product(
            estimator.labels_, base))
        assert np.abs(normal).max() < 1e-12, base_point


def test_per_row_methods_refuse_a_start_off_the_space_at_fit():
    """Issue 29, finding 3: the rows' init_point is checked at fit, as every estimator
    checks its start (it was first read at predict)."""
    X, Y = _data(n_samples=20)
    estimator = PrivateStructuredPrediction(SPACE, epsilon=1.0, clip_norm=CLIP,
                                            method="rgd", init_point=2 * ORIGIN)
    with pytest.raises(ValueError, match=r"^init_point is not on Hyperboloid"):
        estimator.fit(X, Y)
    assert not hasattr(estimator, "method_")
