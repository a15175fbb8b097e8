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
* ``digits_orientation`` (scikit-learn's digits, 1,797 8x8 images): the orientation of
  the ink's principal axis, an axial angle t in [0, pi) placed on S^1 as 2t, from the top
  four rows of pixels;
* ``ionosphere_phase`` (KEEL ionosphere, 351 radar returns; the returns whose last pulse
  is 0 dropped): the phase on S^1 of the last complex autocorrelation value from the
  first 31 attributes;
* ``flower_gradient`` (scikit-learn's sample image "flower.jpg"): the direction on S^1 of
  the green channel's gradient at pixels of a public grid (stride 4, gradient norm above
  0.05), from the red and blue 3x3 neighbourhoods;
* ``wordnet_mammals``: the Poincare embedding on H^2 of 51 held-out synsets from the
  Laplacian eigenmap of the closure (``load_wordnet_mammals``).

The S^1 sets but digits (mostly near vertical) hold directions all around the circle,
where a chart at one point wraps. Epsilon: 0.1, 1, 10 and 1e6 (convergence).

Methods at (epsilon, delta = 1e-5): ``default`` is the estimator with its defaults (S^1:
no bound needed; H^2: the public bound D = 2.0); ``constant_private_mean``, the trivial
answer: one private mean of the targets predicted everywhere (S^1: the noisy mean of the
unit vectors, sensitivity 2 / n, projected; H^2: the one-shot clipped tangent mean at the
origin, sensitivity 2D / n); ``noisy_kernel_regression``
releases each test prediction Exp_b(sum_i a_i(x) clip_D(Log_b y_i)) with Nadaraya-Watson
weights a(x) (the median-distance bandwidth) plus Gaussian noise of sensitivity
2 D max_i a_i(x), the k test predictions composed exactly (Gaussian DP) to (epsilon,
delta) (on H^2 its predictions whose noise overflows the hyperboloid are left out of its
mean, to its advantage; D = pi on S^1, which clips nothing); ``non_private`` is kernel
regression with the kernel-ridge weights (gamma = 1e-3): on S^1 the weighted circular
mean (the extrinsic average, projected), on H^2 the weighted Frechet mean
(``nonprivate_prediction``). Error: mean geodesic distance from the prediction to the
held-out target.
"""

import time
import warnings

import numpy as np
from geomstats.geometry.hyperboloid import Hyperboloid
from geomstats.geometry.hypersphere import Hypersphere
from sklearn.datasets import load_digits, load_sample_images

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
HUGE_EPSILON = 1e6
GRADIENT_FLOOR = 0.05  # flower: pixels whose green gradient is weaker have no direction


def _raw_keel(name, columns=None):
    """A KEEL raw measurement file as float64 [n, columns] (the class is the last;
    ``columns``: the first that many only, for a file whose class is a letter)."""
    path = _keel_directory() / "data" / "balanced" / "raw" / f"{name}.dat"
    return np.loadtxt(path, delimiter=",", comments="@",
                      usecols=None if columns is None else range(columns))


def _circle(angles):
    return np.stack([np.cos(angles), np.sin(angles)], axis=1)


def _direction(table, start, end):
    """Angle of the move from sampled point ``start`` to ``end`` (x, y column pairs)."""
    dx = table[:, 2 * end] - table[:, 2 * start]
    dy = table[:, 2 * end + 1] - table[:, 2 * start + 1]
    return np.arctan2(dy, dx)


def digits_orientation():
    """(top four pixel rows [n, 32], the doubled orientation of the ink on S^1 [n, 2])."""
    images = load_digits().images
    rows, cols = np.meshgrid(np.arange(8.0), np.arange(8.0), indexing="ij")
    ink = images / images.sum(axis=(1, 2), keepdims=True)
    mean_r, mean_c = (ink * rows).sum(axis=(1, 2)), (ink * cols).sum(axis=(1, 2))
    dr, dc = rows - mean_r[:, None, None], cols - mean_c[:, None, None]
    c_rr, c_cc = (ink * dr**2).sum(axis=(1, 2)), (ink * dc**2).sum(axis=(1, 2))
    c_rc = (ink * dr * dc).sum(axis=(1, 2))
    return images[:, :4].reshape(len(images), -1), _circle(np.arctan2(2 * c_rc, c_cc - c_rr))


def ionosphere_phase():
    """(the first 31 attributes, the phase of the last pulse on S^1), non-zero pulses only
    (KEEL's file has 33 attributes: a flag, then 16 complex values as real, imaginary)."""
    table = _raw_keel("ionosphere", 33)
    keep = np.hypot(table[:, 31], table[:, 32]) > 0
    return table[keep, :31], _circle(np.arctan2(table[keep, 32], table[keep, 31]))


def flower_gradient():
    """(red and blue 3x3 neighbourhoods [n, 18], the green gradient's direction on S^1)."""
    image = load_sample_images().images[1].astype(np.float64) / 255.0
    green = image[:, :, 1]
    d_row = (green[2:, 1:-1] - green[:-2, 1:-1]) / 2
    d_col = (green[1:-1, 2:] - green[1:-1, :-2]) / 2
    grid = np.zeros(d_row.shape, dtype=bool)
    grid[1:-1:4, 1:-1:4] = True
    rows, cols = np.nonzero(grid & (np.hypot(d_row, d_col) > GRADIENT_FLOOR))
    rows, cols = rows + 1, cols + 1  # in the image's pixels
    offsets = [(i, j) for i in (-1, 0, 1) for j in (-1, 0, 1)]
    features = np.stack([image[rows + i, cols + j, channel] for channel in (0, 2)
                         for i, j in offsets], axis=1)
    return features, _circle(np.arctan2(d_row[rows - 1, cols - 1], d_col[rows - 1, cols - 1]))


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
        "digits_orientation": (circle, np.pi, *digits_orientation()),
        "ionosphere_phase": (circle, np.pi, *ionosphere_phase()),
        "flower_gradient": (circle, np.pi, *flower_gradient()),
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


def constant_private_mean(space, clip, Y_train, n_test, epsilon, rng):
    """One private mean of the targets at full budget, predicted for every test row."""
    z = calibrate_gaussian(epsilon, DELTA, 1)
    if isinstance(space, Hypersphere):
        mean = Y_train.mean(axis=0) + 2 * z / len(Y_train) * rng.standard_normal(
            Y_train.shape[1])
        point = to_backend(mean / np.linalg.norm(mean))
    else:
        base = canonical_point(space)
        logs = clip_tangent_vectors(space.metric, space.metric.log(to_backend(Y_train), base),
                                    base, clip)
        noise = TangentGaussian(space).sample(base, sigma=2 * z * clip / len(Y_train),
                                              random_state=rng)
        point = space.metric.exp(to_numpy(logs).mean(axis=0) + to_numpy(noise), base)
    return np.tile(to_numpy(point), (n_test, 1))


def non_private(space, model, X_train, Y_train, X_test):
    """Kernel regression: on S^1 the weighted circular mean, on H^2 the Frechet mean."""
    weights = model.weights(X_test)
    if isinstance(space, Hypersphere):
        average = weights @ Y_train
        return average / np.linalg.norm(average, axis=1, keepdims=True)
    return np.stack([to_numpy(nonprivate_prediction(space, row, Y_train, 100))
                     for row in weights])


def _error(space, predictions, targets):
    """Mean distance to the targets over the finite predictions (on H^2, noisy kernel
    regression's noise can overflow the hyperboloid's coordinates at small epsilon:
    those predictions are left out, to the baseline's advantage; all of them: nan)."""
    distances = to_numpy(space.metric.dist(to_backend(predictions), to_backend(targets)))
    finite = distances[np.isfinite(distances)]
    return float(finite.mean()) if finite.size else float("nan")


def rows(quick):
    """One row per (dataset, method, epsilon, seed)."""
    epsilons = EPSILONS[1:2] if quick else (*EPSILONS, HUGE_EPSILON)
    n_seeds = 1 if quick else N_SEEDS
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, (space, clip, X, Y, train, test) in datasets(quick).items():
            common = dict(estimator=ESTIMATOR, dataset=name, n=len(train),
                          dim=int(space.dim))
            start = time.perf_counter()
            model = PrivateStructuredPrediction(space, clip_norm=clip, method="rgd")
            exact = non_private(space, model.fit(X[train], Y[train]), X[train], Y[train],
                                X[test])
            seconds = time.perf_counter() - start
            for epsilon in epsilons:
                yield dict(common, method="non_private", epsilon=epsilon, seed=0,
                           error=_error(space, exact, Y[test]), seconds=seconds)
                for seed in range(n_seeds):
                    start = time.perf_counter()
                    model = PrivateStructuredPrediction(
                        space, epsilon=epsilon, delta=DELTA, random_state=seed,
                        clip_norm=None if isinstance(space, Hypersphere) else clip)
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
                    start = time.perf_counter()
                    predictions = constant_private_mean(space, clip, Y[train], len(test),
                                                        epsilon, np.random.default_rng(seed))
                    yield dict(common, method="constant_private_mean", epsilon=epsilon,
                               seed=seed, error=_error(space, predictions, Y[test]),
                               seconds=time.perf_counter() - start)
