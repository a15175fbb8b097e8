"""PrivateStructuredPrediction on a sphere: the extrinsic label release (method "auto").

References are computed here in plain numpy: kernel-ridge weights alpha(x) = (K + gamma
I)^(-1) K_x and a weighted circular mean atan2(sum_i alpha_i sin t_i, sum_i alpha_i cos
t_i), or the constant private mean (the noisy mean of the targets, projected).
"""

import numpy as np
import pytest
from geomstats.geometry.hyperboloid import Hyperboloid
from geomstats.geometry.hypersphere import Hypersphere
from scipy.spatial.distance import pdist

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.learning import PrivateStructuredPrediction
from geomstats_dp.privacy import calibrate_gaussian
from tests.conftest import shifted

CIRCLE = Hypersphere(1)
DELTA = 1e-5


def _around_the_circle(n_samples, seed, spread=0.3):
    """Features x on [0, 1]; directions 2 pi x + noise: all around the circle."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 1, n_samples)
    angles = 2 * np.pi * x + spread * rng.standard_normal(n_samples)
    return x[:, None], angles


def _circle(angles):
    return np.stack([np.cos(angles), np.sin(angles)], axis=1)


def _angles(points):
    points = to_numpy(points)
    return np.arctan2(points[:, 1], points[:, 0])


def _gap(a, b):
    """Geodesic distance on the circle between angles."""
    return np.abs(np.angle(np.exp(1j * (a - b))))


def _kernel_regression(X, angles, X_new, bandwidth, regularization):
    """Non-private kernel regression: ridge weights and a weighted circular mean."""
    kernel = np.exp(-((X - X.T) ** 2) / (2 * bandwidth**2))
    cross = np.exp(-((X - X_new.T) ** 2) / (2 * bandwidth**2))
    alpha = np.linalg.solve(kernel + regularization * np.eye(len(X)), cross).T
    return np.arctan2(alpha @ np.sin(angles), alpha @ np.cos(angles))


def test_auto_picks_the_extrinsic_release_on_the_sphere_only():
    X, angles = _around_the_circle(40, 0)
    fitted = PrivateStructuredPrediction(CIRCLE, random_state=0).fit(X, _circle(angles))
    assert fitted.method_ == "extrinsic" and fitted.labels_.shape == (40, 2)
    events = fitted.events_
    assert len(events) == 2 and events[0].sensitivity == pytest.approx(2 / 40)
    with pytest.raises(ValueError, match="method='labels' needs clip_norm"):
        PrivateStructuredPrediction(Hyperboloid(2)).fit(X, np.tile([1.0, 0, 0], (40, 1)))
    with pytest.raises(ValueError, match="method='extrinsic' needs geomstats' unit sphere"):
        PrivateStructuredPrediction(Hyperboloid(2), method="extrinsic").fit(
            X, np.tile([1.0, 0, 0], (40, 1)))


@pytest.mark.parametrize("epsilon", [1e4, 1e6])
def test_a_huge_epsilon_gives_kernel_regression_with_a_circular_mean(epsilon):
    """Directions all around the circle: the chart at one base point would wrap (the
    release of method "labels" lands about 0.5 rad from the truth here)."""
    X, angles = _around_the_circle(200, 1)
    X_new = np.linspace(0.02, 0.98, 25)[:, None]
    estimator = PrivateStructuredPrediction(CIRCLE, epsilon=epsilon, delta=DELTA,
                                            random_state=0)
    points = to_numpy(estimator.fit(to_backend(X), to_backend(_circle(angles)))
                      .predict(to_backend(X_new)))
    np.testing.assert_allclose(np.linalg.norm(points, axis=1), 1.0, rtol=1e-12)
    predicted = _angles(points)
    bandwidth = float(np.median(pdist(X)))  # the public default: median distance
    expected = _kernel_regression(X, angles, X_new, bandwidth, 1e-3)
    assert np.max(_gap(predicted, expected)) < 0.02
    truth = 2 * np.pi * X_new[:, 0]
    assert np.mean(_gap(predicted, truth)) == pytest.approx(
        np.mean(_gap(expected, truth)), abs=5e-3)


def test_predictions_are_the_documented_post_processing_of_the_release():
    """mu~ + K_x^T (K + gamma I)^(-1) (y~ - mu~), projected, with gamma = (d + 1) sigma^2 /
    (1 - |mu~|^2): recomputed here from the released labels_ and mean_ alone."""
    X, angles = _around_the_circle(80, 3, spread=0.6)
    X_new = np.linspace(0, 1, 7)[:, None]
    model = PrivateStructuredPrediction(CIRCLE, epsilon=2.0, bandwidth=0.2,
                                        random_state=0).fit(X, _circle(angles))
    labels, mean = to_numpy(model.labels_), to_numpy(model.mean_)
    sigma = 2 * model.events_[1].noise_multiplier
    gamma = 2 * sigma**2 / np.clip(1 - mean @ mean, 1e-3, 1)
    assert model.regularization_ == pytest.approx(2 * sigma**2)
    kernel = np.exp(-((X - X.T) ** 2) / (2 * 0.2**2))
    cross = np.exp(-((X_new - X.T) ** 2) / (2 * 0.2**2))
    fitted = mean + cross @ np.linalg.solve(kernel + gamma * np.eye(len(X)), labels - mean)
    expected = fitted / np.linalg.norm(fitted, axis=1, keepdims=True)
    np.testing.assert_allclose(to_numpy(model.predict(X_new)), expected, rtol=1e-8,
                               atol=1e-10)
    np.testing.assert_allclose(to_numpy(model.base_point_), mean / np.linalg.norm(mean))


def _constant_private_mean(targets, epsilon, rng):
    """The one-shot private mean of unit vectors (sensitivity 2 / n), projected."""
    z = calibrate_gaussian(epsilon, DELTA, 1)
    mean = targets.mean(axis=0) + 2 * z / len(targets) * rng.standard_normal(2)
    return np.arctan2(mean[1], mean[0])


@pytest.mark.slow
@pytest.mark.backend_independent
@pytest.mark.parametrize("epsilon", [0.1, 0.3, 1.0])
def test_never_below_the_constant_private_mean(epsilon):
    """Where the features say little and the noise is large, the default falls back to
    the constant private mean (shrunk toward it, the mean released in the same ledger
    with the larger share): over 30 fits its error is not above the constant mean's
    beyond two standard errors of the paired difference."""
    X_new = np.linspace(0, 1, 50)[:, None]
    differences = []
    for seed in range(30):
        rng = np.random.default_rng(shifted(seed))
        X = rng.uniform(0, 1, (120, 1))
        angles = 1.0 + 0.4 * np.sin(2 * np.pi * X[:, 0]) + 0.6 * rng.standard_normal(120)
        truth = 1.0 + 0.4 * np.sin(2 * np.pi * X_new[:, 0])
        model = PrivateStructuredPrediction(CIRCLE, epsilon=epsilon, delta=DELTA,
                                            random_state=shifted(seed))
        predicted = _angles(model.fit(X, _circle(angles)).predict(X_new))
        constant = _constant_private_mean(_circle(angles), epsilon, rng)
        differences.append(np.mean(_gap(predicted, truth)) - np.mean(_gap(constant, truth)))
    differences = np.array(differences)
    standard_error = differences.std(ddof=1) / np.sqrt(len(differences))
    assert differences.mean() <= 2 * standard_error


@pytest.mark.backend_independent
def test_the_features_are_used_when_the_noise_allows():
    """At epsilon 10 on 400 targets the default beats the constant answer by far."""
    X, angles = _around_the_circle(400, shifted(2))
    X_new = np.linspace(0.02, 0.98, 50)[:, None]
    model = PrivateStructuredPrediction(CIRCLE, epsilon=10.0, random_state=shifted(2))
    predicted = _angles(model.fit(X, _circle(angles)).predict(X_new))
    truth = 2 * np.pi * X_new[:, 0]
    assert np.mean(_gap(predicted, truth)) < 0.5  # a constant: about pi / 2 on average
