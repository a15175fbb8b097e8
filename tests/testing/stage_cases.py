"""Small data and estimators shared by the stage checks' tests (recording, noise,
sensitivity): fast fits, and neighbours at the worst case of each adjacency."""

import numpy as np
from geomstats.geometry.hyperboloid import Hyperboloid
from geomstats.geometry.hypersphere import Hypersphere

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.datasets.wordnet import poincare_to_hyperboloid
from geomstats_dp.learning import (
    PrivateFrechetMean,
    PrivateMatrixCompletion,
    PrivatePCA,
    PrivateStructuredPrediction,
)

SPHERE = Hypersphere(2)
NORTH = np.array([0.0, 0.0, 1.0])
HYPERBOLOID = Hyperboloid(2)


def sphere_data(n_samples=30, spread=0.3, seed=0):
    """Points of S^2 around the north pole."""
    rng = np.random.default_rng(seed)
    tangent = spread * rng.standard_normal((n_samples, 3)) * np.array([1.0, 1.0, 0.0])
    return to_numpy(SPHERE.metric.exp(to_backend(tangent), to_backend(NORTH)))


def sphere_neighbours(X, index=0):
    """Record ``index`` replaced by its antipode, by the south pole, by a far point."""
    far = to_numpy(SPHERE.metric.exp(to_backend(np.array([2.5, 0.0, 0.0])),
                                     to_backend(NORTH)))
    for name, record in (("antipode", -X[index]), ("south pole", -NORTH), ("far", far)):
        X2 = X.copy()
        X2[index] = record
        yield name, X2, None


def frechet_mean(method, **params):
    defaults = {"epsilon": 2.0, "clip_norm": 1.0}
    if method == "rsgd":
        defaults["batch_size"] = 5
    return PrivateFrechetMean(SPHERE, method=method, **{**defaults, **params})


def pca_data(seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((60, 4)) * np.array([3.0, 2.0, 1.0, 0.5])


def pca_neighbours(X):
    for name, row in (("at the bound", [0, 0, 0, 5.0]), ("far", [1e300, 0, 0, 0]),
                      ("non-finite", [np.nan, 0, 0, 0]), ("opposite", [-5.0, 0, 0, 0])):
        X2 = X.copy()
        X2[0] = row
        yield name, X2, None


def pca(method, **params):
    return PrivatePCA(2, epsilon=2.0, data_norm=5.0, method=method, **params)


def ratings_data(seed=0):
    rng = np.random.default_rng(seed)
    basis = np.linalg.qr(rng.standard_normal((12, 2)))[0]
    full = 1.5 * rng.standard_normal((40, 2)) @ basis.T
    return np.clip(np.where(rng.random(full.shape) < 0.4, full, np.nan), -3, 3)


def ratings_neighbours(R):
    """User-level: user 1's whole row replaced (every item rated, at the range's ends)."""
    alternating = np.where(np.arange(R.shape[1]) % 2, 3.0, -3.0)
    for name, row in (("every item at the ends", alternating),
                      ("one rating", np.where(np.arange(R.shape[1]) == 0, 3.0, np.nan)),
                      ("no rating", np.full(R.shape[1], np.nan))):
        R2 = R.copy()
        R2[1] = row
        yield name, R2, None


def matrix_completion(**params):
    return PrivateMatrixCompletion(2, epsilon=2.0, clip_norm=2.0, method="als", n_iter=2,
                                   rating_range=(-3, 3), **params)


def label_data(n_samples=30, seed=0):
    rng = np.random.default_rng(seed)
    x = np.sort(rng.uniform(0, 1, n_samples))
    ball = np.stack([0.6 * x - 0.3, 0.3 * np.sin(4 * x)], axis=1)
    return x[:, None], poincare_to_hyperboloid(ball)


def label_neighbours(x, Y):
    """Label-level: target 0 replaced by a far point, by a point at the bound's side."""
    for name, ball in (("far", [0.99, 0.0]), ("opposite", [-0.9, 0.3])):
        Y2 = Y.copy()
        Y2[0] = poincare_to_hyperboloid(np.array([ball]))[0]
        yield name, x, Y2


def structured_prediction(method="labels", **params):
    return PrivateStructuredPrediction(HYPERBOLOID, bandwidth=0.2, regularization=1e-2,
                                       epsilon=5.0, clip_norm=1.0, method=method, **params)
