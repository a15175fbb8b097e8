"""PrivateMatrixCompletion against private item means, users' own means and non-private ALS.

Error: test RMSE on held-out ratings. Split: ``split_ratings`` (each observed entry held
out with probability 0.2, seeded by the run's seed), the release and every baseline fitted
on the training part. Privacy unit: one user (row). delta = 1e-5.

Datasets (real, offline; rows are the users, the range is the public scale of the
measurement):

- MovieLens-100K (``load_movielens_100k``): 943 users x 1,682 movies, ratings 1 to 5,
  6.3% observed.
- digits (scikit-learn's bundled 8x8 handwritten digits): 1,797 images x 64 pixels,
  intensities 0 to 16, every pixel observed: an image is a user, a pixel an item (image
  completion; low rank, and each record is one person's handwriting).
- satimage (KEEL, ``load_keel``, the raw measurements): 6,435 Landsat neighbourhoods x
  36 band values (3 x 3 pixels x 4 spectral bands), every value observed; public range
  0 to 255, the 8-bit sensor's (the data span 27-157).
- ring and magic (KEEL, raw; issue 31's): 7,400 x 20 (two Gaussian classes) and
  19,020 gamma-telescope events x 10 image parameters, every feature scaled to [0, 1]
  by its minimum and maximum (the issue's setting; the range [0, 1] is then treated as
  public), every value observed.
- letter (KEEL, raw): 20,000 character images x 16 integer shape statistics, each in
  0 to 15 by construction (public range), every value observed.

No test uses ring, magic or letter.

Methods:

- ``default``: ``PrivateMatrixCompletion(epsilon=..., rating_range=...)``, everything
  else at its defaults (the private choice between item means and DP-ALS of rank 3);
  each user completes their own row (``predict``).
- ``item_means``: private per-item means (``private_item_means``, the item means of the
  default's candidates at the whole budget): the prediction for every user is the noisy
  item mean.
- ``user_means``: each user's own mean rating, computed by the user from their own
  ratings (no release; it costs no privacy in the billboard model), the middle of the
  range for a user without ratings.
- ``non_private``: alternating least squares with the same model (rank 3, offsets,
  ridge 1 on both sides), no clipping and no noise, the same spectral start, 10
  alternations.
"""

import time

import numpy as np

from benchmarks.baselines import EPSILONS, N_SEEDS
from geomstats_dp.datasets import load_keel, load_movielens_100k, split_ratings
from geomstats_dp.datasets.keel import _keel_directory
from geomstats_dp.learning import PrivateMatrixCompletion
from geomstats_dp.learning._local_completion import complete_rows
from geomstats_dp.learning.matrix_completion import rmse
from geomstats_dp.learning.mechanisms.alternating_least_squares import (
    item_statistics,
    noisy_spectral_start,
    scaled_basis,
)
from geomstats_dp.learning.mechanisms.item_means import item_means, noisy_sums
from geomstats_dp.privacy import GaussianEvent, PrivacyBudget, calibrate_gaussian

ESTIMATOR = "PrivateMatrixCompletion"
DELTA = 1e-5
TEST_SIZE = 0.2
NON_PRIVATE_RANK, NON_PRIVATE_ITER, NON_PRIVATE_RIDGE = 3, 10, 1.0
SATIMAGE_RANGE = (0.0, 255.0)  # 8-bit Landsat MSS sensor values


def _digits():
    from sklearn.datasets import load_digits

    return load_digits().data.astype(np.float64), (0.0, 16.0)


def _keel_raw(name):
    """The features of a KEEL dataset's raw file (the class label, last, dropped)."""
    path = _keel_directory() / "data" / "balanced" / "raw" / f"{name}.dat"
    with open(path) as lines:
        n_features = len(lines.readline().split(",")) - 1
    return np.loadtxt(path, delimiter=",", usecols=range(n_features), ndmin=2)


def _unit_scaled(name):
    """Every feature scaled to [0, 1] by its minimum and maximum (issue 31's setting)."""
    features = _keel_raw(name)
    low = features.min(axis=0)
    return (features - low) / np.ptp(features, axis=0), (0.0, 1.0)


DATASETS = {
    "movielens_100k": lambda: (load_movielens_100k(), (1.0, 5.0)),
    "digits": _digits,
    "satimage": lambda: (load_keel("satimage")[0], SATIMAGE_RANGE),
    "ring": lambda: _unit_scaled("ring"),
    "magic": lambda: _unit_scaled("magic"),
    "letter": lambda: (_keel_raw("letter"), (0.0, 15.0)),
}


