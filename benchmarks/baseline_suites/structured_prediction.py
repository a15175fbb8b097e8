"""PrivateStructuredPrediction against noisy kernel regression (label-level privacy).

Datasets (features public, targets private; a public seeded split, at most 2,000
training and 200 test rows; features standardised, which is public under label-level
privacy):

* ``segment_hue`` (KEEL image segmentation, 2,310 regions): the mean hue on S^1 from the
  region's position, size, edge and intensity statistics (the first 10 columns);
* ``pen_direction`` (KEEL pendigits, 10,992 digits): the direction on S^1 of the pen's
  last move (point 6 to point 8) from the first 5 sampled points;
* ``libras_direction`` (KEEL movement libras, 360 hand movements): the direction on S^1
  from the 30th to the 45th point of the trajectory, from the first 30 points;
* ``wordnet_mammals``: the Poincare embedding on H^2 of 51 held-out synsets from the
  Laplacian eigenmap of the closure (``load_wordnet_mammals``).

Methods at (epsilon, delta = 1e-5): ``default`` is the estimator with its defaults and the
public bound D (S^1: pi, which clips nothing; H^2: 2.0); ``noisy_kernel_regression``
releases each test prediction Exp_b(sum_i a_i(x) clip_D(Log_b y_i)) with Nadaraya-Watson
weights a(x) (the median-distance bandwidth) plus Gaussian noise of sensitivity
2 D max_i a_i(x), the k test predictions composed exactly (Gaussian DP) to (epsilon,
delta) (on H^2 its predictions whose noise overflows the hyperboloid are left out of its
mean, to its advantage); ``non_private`` is the weighted Frechet mean with the kernel-ridge weights
(``nonprivate_prediction``, gamma = 1e-3). Error: mean geodesic distance from the
prediction to the held-out target.
"""

import time
import warnings

import numpy as np
from geomstats.geometry.hyperboloid import Hyperboloid
from geomstats.geometry.hypersphere import Hypersphere

from benchmarks.baselines import EPSILONS, N_SEEDS
from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.datasets import load_wordnet_mammals
from geomstats_dp.datasets.keel import _keel_directory
from geomstats_dp.distributions import TangentGaussian
from geomstats_dp.learning import PrivateStructuredPrediction
from geomstats_dp.learning.structured_prediction import (
    median_bandwidth,
    nonprivate_prediction,
    rbf_kernel,
)
from geomstats_dp.optim import canonical_point, clip_tangent_vectors
from geomstats_dp.privacy import calibrate_gaussian

ESTIMATOR = "PrivateStructuredPrediction"
DELTA = 1e-5
MAX_TRAIN, MAX_TEST = 2000, 200


def _raw_keel(name):
    """A KEEL raw measurement file as float64 [n, columns] (the class is the last)."""
    path = _keel_directory() / "data" / "balanced" / "raw" / f"{name}.dat"
    return np.loadtxt(path, delimiter=",", comments="@")


def _circle(angles):
    return np.stack([np.cos(angles), np.sin(angles)], axis=1)


def _direction(table, start, end):
    """Angle of the move from sampled point ``start`` to ``end`` (x, y column pairs)."""
    dx = table[:, 2 * end] - table[:, 2 * start]
    dy = table[:, 2 * end + 1] - table[:, 2 * start + 1]
    return np.arctan2(dy, dx)


