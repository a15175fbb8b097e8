"""The per-user loss of matrix completion on the Grassmannian (``_completion_loss``)."""

import numpy as np

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.distributions.grassmann_bases import GrassmannBases
from geomstats_dp.learning._completion_loss import (
    MatrixCompletionLoss,
    least_squares_coefficients,
)

N_USERS, N_ITEMS, RANK = 20, 40, 3


def _planted(seed=0):
    """Ratings of rank 3, half observed; user 0 rates nothing, item 5 is unrated."""
    rng = np.random.default_rng(seed)
    basis = np.linalg.qr(rng.standard_normal((N_ITEMS, RANK)))[0]
    full = 3 * rng.standard_normal((N_USERS, RANK)) @ basis.T
    ratings = np.where(rng.random(full.shape) < 0.5, full, np.nan)
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


def test_least_squares_coefficients_solve_each_users_ridge_problem():
    """Against an independent solve of min |P_Omega(x - W v)|^2 + lambda |v|^2."""
    ratings, _, _ = _planted(1)
    point, regularization = _random_basis(4), 0.3
    coefficients, observed, _ = least_squares_coefficients(
        to_backend(point), to_backend(ratings[1:4]), regularization)
    for row, coefficient in zip(ratings[1:4], to_numpy(coefficients)):
        seen = ~np.isnan(row)
        stacked = np.vstack([point[seen], np.sqrt(regularization) * np.eye(RANK)])
        target = np.concatenate([row[seen], np.zeros(RANK)])
        np.testing.assert_allclose(coefficient, np.linalg.lstsq(stacked, target)[0],
                                   atol=1e-10)
    np.testing.assert_array_equal(to_numpy(observed), ~np.isnan(ratings[1:4]))