def private_item_means(train, rating_range, epsilon, delta, rng):
    """Private per-item means under user-level replace-one adjacency.

    The unshrunk item means of ``learning.mechanisms.item_means`` (user u's sums and counts over
    their k_u ratings, centred at the range's middle c and clipped to its half-width h,
    scaled by 1 / sqrt(k_u); sensitivity 2h) in one Gaussian release, noise multiplier
    ``calibrate_gaussian(epsilon, delta, 1)``, charged to its own PrivacyBudget; the
    prediction for item i is c plus the mean.

    Returns
    -------
    prediction : numpy.ndarray, shape=[n_items]
    budget : PrivacyBudget
    """
    low, high = rating_range
    centre, half = (low + high) / 2, (high - low) / 2
    sensitivity = 2 * half
    sigma = calibrate_gaussian(epsilon, delta, 1) * sensitivity
    budget = PrivacyBudget(epsilon, delta)
    budget.spend(GaussianEvent.from_noise(sigma, sensitivity, label="item means"))
    sums, counts = noisy_sums(train - centre, half, sigma, rng, label="item means",
                              sensitivity=sensitivity)
    return centre + item_means(sums, counts, half, sigma)[0], budget


def user_means(train, rating_range):
    """Each user's own mean rating (the range's middle without ratings), [n_users, 1]."""
    observed = ~np.isnan(train)
    counts = observed.sum(axis=1, keepdims=True)
    sums = np.nansum(train, axis=1, keepdims=True)
    return np.where(counts > 0, sums / np.maximum(counts, 1), sum(rating_range) / 2)


def non_private_als(train, rating_range):
    """Completed rows by noise-free, unclipped ALS with the release's model."""
    ratings = train - sum(rating_range) / 2
    rng = np.random.default_rng(0)
    unobserved = {"label": "non-private ALS", "sensitivity": np.inf}  # no noise: no stage
    factors = noisy_spectral_start(ratings, NON_PRIVATE_RANK, np.inf, 0.0, rng, **unobserved)
    offsets = np.zeros(train.shape[1])
    for _ in range(NON_PRIVATE_ITER):
        grams, moments = item_statistics(offsets, factors, ratings, NON_PRIVATE_RIDGE,
                                         np.inf, 1.0)
        ridge = NON_PRIVATE_RIDGE * np.eye(grams.shape[-1])
        coefficients = np.linalg.solve(grams + ridge, moments[..., None])[..., 0]
        offsets, factors = coefficients[:, 0], scaled_basis(coefficients[:, 1:])
    return complete_rows(offsets, factors, ratings, NON_PRIVATE_RIDGE) + sum(rating_range) / 2


def rows(quick=False):
    """One row per (dataset, method, epsilon, seed); see the module docstring."""
    names = ("digits",) if quick else tuple(DATASETS)
    seeds = range(1 if quick else N_SEEDS)
    epsilons = EPSILONS[1:2] if quick else EPSILONS
    for name in names:
        ratings, rating_range = DATASETS[name]()
        if quick:
            ratings = ratings[:300]
        n, dim = ratings.shape
        for seed in seeds:
            train, test = split_ratings(ratings, TEST_SIZE, random_state=seed)
            base = {"estimator": ESTIMATOR, "dataset": name, "seed": seed, "n": n,
                    "dim": dim}
            for method, epsilon, predict in _releases(train, rating_range, epsilons, seed):
                tic = time.perf_counter()
                completed = predict()
                yield {**base, "method": method, "epsilon": epsilon,
                       "error": rmse(np.broadcast_to(completed, train.shape), test),
                       "seconds": time.perf_counter() - tic}
            print(f"{name} seed {seed} done", flush=True)


def _releases(train, rating_range, epsilons, seed):
    """(method, epsilon, a function returning the completed matrix) for one split."""
    def default(epsilon):
        est = PrivateMatrixCompletion(epsilon=epsilon, delta=DELTA,
                                      rating_range=rating_range, random_state=seed)
        return lambda: est.fit(train).predict(train)

    def item_means(epsilon):
        rng = np.random.default_rng(seed)
        return lambda: private_item_means(train, rating_range, epsilon, DELTA, rng)[0]

    for epsilon in epsilons:
        yield "default", epsilon, default(epsilon)
        yield "item_means", epsilon, item_means(epsilon)
        yield "user_means", epsilon, lambda: user_means(train, rating_range)
        yield "non_private", epsilon, lambda: non_private_als(train, rating_range)
