"""PrivatePCA: the gradient bound, utility against epsilon, privacy plumbing, errors."""

import math
import warnings

import numpy as np
import pytest
from geomstats.geometry.hypersphere import Hypersphere
from geomstats.geometry.stiefel import Stiefel
from sklearn.base import clone

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.learning import NoiseDominatesWarning, PrivatePCA
from geomstats_dp.learning.pca import PCALoss, explained_variance_ratio
from geomstats_dp.optim import riemannian_gradient
from geomstats_dp.privacy import GaussianEvent, PrivacyBudget
from tests.optim.spies import TangentGaussianSpy


def _spiked(n_samples, n_features=10, seed=0, spike=4.0):
    """Rows of norm <= 1 from a covariance with a spike along e_0 + e_1."""
    rng = np.random.default_rng(seed)
    direction = np.zeros(n_features)
    direction[:2] = 1 / math.sqrt(2)
    X = rng.standard_normal((n_samples, n_features)) + spike * np.outer(
        rng.standard_normal(n_samples), direction)
    X /= np.linalg.norm(X, axis=1).max()
    return X, direction


@pytest.mark.parametrize("k", [1, 3])
def test_gradients_are_riemannian_and_bounded_by_the_squared_row_norm(k):
    rng = np.random.default_rng(1)
    p = 6
    space = Hypersphere(p - 1) if k == 1 else Stiefel(p, k)
    loss = PCALoss(space)
    ratios = []
    for _ in range(200):
        basis = np.linalg.qr(rng.standard_normal((p, k)))[0]
        point = to_backend(basis[:, 0] if k == 1 else basis)
        z = rng.standard_normal((1, p))
        grads = loss.gradients(point, to_backend(z))
        euclidean = -2 * (z.T @ (z @ basis)).reshape((1,) + tuple(space.shape))
        expected = riemannian_gradient(space, to_backend(euclidean), point)
        assert np.allclose(to_numpy(grads), to_numpy(expected), atol=1e-10)
        norm = float(space.metric.norm(grads[0], point))
        ratios.append(norm / float(np.sum(z**2)))
    assert max(ratios) <= 1 + 1e-12
    assert max(ratios) > 0.9  # the bound |z|^2 is nearly attained


def test_leading_direction_improves_with_epsilon():
    X, direction = _spiked(2000, seed=2)
    cosines = []
    for epsilon in (0.05, 1.0, 100.0):
        runs = []
        for seed in range(4):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", NoiseDominatesWarning)
                pca = PrivatePCA(1, epsilon=epsilon, delta=1e-5, data_norm=1.0,
                                 random_state=seed).fit(X)
            runs.append(abs(float(pca.components_[0] @ direction)))
        cosines.append(np.mean(runs))
    assert cosines[0] < cosines[1] < cosines[2]
    assert cosines[2] > 0.99


def test_components_are_orthonormal_and_capture_the_top_subspace():
    X, _ = _spiked(1500, n_features=8, seed=3)
    pca = PrivatePCA(3, epsilon=50.0, data_norm=1.0, random_state=0).fit(X)
    assert pca.components_.shape == (3, 8)
    assert np.allclose(pca.components_ @ pca.components_.T, np.eye(3), atol=1e-8)
    assert explained_variance_ratio(pca.components_, X) > 0.95
    assert pca.transform(X).shape == (1500, 3)


def test_noise_drawn_is_the_calibrated_noise(monkeypatch):
    sigmas = TangentGaussianSpy(monkeypatch).sigmas
    X, _ = _spiked(300, seed=4)
    pca = PrivatePCA(1, epsilon=1.0, data_norm=0.5, random_state=0).fit(X)
    (event,) = pca.events_
    assert pca.clip_norm_ == 0.25 and event.sensitivity == pytest.approx(2 * 0.25 / 300)
    assert np.allclose(sigmas, pca.noise_multiplier_ * 2 * 0.25 / 300, rtol=1e-12)
    assert pca.budget_.spent_epsilon == pytest.approx(1.0, rel=1e-6)


def test_private_mean_is_its_own_event():
    X, _ = _spiked(4000, seed=5)
    X = X + 0.3
    X /= np.linalg.norm(X, axis=1).max()
    pca = PrivatePCA(1, epsilon=2.0, delta=1e-5, data_norm=1.0, centered=False,
                     mean_budget_fraction=0.25, random_state=1).fit(X)
    mean_event, gradient_event = pca.events_
    assert isinstance(mean_event, GaussianEvent) and mean_event.n_steps == 1
    assert mean_event.sensitivity == pytest.approx(2 / 4000)
    assert pca.budget_.spent_epsilon <= 2.0 * (1 + 1e-9)
    sigma = mean_event.noise_multiplier * mean_event.sensitivity
    error = np.linalg.norm(pca.mean_ - X.mean(axis=0))
    # |noise| ~ sigma sqrt(p): within 5 standard deviations of a chi distribution
    assert abs(error - sigma * math.sqrt(10)) < 5 * sigma


def test_neighbours_share_every_public_attribute():
    X, _ = _spiked(200, seed=6)
    neighbour = X.copy()
    neighbour[5] = -neighbour[5] * 0.2
    fits = [PrivatePCA(2, epsilon=1.0, data_norm=1.0, random_state=3).fit(data)
            for data in (X, neighbour)]
    for name in ("noise_multiplier_", "n_iter_", "events_", "noise_ratio_",
                 "clip_norm_", "n_gradient_evaluations_", "data_norm_"):
        assert getattr(fits[0], name) == getattr(fits[1], name)


@pytest.mark.parametrize("X, params, message", [
    (np.ones(5), {}, "X must have at least 2 axes"),
    (np.ones((5, 3)), {"n_components": 3}, "n_components must be < n_features = 3"),
    (np.ones((5, 3)), {"centered": False}, "centered=False needs a public data_norm"),
    (np.full((5, 3), np.nan), {"data_norm": 1.0}, "X holds a non-finite value"),
])
def test_bad_input_names_the_argument_and_charges_nothing(X, params, message):
    budget = PrivacyBudget(1.0, 1e-5)
    pca = PrivatePCA(budget=budget, **params)
    with pytest.raises(ValueError, match=message):
        pca.fit(X)
    assert budget.events == () and not hasattr(pca, "components_")


def test_sklearn_conventions():
    pca = PrivatePCA(2, epsilon=3.0, data_norm=1.0)
    params = pca.get_params()
    assert params["n_components"] == 2 and params["data_norm"] == 1.0
    assert clone(pca).get_params() == params
