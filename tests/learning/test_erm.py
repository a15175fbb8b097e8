"""PrivateERM with custom losses: correctness, calibration, errors, public outputs."""

import math
import warnings

import geomstats.backend as gs
import numpy as np
import pytest
from geomstats.geometry.euclidean import Euclidean
from geomstats.geometry.hypersphere import Hypersphere
from sklearn.base import clone

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.learning import NoiseDominatesWarning, PrivateERM
from geomstats_dp.optim import CallableLoss, PairedSamples, PerSampleLoss
from geomstats_dp.privacy import PrivacyBudget, gdp_epsilon
from tests.conftest import shifted
from tests.learning.public_outputs import public_outputs
from tests.optim.spies import TangentGaussianSpy

AUTODIFF = gs.__name__.rsplit(".", 1)[-1] in ("autograd", "pytorch")


def linear_loss(point, sample):
    """f(w; z) = -<w, z> on the sphere: minimiser mean(z) / |mean(z)|."""
    return -gs.sum(point * sample)


def linear_gradient(point, sample):
    """Euclidean gradient of ``linear_loss``."""
    return -sample


def _directions(n_samples, seed, dim=3, spread=0.3):
    """Unit vectors scattered around e_0."""
    rng = np.random.default_rng(seed)
    raw = np.eye(dim)[0] + spread * rng.standard_normal((n_samples, dim))
    return raw / np.linalg.norm(raw, axis=1, keepdims=True)


def _sphere_erm(**params):
    """PrivateERM of the linear loss on S^2 (closed-form gradient on numpy)."""
    sphere = Hypersphere(2)
    gradient = {} if AUTODIFF else {"gradient": linear_gradient, "gradient_kind": "euclidean"}
    params = {"clip_norm": 1.0, "random_state": 0, **gradient, **params}
    return sphere, PrivateERM(sphere, linear_loss, **params)


def _minimiser(points):
    mean = points.mean(axis=0)
    return mean / np.linalg.norm(mean)


def test_huge_epsilon_reaches_the_non_private_minimiser():
    points = _directions(200, seed=1)
    sphere, estimator = _sphere_erm(epsilon=1e4, n_iter=60, step_size=0.5)
    estimate = to_numpy(estimator.fit(points).estimate_)
    assert bool(sphere.belongs(to_backend(estimate)))
    assert np.linalg.norm(estimate - _minimiser(points)) < 1e-3


def test_error_shrinks_with_n():
    errors = []
    for n_samples in (20, 200, 2000):
        run = []
        for seed in range(6):
            points = _directions(n_samples, seed=10 + seed)
            _, estimator = _sphere_erm(epsilon=1.0, random_state=seed,
                                       gradient=linear_gradient, gradient_kind="euclidean")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", NoiseDominatesWarning)
                estimate = to_numpy(estimator.fit(points).estimate_)
            run.append(np.linalg.norm(estimate - _minimiser(points)))
        errors.append(np.mean(run))
    assert errors[0] > errors[1] > errors[2]
    assert errors[2] < errors[0] / 5


def test_budget_charged_with_the_stated_sensitivity_and_noise_drawn(monkeypatch):
    points = _directions(100, seed=2)
    spy = TangentGaussianSpy(monkeypatch)
    sigmas, draws = spy.sigmas, spy.draws
    clip = 0.7
    sphere, estimator = _sphere_erm(epsilon=0.8, delta=1e-6, clip_norm=clip, n_iter=200)
    estimator.fit(points)
    (event,) = estimator.events_
    assert event.sensitivity == pytest.approx(2 * clip / 100, rel=1e-12)
    assert event.n_steps == 200
    # independent accountant: 200 Gaussian steps compose to one of multiplier z / sqrt(T)
    mu = math.sqrt(200) / estimator.noise_multiplier_
    assert gdp_epsilon(mu, 1e-6) == pytest.approx(0.8, rel=1e-6)
    assert estimator.budget_.spent_epsilon == pytest.approx(0.8, rel=1e-6)
    calibrated = estimator.noise_multiplier_ * 2 * clip / 100
    assert len(sigmas) == 200 and np.allclose(sigmas, calibrated, rtol=1e-12)
    # the draws have the calibrated variance: chi-square with 2 dof per draw on S^2
    squared = sum(float(np.sum(draw**2)) for draw in draws) / calibrated**2
    dof = 2 * len(draws)
    assert abs(squared - dof) < 5 * math.sqrt(2 * dof)


