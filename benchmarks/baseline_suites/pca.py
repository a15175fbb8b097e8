"""PrivatePCA against Analyze Gauss and the noisy power method, centred PCA.

Datasets (features divided by the public range of the measurement, so in [0, 1]^p, and
the public bound B = sqrt(p), loose as a user would take it; none is used by the tests):

* ``pendigits`` (KEEL raw ``penbased``, 10,992 x 16): pen coordinates rescaled by the
  dataset's authors to 0..100;
* ``letter`` (KEEL raw, 20,000 x 16): integer features 0..15;
* ``satimage`` (KEEL raw, 6,435 x 36): Landsat MSS 8-bit pixel values 0..255;
* ``patches8`` and ``patches16``: 8 x 8 (n = 40,000) and 16 x 16 (n = 16,000) grey
  patches (mean of the RGB channels, 0..255) of scikit-learn's two sample images,
  ``extract_patches_2d`` with the public seed 0, half from each image;
* ``libras`` (KEEL raw ``movement_libras``, 360 x 90): hand positions normalised by the
  dataset's authors to [0, 1];
* ``sonar`` (KEEL raw, 208 x 60): band energies in [0, 1] (UCI's description);
* ``ionosphere`` (KEEL raw, 351 x 33): radar returns in [-1, 1] (UCI's description),
  mapped to [0, 1] by (x + 1) / 2.

Methods at (epsilon, delta = 1e-5), every private one centring with a private mean on
``MEAN_SHARE`` of the Gaussian-DP budget mu^2 (sensitivity 2B / n) and composing
exactly to (epsilon, delta) with the library's accountant (``calibrate_gaussian``):
``default`` is ``PrivatePCA(k, data_norm=B)`` (its defaults: ``centering="private_mean"``,
``method="auto"``);
``analyze_gauss`` (Dwork, Talwar, Thakurta & Zhang 2014) releases the covariance plus a
symmetric Gaussian matrix (sensitivity sqrt(2) B^2 / n), top-k eigenvectors;
``noisy_power`` (Hardt & Price 2014) runs ``NPM_STEPS`` iterations W <- qr(C W + G)
from the public start, each query C W of sensitivity sqrt(min(k, 2)) B^2 / n (D = z z^T -
z' z'^T has |D|_2 <= B^2, since x^T D x = (z . x)^2 - (z' . x)^2, and |D|_F <= sqrt(2) B^2);
``dp_rgd`` (k = 1 only: the Stiefel runs take minutes) is ``PrivatePCA(method="rgd")``;
``public_start`` the data-independent answer (``pca.start_basis``, spends nothing);
``non_private`` the exact top-k eigenvectors. Error: 1 - (variance of the centred data
captured by the released subspace) / (sum of the top-k eigenvalues of its covariance).
"""

import time
import warnings

import numpy as np
from sklearn.datasets import load_sample_images
from sklearn.feature_extraction.image import extract_patches_2d

from benchmarks.baselines import EPSILONS, N_SEEDS
from geomstats_dp.datasets.keel import _keel_directory
from geomstats_dp.learning import PrivatePCA
from geomstats_dp.learning.pca import start_basis
from geomstats_dp.privacy import share_noise_multipliers

ESTIMATOR = "PrivatePCA"
DELTA = 1e-5
MEAN_SHARE = 0.1
NPM_STEPS = 10
COMPONENTS = (1, 5)
# name: (KEEL raw file, public minimum and maximum of the features)
KEEL = {"pendigits": ("penbased", 0.0, 100.0), "letter": ("letter", 0.0, 15.0),
        "satimage": ("satimage", 0.0, 255.0), "libras": ("movement_libras", 0.0, 1.0),
        "sonar": ("sonar", 0.0, 1.0), "ionosphere": ("ionosphere", -1.0, 1.0)}
PATCHES = {"patches8": (8, 40000), "patches16": (16, 16000)}


def keel_features(name, minimum, maximum):
    """The features of a KEEL raw file (the class, last, dropped), mapped from their
    public range to [0, 1]."""
    path = _keel_directory() / "data" / "balanced" / "raw" / f"{name}.dat"
    features = np.loadtxt(path, delimiter=",", comments="@", usecols=None,
                          converters={-1: lambda _: 0.0})[:, :-1]
    return (features - minimum) / (maximum - minimum)


def image_patches(size, n_samples):
    """Grey ``size`` x ``size`` patches of the sample images, pixels over 255."""
    images = [image.mean(axis=2) / 255.0 for image in load_sample_images().images]
    return np.concatenate([
        extract_patches_2d(image, (size, size), max_patches=n_samples // 2,
                           random_state=0).reshape(n_samples // 2, -1)
        for image in images])


def datasets(quick=False):
    """Name -> rows in [0, 1]^p (a few hundred rows each when ``quick``)."""
    data = {name: keel_features(*source) for name, source in KEEL.items()}
    data.update({name: image_patches(*shape) for name, shape in PATCHES.items()})
    return {name: X[:400] if quick else X for name, X in data.items()}


def _bounded(rows, bound):
    norms = np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-300)
    return rows * np.minimum(1.0, bound / norms)