def datasets(quick):
    """Name -> (space, D, features, targets, train indices, test indices)."""
    segment = _raw_keel("segment")
    pen = _raw_keel("penbased")
    libras = _raw_keel("movement_libras")
    circle = Hypersphere(1)
    out = {
        "segment_hue": (circle, np.pi, segment[:, :10], _circle(segment[:, 18])),
        "pen_direction": (circle, np.pi, pen[:, :10], _circle(_direction(pen, 5, 7))),
        "libras_direction": (circle, np.pi, libras[:, :60],
                             _circle(_direction(libras, 29, 44))),
    }
    features, embeddings, _ = load_wordnet_mammals()
    out["wordnet_mammals"] = (Hyperboloid(2), 2.0, to_numpy(features), to_numpy(embeddings))
    splits = {}
    for name, (space, clip, X, Y) in out.items():
        order = np.random.default_rng(0).permutation(len(X))
        n_test = min(MAX_TEST, len(X) // 5) // (10 if quick else 1)
        test = order[:n_test]
        train = order[n_test:n_test + (200 if quick else MAX_TRAIN)]
        X = (X - X.mean(axis=0)) / np.maximum(X.std(axis=0), 1e-12)
        splits[name] = (space, clip, X, Y, train, test)
    return splits


def noisy_kernel_regression(space, clip, X_train, Y_train, X_test, epsilon, rng):
    """Nadaraya-Watson regression in log-coordinates, each prediction noised."""
    base = canonical_point(space)
    logs = clip_tangent_vectors(space.metric, space.metric.log(to_backend(Y_train), base),
                                base, clip)
    kernel = rbf_kernel(X_test, X_train, median_bandwidth(X_train))
    weights = kernel / np.maximum(kernel.sum(axis=1, keepdims=True), 1e-300)
    tangent = weights @ to_numpy(logs).reshape(len(Y_train), -1)
    multiplier = calibrate_gaussian(epsilon, DELTA, len(X_test))
    sigmas = multiplier * 2 * clip * weights.max(axis=1)
    sampler = TangentGaussian(space)
    noise = np.stack([to_numpy(sampler.sample(base, sigma=float(s), random_state=rng))
                      for s in sigmas])
    return space.metric.exp(to_backend(tangent.reshape(noise.shape) + noise), base)


def _error(space, predictions, targets):
    """Mean distance to the targets over the finite predictions (on H^2, noisy kernel
    regression's noise can overflow the hyperboloid's coordinates at small epsilon:
    those predictions are left out, to the baseline's advantage; all of them: nan)."""
    distances = to_numpy(space.metric.dist(to_backend(predictions), to_backend(targets)))
    finite = distances[np.isfinite(distances)]
    return float(finite.mean()) if finite.size else float("nan")


def rows(quick):
    """One row per (dataset, method, epsilon, seed)."""
    epsilons = EPSILONS[1:2] if quick else EPSILONS
    n_seeds = 1 if quick else N_SEEDS
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, (space, clip, X, Y, train, test) in datasets(quick).items():
            common = dict(estimator=ESTIMATOR, dataset=name, n=len(train),
                          dim=int(space.dim))
            start = time.perf_counter()
            model = PrivateStructuredPrediction(space, clip_norm=clip, method="rgd")
            weights = model.fit(X[train], Y[train]).weights(X[test])
            exact = np.stack([to_numpy(nonprivate_prediction(space, row, Y[train], 100))
                              for row in weights])
            seconds = time.perf_counter() - start
            for epsilon in epsilons:
                yield dict(common, method="non_private", epsilon=epsilon, seed=0,
                           error=_error(space, exact, Y[test]), seconds=seconds)
                for seed in range(n_seeds):
                    start = time.perf_counter()
                    model = PrivateStructuredPrediction(space, epsilon=epsilon, delta=DELTA,
                                                        clip_norm=clip, random_state=seed)
                    predictions = model.fit(X[train], Y[train]).predict(X[test])
                    yield dict(common, method="default", epsilon=epsilon, seed=seed,
                               error=_error(space, predictions, Y[test]),
                               seconds=time.perf_counter() - start)
                    start = time.perf_counter()
                    predictions = noisy_kernel_regression(
                        space, clip, X[train], Y[train], X[test], epsilon,
                        np.random.default_rng(seed))
                    yield dict(common, method="noisy_kernel_regression", epsilon=epsilon,
                               seed=seed, error=_error(space, predictions, Y[test]),
                               seconds=time.perf_counter() - start)