class _BadShape(PerSampleLoss):
    def values(self, point, data):
        return gs.zeros((data.shape[0], 2))

    def gradients(self, point, data):
        return gs.zeros((data.shape[0], 3))


def _key_error_loss(point, sample):
    return {"a": 1.0}["b"] * gs.sum(point * sample)


def test_bad_losses_and_targets_raise_before_charging():
    sphere = Hypersphere(2)
    points = _directions(20, seed=3)
    budget = PrivacyBudget(5.0, 1e-5)
    cases = [
        (TypeError, "'loss' parameter of PrivateERM must be", 42, {}),
        (ValueError, "one value per sample", _BadShape(sphere), {}),
        (ValueError, "loss _key_error_loss raised KeyError", _key_error_loss,
         {"gradient": linear_gradient}),
        (ValueError, "y must hold one row per row of X", _BadShape(sphere), {"y": np.ones(7)}),
    ]
    for error, message, loss, params in cases:
        fit_kwargs = {"y": params["y"]} if "y" in params else {}
        gradient = {"gradient": params["gradient"]} if "gradient" in params else {}
        estimator = PrivateERM(sphere, loss, clip_norm=1.0, budget=budget, **gradient)
        with pytest.raises(error, match=message):
            estimator.fit(points, **fit_kwargs)
        assert not hasattr(estimator, "estimate_")
    assert budget.events == ()


def test_paired_samples_reach_least_squares():
    """Linear regression in R^2 with a callable loss of the pairs (x_i, y_i)."""
    rng = np.random.default_rng(4)
    X = rng.standard_normal((100, 2))
    y = X @ np.array([0.5, -0.3]) + 0.05 * rng.standard_normal(100)
    space = Euclidean(2)

    def loss(weights, sample):
        features, target = sample
        return (gs.sum(weights * features) - target) ** 2 / 2

    def gradient(weights, sample):
        features, target = sample
        return (gs.sum(weights * features) - target) * features

    extra = {} if AUTODIFF else {"gradient": gradient}
    estimator = PrivateERM(space, loss, epsilon=1e5, clip_norm=5.0, n_iter=60,
                           step_size=0.5, random_state=0, **extra).fit(X, y)
    expected = np.linalg.lstsq(X, y, rcond=None)[0]
    # noise of the last iterate: about 2e-3 at this epsilon; the start is 0.58 away
    assert np.allclose(to_numpy(estimator.estimate_), expected, atol=1e-2)


@pytest.mark.skipif(AUTODIFF, reason="finite differences are the numpy fallback")
def test_finite_differences_warn_and_agree_with_the_closed_form():
    sphere = Hypersphere(2)
    with pytest.warns(UserWarning, match="finite differences"):
        numeric = CallableLoss(sphere, linear_loss)
    exact = CallableLoss(sphere, linear_loss, linear_gradient, "euclidean")
    point = to_backend(np.array([0.0, 0.6, 0.8]))
    data = to_backend(_directions(4, seed=5))
    assert np.allclose(to_numpy(numeric.gradients(point, data)),
                       to_numpy(exact.gradients(point, data)), atol=1e-6)


def test_poisson_neighbours_release_identical_public_attributes():
    """Add/remove neighbours (n = 16, 17): only the estimate may differ."""
    points = _directions(17, seed=6)
    fitted = []
    for data in (points[:16], points):
        _, estimator = _sphere_erm(method="rsgd", sampling="poisson", dataset_size=20,
                                   epsilon=2.0, random_state=7)
        fitted.append(public_outputs(estimator, data))
    assert fitted[0] == fitted[1]
    assert fitted[0]["n_gradient_evaluations_"] is None


