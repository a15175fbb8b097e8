"""PrivateMatrixCompletion: the per-user loss, recovery, empty users and items, privacy."""

import numpy as np
import pytest
from scipy.linalg import subspace_angles
from sklearn.base import clone

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.distributions.grassmann_bases import GrassmannBases
from geomstats_dp.learning import PrivateMatrixCompletion
from geomstats_dp.learning.matrix_completion import (
    MatrixCompletionLoss,
    least_squares_coefficients,
    rmse,
)
from geomstats_dp.privacy import PrivacyBudget
from tests.optim.spies import TangentGaussianSpy

N_USERS, N_ITEMS, RANK = 300, 40, 3


def _planted(seed=0, fraction=0.5):
    """Ratings V W^T of rank 3, half observed; user 0 rates nothing, item 5 is unrated."""
    rng = np.random.default_rng(seed)
    basis = np.linalg.qr(rng.standard_normal((N_ITEMS, RANK)))[0]
    full = 3 * rng.standard_normal((N_USERS, RANK)) @ basis.T
    ratings = np.where(rng.random(full.shape) < fraction, full, np.nan)
    ratings[0] = np.nan
    ratings[:, 5] = np.nan
    return ratings, full, basis


def _random_basis(seed):
    return np.linalg.qr(np.random.default_rng(seed).standard_normal((N_ITEMS, RANK)))[0]


def test_gradient_is_horizontal_and_matches_finite_differences():
    ratings, _, _ = _planted()
    space = GrassmannBases(N_ITEMS, RANK)
    loss = MatrixCompletionLoss(space, regularization=1e-2)
    point, data = _random_basis(1), ratings[1:6]
    grads = to_numpy(loss.gradients(to_backend(point), to_backend(data)))
    assert np.abs(np.einsum("mi,kmj->kij", point, grads)).max() < 1e-10
    # directional derivative along a horizontal direction, through the exponential map
    direction = to_numpy(space.to_tangent(
        to_backend(np.random.default_rng(2).standard_normal((N_ITEMS, RANK))),
        to_backend(point)))
    step = 1e-6
    ends = [space.metric.exp(to_backend(s * direction), to_backend(point)) for s in (step, -step)]
    values = [to_numpy(loss.values(end, to_backend(data))) for end in ends]
    numeric = (values[0] - values[1]) / (2 * step)
    np.testing.assert_allclose(np.einsum("kmi,mi->k", grads, direction), numeric,
                               rtol=1e-5, atol=1e-6)


def test_empty_users_and_unrated_items_pull_nothing():
    ratings, _, _ = _planted()
    space = GrassmannBases(N_ITEMS, RANK)
    loss = MatrixCompletionLoss(space)
    point = _random_basis(3)
    grads = to_numpy(loss.gradients(to_backend(point), to_backend(ratings[:4])))
    assert np.all(grads[0] == 0.0)
    # the unrated item's row is pulled by the ridge term alone: 2 lambda W_5 v_u v_u^T
    coefficients, _, _ = least_squares_coefficients(
        to_backend(point), to_backend(ratings[:4]), loss.regularization)
    coefficients = to_numpy(coefficients)
    ridge_pull = 2 * loss.regularization * np.einsum(
        "i,ki,kj->kj", point[5], coefficients, coefficients)
    np.testing.assert_allclose(grads[:, 5], ridge_pull, atol=1e-12)
    assert to_numpy(loss.values(to_backend(_random_basis(3)), to_backend(ratings[:1])))[0] == 0


def test_huge_epsilon_recovers_a_planted_subspace():
    ratings, full, basis = _planted()
    est = PrivateMatrixCompletion(RANK, epsilon=1e6, clip_norm=200.0, method="rgd",
                                  n_iter=40, random_state=0).fit(ratings)
    assert est.components_.shape == (RANK, N_ITEMS)
    np.testing.assert_allclose(est.components_ @ est.components_.T, np.eye(RANK), atol=1e-10)
    # the unrated item 5 is unidentifiable: compare the subspaces without it
    kept = np.delete(np.arange(N_ITEMS), 5)
    angles = subspace_angles(est.components_.T[kept], basis[kept])
    assert np.degrees(angles).max() < 1.0
    completed = est.predict(ratings)
    assert rmse(completed[1:][:, kept], full[1:][:, kept]) < 0.05 * np.abs(full).mean()
    # the empty user gets the offset (0) everywhere
    assert np.all(completed[0] == 0.0)
    assert est.transform(ratings).shape == (N_USERS, RANK)


