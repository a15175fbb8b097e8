"""The kernel-ridge weights of structured prediction on public features."""

import numpy as np
import pytest
from scipy.spatial.distance import pdist
from sklearn.kernel_ridge import KernelRidge

from geomstats_dp.learning._kernel_ridge import (
    kernel_ridge_coefficients,
    kernel_weights,
    median_bandwidth,
    normalized_weights,
)


def _data(n_samples=60, seed=0):
    rng = np.random.default_rng(seed)
    X = np.sort(rng.uniform(0, 1, n_samples))[:, None]
    return X, np.stack([np.sin(3 * X[:, 0]), np.cos(2 * X[:, 0])], axis=1)


@pytest.mark.backend_independent
def test_kernel_weights_are_kernel_ridge_regression():
    X, Y = _data()
    X_new = np.array([[0.13], [0.5], [0.91]])
    alpha = kernel_weights(X, X_new, bandwidth=0.2, regularization=0.05)
    ridge = KernelRidge(alpha=0.05, kernel="rbf", gamma=1 / (2 * 0.2**2)).fit(X, Y)
    assert np.allclose(alpha @ Y, ridge.predict(X_new), atol=1e-10)


@pytest.mark.backend_independent
def test_coefficients_are_the_gaussian_process_regression_with_a_shrunk_constant():
    X, Y = _data()
    beta, mean = kernel_ridge_coefficients(X, Y, 0.2, 0.05)
    np.testing.assert_allclose(mean, Y.sum(axis=0) / (len(Y) + 0.05), rtol=1e-12)
    ridge = KernelRidge(alpha=0.05, kernel="rbf", gamma=1 / (2 * 0.2**2)).fit(X, Y - mean)
    X_new = np.array([[0.3], [0.65]])
    gram = np.exp(-((X_new - X.T) ** 2) / (2 * 0.2**2))
    np.testing.assert_allclose(gram @ beta, ridge.predict(X_new), atol=1e-10)


@pytest.mark.backend_independent
def test_median_bandwidth_and_normalised_weights():
    X, _ = _data()
    assert median_bandwidth(X) == pytest.approx(np.median(pdist(X)), rel=1e-12)
    assert median_bandwidth(np.ones((5, 2))) == 1.0  # every row the same
    alpha = np.array([[1.0, 3.0], [0.0, 0.0]])
    with pytest.raises(ValueError, match="X row 1"):
        normalized_weights(alpha)
    np.testing.assert_allclose(normalized_weights(alpha[:1]), [[0.25, 0.75]])