def test_poisson_needs_a_public_dataset_size():
    _, estimator = _sphere_erm(method="rsgd", sampling="poisson")
    with pytest.raises(ValueError, match="dataset_size"):
        estimator.fit(_directions(10, seed=8))


@pytest.mark.parametrize("bad, error, message", [
    (np.ones((5, 3)) * (1 + 1j), TypeError, "X must hold real numbers, got complex"),
    (np.array([["a", "b", "c"]] * 5), TypeError, "X must hold real numbers, got strings"),
    (np.ones(3), ValueError, "X must have at least 2 axes"),
])
def test_bad_data_names_the_argument(bad, error, message):
    _, estimator = _sphere_erm()
    with pytest.raises(error, match=message):
        estimator.fit(bad)


def test_batch_size_larger_than_n_names_batch_size():
    _, estimator = _sphere_erm(method="rsgd", batch_size=50)
    with pytest.raises(ValueError, match="batch_size must be <= the number of samples 10"):
        estimator.fit(_directions(10, seed=9))


def test_a_huge_record_changes_no_warning():
    """Replace-one neighbours, one of them holding a record of norm 1e300."""
    space = Euclidean(3)
    points = _directions(12, seed=11)
    neighbour = points.copy()
    neighbour[4] = 1e300
    seen = []
    for data in (points, neighbour):
        estimator = PrivateERM(space, lambda w, z: gs.sum((w - z) ** 2) / 2,
                               gradient=lambda w, z: w - z, clip_norm=1.0, random_state=0)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            estimator.fit(data)
        seen.append([(w.category, str(w.message)) for w in caught])
    assert seen[0] == seen[1]


def test_noise_ratio_predicts_the_release_displacement():
    """Flat space, no clipping: the diagnostic's two parts against 300 releases."""
    space = Euclidean(3)
    points = np.zeros((50, 3))
    points[:, 0] = 1.0  # the minimiser is at distance D = 1 from the start 0
    clip, releases = 20.0, []  # large enough never to clip
    for seed in range(300):
        estimator = PrivateERM(space, lambda w, z: gs.sum((w - z) ** 2) / 2,
                               gradient=lambda w, z: w - z, epsilon=20.0, clip_norm=clip,
                               n_iter=4, step_size=0.4, init_point=np.zeros(3),
                               random_state=shifted(seed))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NoiseDominatesWarning)
            releases.append(to_numpy(estimator.fit(points).estimate_))
    releases = np.array(releases)
    progress = 1 - (1 - 0.4) ** 4  # (1 - B) with B the remaining bias
    predicted = estimator.noise_ratio_ * progress * clip  # sqrt(3) s, s the noise per axis
    # 4 standard errors: of the mean of 300 N(progress, s^2), of the RMS of 900 N(0, s^2)
    assert releases[:, 0].mean() == pytest.approx(progress, abs=4 * predicted / math.sqrt(900))
    displacement = np.sqrt(np.mean(np.sum((releases - [progress, 0, 0]) ** 2, axis=1)))
    assert displacement == pytest.approx(predicted, rel=4 / math.sqrt(2 * 900))
    with pytest.warns(NoiseDominatesWarning):
        estimator.set_params(epsilon=0.05).fit(points)
    assert estimator.noise_ratio_ > 1


def test_sklearn_clone_and_params():
    _, estimator = _sphere_erm(epsilon=2.0)
    copy = clone(estimator)
    assert copy.get_params()["epsilon"] == 2.0
    assert copy.get_params()["loss"] is linear_loss
    assert "dataset_size" in copy.get_params()


def test_paired_samples_index_together():
    pairs = PairedSamples(np.arange(6).reshape(3, 2), np.array([10, 11, 12]))
    assert pairs.shape == (3,) and len(pairs[np.array([0, 2])]) == 2
    features, target = pairs[1]
    assert list(features) == [2, 3] and target == 11