def _private_centred(X, bound, epsilon, rng):
    """Rows minus a private mean (share MEAN_SHARE of mu^2), mapped to norm <= B."""
    sensitivity = 2 * bound / len(X)
    (z,) = share_noise_multipliers(epsilon, DELTA, (MEAN_SHARE,))
    mean = X.mean(axis=0) + z * sensitivity * rng.standard_normal(X.shape[1])
    return _bounded(X - mean, bound)


def analyze_gauss(X, k, bound, epsilon, rng):
    """Top-k eigenvectors of the covariance plus a symmetric Gaussian matrix, [p, k]."""
    rows = _private_centred(_bounded(X, bound), bound, epsilon, rng)
    n, p = rows.shape
    (z,) = share_noise_multipliers(epsilon, DELTA, (1 - MEAN_SHARE,))
    upper = np.triu(z * np.sqrt(2) * bound**2 / n * rng.standard_normal((p, p)))
    noisy = rows.T @ rows / n + upper + np.triu(upper, 1).T
    return np.linalg.eigh(noisy)[1][:, ::-1][:, :k]


def noisy_power(X, k, bound, epsilon, rng):
    """NPM_STEPS noisy power iterations from the public start, [p, k]."""
    rows = _private_centred(_bounded(X, bound), bound, epsilon, rng)
    n, p = rows.shape
    # NPM_STEPS queries on the share 1 - MEAN_SHARE of mu^2
    z = np.sqrt(NPM_STEPS) * share_noise_multipliers(epsilon, DELTA, (1 - MEAN_SHARE,))[0]
    sigma = z * np.sqrt(min(k, 2)) * bound**2 / n
    W = start_basis(p, k).reshape(p, k)
    for _ in range(NPM_STEPS):
        W = np.linalg.qr(rows.T @ (rows @ W) / n + sigma * rng.standard_normal((p, k)))[0]
    return W


def private_pca(X, k, bound, epsilon, seed, method="auto"):
    """PrivatePCA's released components, [p, k]."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pca = PrivatePCA(k, epsilon=epsilon, delta=DELTA, data_norm=bound,
                         mean_budget_fraction=MEAN_SHARE, method=method,
                         random_state=seed).fit(X)
    return np.asarray(pca.components_).T


METHODS = {
    "default": lambda X, k, bound, eps, seed, rng: private_pca(X, k, bound, eps, seed),
    "analyze_gauss": lambda X, k, bound, eps, seed, rng: analyze_gauss(X, k, bound, eps, rng),
    "noisy_power": lambda X, k, bound, eps, seed, rng: noisy_power(X, k, bound, eps, rng),
    "dp_rgd": lambda X, k, bound, eps, seed, rng: private_pca(X, k, bound, eps, seed,
                                                              method="rgd"),
    "public_start": lambda X, k, bound, eps, seed, rng: start_basis(X.shape[1], k).reshape(
        X.shape[1], k),
}


def error(basis, covariance, top):
    """1 - captured variance / top-k variance."""
    return float(1 - np.trace(basis.T @ covariance @ basis) / top)


def rows(quick=False):
    """One row per (dataset, k, method, epsilon, seed)."""
    n_seeds = 2 if quick else N_SEEDS
    for name, X in datasets(quick).items():
        n, p = X.shape
        bound = np.sqrt(p)
        centred = X - X.mean(axis=0)
        covariance = centred.T @ centred / n
        for k in COMPONENTS:
            start = time.perf_counter()
            exact = np.linalg.eigh(covariance)
            exact_seconds = time.perf_counter() - start
            top = exact[0][::-1][:k].sum()
            methods = {name: release for name, release in METHODS.items()
                       if k == 1 or name != "dp_rgd"}
            for epsilon in EPSILONS:
                for seed in range(n_seeds):
                    base = {"estimator": ESTIMATOR, "dataset": f"{name} k={k}",
                            "epsilon": epsilon, "seed": seed, "n": n, "dim": p}
                    for method, release in methods.items():
                        rng = np.random.default_rng(1000 + seed)
                        start = time.perf_counter()
                        basis = release(X, k, bound, epsilon, seed, rng)
                        yield {**base, "method": method, "seconds":
                               time.perf_counter() - start,
                               "error": error(basis, covariance, top)}
                    yield {**base, "method": "non_private", "seconds": exact_seconds,
                           "error": error(exact[1][:, ::-1][:, :k], covariance, top)}
