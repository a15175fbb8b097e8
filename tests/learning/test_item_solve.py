"""The item side's post-processing of DP-ALS: the shrunk normal equations and the scaled
basis, against direct numpy solutions."""

import math

import numpy as np

from geomstats_dp.learning._item_solve import scaled_basis, solve_items
from tests.conftest import shifted


def test_without_threshold_or_shrinkage_the_items_solve_their_normal_equations():
    rng = np.random.default_rng(shifted(0))
    factors = rng.standard_normal((5, 6, 3))
    grams = np.einsum("jki,jkl->jil", factors, factors)  # positive definite
    moments = rng.standard_normal((5, 3))
    expected = np.linalg.solve(grams, moments[..., None])[..., 0]
    np.testing.assert_allclose(solve_items(grams, moments, 0.0, 0.0), expected, rtol=1e-8)


def test_eigenvalues_below_the_threshold_give_nothing_and_larger_ones_are_shrunk():
    grams = np.diag([10.0, 0.5])[None]
    moments = np.array([[10.0, 1.0]])
    # e' = max(e - 1, 0): 9 / (100 + 4) on the first axis, 0 on the second
    np.testing.assert_allclose(solve_items(grams, moments, 1.0, 2.0)[0],
                               [10.0 * 9.0 / 104.0, 0.0], rtol=1e-12)


def test_scaled_basis_spans_the_factors_with_norm_sqrt_n_items():
    rng = np.random.default_rng(shifted(1))
    factors = rng.standard_normal((8, 2)) @ np.diag([3.0, 0.1])
    basis = scaled_basis(factors)
    np.testing.assert_allclose(basis.T @ basis, 8 * np.eye(2), atol=1e-10)
    projection = basis @ basis.T / 8
    np.testing.assert_allclose(projection @ factors, factors, atol=1e-10)
    # a direction the factors do not span is a zero column
    rank_one = np.c_[factors[:, :1], np.zeros(8)]
    assert np.abs(scaled_basis(rank_one)[:, 1]).max() == 0.0
    assert math.isclose(np.linalg.norm(scaled_basis(rank_one)[:, 0]), math.sqrt(8))