def test_noise_drawn_is_the_calibrated_noise(monkeypatch):
    spy = TangentGaussianSpy(monkeypatch)
    sigmas = spy.sigmas
    ratings, _, _ = _planted(seed=1)
    est = PrivateMatrixCompletion(RANK, epsilon=1.0, clip_norm=5.0, batch_size=30,
                                  n_iter=50, offset=0.5, random_state=0).fit(ratings)
    (event,) = est.events_
    assert event.sensitivity == pytest.approx(2 * 5.0 / 30)
    assert len(sigmas) == est.n_iter_ == 50
    np.testing.assert_allclose(sigmas, est.noise_multiplier_ * 2 * 5.0 / 30, rtol=1e-12)
    # every draw is horizontal at its basis; E|xi|^2 = r (n - r) sigma^2 over the 50 draws
    # (sum of 50 chi^2_111 variables, relative standard deviation sqrt(2 / 5550) = 1.9%)
    draws = list(zip(spy.base_points, spy.draws))
    assert len(draws) == 50
    squared = [np.sum(draw**2) for _, draw in draws]
    for point, draw in draws:
        assert np.abs(point.T @ draw).max() < 1e-10
    expected = RANK * (N_ITEMS - RANK) * sigmas[0] ** 2
    assert abs(np.mean(squared) / expected - 1) < 5 * np.sqrt(2 / (50 * 111))
    assert est.budget_.spent_epsilon == pytest.approx(1.0, rel=1e-6)


def test_neighbours_share_every_public_attribute():
    ratings, _, _ = _planted(seed=2)
    neighbour = ratings.copy()
    neighbour[7] = np.nan
    neighbour[7, :3] = 5.0
    fits = [PrivateMatrixCompletion(RANK, epsilon=1.0, clip_norm=5.0, n_iter=20, method="rgd",
                                    random_state=3).fit(data) for data in (ratings, neighbour)]
    for name in ("noise_multiplier_", "n_iter_", "events_", "noise_ratio_", "clip_norm_",
                 "n_gradient_evaluations_", "n_features_in_"):
        assert getattr(fits[0], name) == getattr(fits[1], name)


@pytest.mark.parametrize("X, params, error, message", [
    (np.ones(5), {}, ValueError, "X must have at least 2 axes"),
    (np.ones((5, 3, 2)), {}, ValueError, r"X must have shape \[n_users, n_items\]"),
    (np.ones((5, 3)), {"rank": 3}, ValueError, "rank must be < n_items = 3"),
    (np.array([[1.0, np.inf], [2.0, 3.0]]), {"rank": 1}, ValueError,
     r"X holds an infinite value at index \(0, 1\)"),
    (np.array([["a", "b"], ["c", "d"]]), {"rank": 1}, ValueError, "X must hold real numbers"),
    (np.ones((5, 3)), {"rank": 1, "clip_norm": "auto"}, ValueError, "clip_norm must be"),
    (np.ones((5, 3)), {"rank": 1, "regularization": -1.0}, ValueError, "regularization"),
])
def test_bad_input_names_the_argument_and_charges_nothing(X, params, error, message):
    budget = PrivacyBudget(1.0, 1e-5)
    est = PrivateMatrixCompletion(clip_norm=params.pop("clip_norm", 1.0), budget=budget,
                                  method="rgd", n_iter=5, **params)
    with pytest.raises(error, match=message):
        est.fit(X)
    assert budget.events == () and not hasattr(est, "components_")


def test_predict_checks_its_input_and_sklearn_conventions():
    ratings, _, _ = _planted(seed=3)
    est = PrivateMatrixCompletion(RANK, epsilon=1.0, clip_norm=5.0, n_iter=5, method="rgd",
                                  random_state=0).fit(ratings)
    with pytest.raises(ValueError, match=rf"X must have shape \[n_users, {N_ITEMS}\]"):
        est.predict(ratings[:, :5])
    with pytest.raises(ValueError, match=r"X holds an infinite value at index \(0, 2\)"):
        est.predict(np.where(np.arange(N_ITEMS) == 2, -np.inf, ratings[:1]))
    # a new user with no rating gets the offset everywhere
    assert np.all(est.predict(np.full((1, N_ITEMS), np.nan)) == est.offset)
    params = est.get_params()
    assert params["rank"] == RANK and params["clip_norm"] == 5.0
    assert clone(est).get_params() == params
