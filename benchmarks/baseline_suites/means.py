"""Private Frechet means and Huber (robust) means against the simple private baselines.

Error: the geodesic distance of a release to the non-private answer (the Frechet mean by
geomstats' converged solver; the Huber mean by noiseless unit Riemannian gradient steps
run to a gradient norm below 1e-10). Methods, all at the same public point x0 and clip
radius C:

- "default": ``PrivateFrechetMean`` / ``PrivateERM(HuberDistanceLoss)`` with their defaults
  (``method="auto"``), given only the public bounds: C (``clip_norm``) and x0 (the mean:
  the public ball ``center=x0, radius=C`` holding the data; the robust mean:
  ``init_point=x0``);
- "tangent_at_x0": Log at x0, clip to C, average, one Gaussian release calibrated by
  ``calibrate_gaussian``, Exp back (the baseline of issue 17);
- "extrinsic": the embedded mean (matrices, or unit vectors) plus Gaussian noise with the
  public ambient sensitivity, projected back (eigenvalue flooring at the public floor for
  SPD, normalisation for the sphere);
- "non_private": the exact answer (error 0, for the time).

Data (real, offline, public ranges only; none is used by the tests):
PrivateFrechetMean on SPD with the affine-invariant metric: the spatial ink covariance
of sklearn's 8x8 digits and of KEEL's optdigits (SPD(2), pixel coordinates scaled to
[0, 1]), the RGB covariances of 8x8 patches of sklearn's two sample images (SPD(3),
intensities scaled to [0, 1]), the covariance of the (x, y) points of each KEEL penbased
and movement_libras trajectory (SPD(2), coordinates in [0, 1]); each matrix plus
FLOOR x I. The public point is the covariance of a uniform variable on [0, 1],
(1/12 + FLOOR) I, and C the largest distance from it to a matrix with eigenvalues in
[FLOOR, m/4 + FLOOR]. On the unit sphere, rows with non-negative features normalised to
norm 1: sklearn's digits, KEEL's optdigits, satimage, spambase (the 54 word and
character frequencies; all-zero rows dropped), wdbc, sonar and movement_libras. The
public point is the centre of the positive orthant (1, ..., 1) / sqrt(p); the Frechet
mean gets the public ball holding the orthant (``sphere_public_setting``), PrivateERM
with the Huber loss (radius HUBER_RADIUS) C = HUBER_RADIUS. The first three datasets of
each kind are the cells the rule of ``method="auto"`` was derived on, the others
held-out.
"""

import math
import time

import geomstats.backend as gs
import numpy as np
from geomstats.geometry.hypersphere import Hypersphere
from geomstats.geometry.spd_matrices import SPDMatrices
from sklearn.datasets import load_digits, load_sample_images

from benchmarks.baseline_suites.pca import keel_features
from benchmarks.baselines import EPSILONS, N_SEEDS
from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.datasets import load_keel
from geomstats_dp.distributions import TangentGaussian
from geomstats_dp.learning import PrivateERM, PrivateFrechetMean
from geomstats_dp.learning.reference import exact_frechet_mean
from geomstats_dp.optim import HuberDistanceLoss
from geomstats_dp.privacy import calibrate_gaussian

ESTIMATOR = "PrivateFrechetMean"
DELTA = 1e-5
FLOOR = 1e-2  # added to every covariance: the public lower bound of the eigenvalues
HUBER_RADIUS = 0.5
PATCH = 8


def _covariances(samples, weights=None):
    """Covariance of each set of samples [n, k, m] (weights [n, k]) plus FLOOR I."""
    if weights is None:
        weights = np.ones(samples.shape[:2])
    weights = weights / weights.sum(axis=1, keepdims=True)
    mean = np.einsum("nk,nkm->nm", weights, samples)
    centred = samples - mean[:, None]
    cov = np.einsum("nk,nka,nkb->nab", weights, centred, centred)
    return cov + FLOOR * np.eye(samples.shape[2])


def ink_covariances(images):
    """SPD(2): covariance of the pixel coordinates weighted by ink, per 8x8 image."""
    rows, cols = np.meshgrid(np.arange(8), np.arange(8), indexing="ij")
    coords = np.stack([rows.ravel(), cols.ravel()], axis=1) / 7.0
    ink = images.reshape(len(images), -1) + 1e-3  # blank pixels keep a tiny weight
    return _covariances(np.broadcast_to(coords, (len(images), 64, 2)), ink)


def digits_ink():
    """SPD(2): ``ink_covariances`` of sklearn's digits."""
    return ink_covariances(load_digits().images)


def trajectory_covariances(name, scale):
    """SPD(2): covariance of the (x, y) points of each KEEL trajectory, coordinates over
    ``scale`` (in [0, 1])."""
    points = keel_features(name, 0.0, scale)
    return _covariances(points.reshape(len(points), -1, 2))


def image_patches(index):
    """SPD(3): RGB covariance of the non-overlapping 8x8 patches of a sample image."""
    image = load_sample_images().images[index].astype(np.float64) / 255.0
    h, w = (s // PATCH * PATCH for s in image.shape[:2])
    patches = image[:h, :w].reshape(h // PATCH, PATCH, w // PATCH, PATCH, 3)
    patches = patches.transpose(0, 2, 1, 3, 4).reshape(-1, PATCH * PATCH, 3)
    return _covariances(patches)


def unit_rows(X):
    """Rows scaled to norm 1 (all-zero rows dropped: they have no direction)."""
    norms = np.linalg.norm(X, axis=1)
    return X[norms > 0] / norms[norms > 0, None]


SPD_DATASETS = {  # the first three: the cells the rule of "auto" was derived on
    "digits_ink_spd2": digits_ink,
    "china_patches_spd3": lambda: image_patches(0),
    "flower_patches_spd3": lambda: image_patches(1),
    "penbased_spd2": lambda: trajectory_covariances("penbased", 100.0),
    "libras_spd2": lambda: trajectory_covariances("movement_libras", 1.0),
    "optdigits_ink_spd2": lambda: ink_covariances(
        load_keel("optdigits")[0].reshape(-1, 8, 8)),
}
SPHERE_DATASETS = {  # the first three: the cells the rule of "auto" was derived on
    "digits_rows_sphere": lambda: unit_rows(load_digits().data),
    "optdigits_rows_sphere": lambda: unit_rows(load_keel("optdigits")[0]),
    "satimage_rows_sphere": lambda: unit_rows(load_keel("satimage")[0]),
    "spambase_words_sphere": lambda: unit_rows(keel_features("spambase", 0.0, 1.0)[:, :54]),
    "wdbc_rows_sphere": lambda: unit_rows(keel_features("wdbc", 0.0, 1.0)),
    "sonar_rows_sphere": lambda: unit_rows(keel_features("sonar", 0.0, 1.0)),
    "libras_rows_sphere": lambda: unit_rows(keel_features("movement_libras", 0.0, 1.0)),
}


def spd_public_setting(m):
    """x0 = (1/12 + FLOOR) I and C = sqrt(m) max |log(eigenvalue / x0 scale)| over the
    public eigenvalue range [FLOOR, m/4 + FLOOR] of a covariance of [0, 1]^m variables."""
    scale = 1 / 12 + FLOOR
    radius = math.sqrt(m) * max(math.log(scale / FLOOR), math.log((m / 4 + FLOOR) / scale))
    return scale * np.eye(m), radius


def huber_mean(space, points, start, radius, tol=1e-10, max_iter=5000):
    """The non-private Huber mean: unit Riemannian gradient steps to gradient norm tol."""
    point, metric = to_backend(start), space.metric
    data = to_backend(points)
    for _ in range(max_iter):
        logs = metric.log(data, point)
        norms = to_numpy(metric.norm(logs, point))
        factors = np.minimum(1.0, radius / np.maximum(norms, 1e-300))
        step = gs.einsum("k,k...->...", to_backend(factors / len(norms)), logs)
        if float(to_numpy(metric.norm(step, point))) < tol:
            return point
        point = metric.exp(step, point)
    raise RuntimeError("the Huber mean did not converge")


def tangent_at_x0(space, points, x0, clip, epsilon, rng):
    """Clip Log_x0 at C, average, add N_x0(0, sigma^2) with sigma = z 2C/n, Exp back."""
    logs = space.metric.log(to_backend(points), to_backend(x0))
    norms = to_numpy(space.metric.norm(logs, to_backend(x0)))
    factors = np.minimum(1.0, clip / np.maximum(norms, 1e-300))
    mean = gs.einsum("k,k...->...", to_backend(factors / len(points)), logs)
    sigma = calibrate_gaussian(epsilon, DELTA, 1) * 2 * clip / len(points)
    noise = TangentGaussian(space).sample(to_backend(x0), sigma=sigma, random_state=rng)
    return space.metric.exp(mean + noise, to_backend(x0))


def extrinsic_spd(points, epsilon, rng):
    """Mean matrix + symmetric Gaussian noise (Frobenius sensitivity sqrt(m) (m/4) 2/n over
    the public eigenvalue range), eigenvalues floored at FLOOR."""
    n, m = points.shape[:2]
    sensitivity = math.sqrt(m) * (m / 4) / n
    sigma = calibrate_gaussian(epsilon, DELTA, 1) * sensitivity
    noise = rng.normal(scale=sigma, size=(m, m))
    noise = (noise + noise.T) / math.sqrt(2) + np.diag(np.diag(noise)) * (1 - math.sqrt(2))
    values, vectors = np.linalg.eigh(points.mean(axis=0) + noise)
    return (vectors * np.maximum(values, FLOOR)) @ vectors.T


def extrinsic_sphere(points, epsilon, rng):
    """Mean of the unit vectors + N(0, sigma^2 I), sensitivity 2/n, normalised."""
    sigma = calibrate_gaussian(epsilon, DELTA, 1) * 2 / len(points)
    mean = points.mean(axis=0) + rng.normal(scale=sigma, size=points.shape[1])
    return mean / np.linalg.norm(mean)


def _timed(function, *args):
    start = time.perf_counter()
    value = function(*args)
    return value, time.perf_counter() - start


def _dataset_rows(estimator, name, space, points, reference, fits, quick):
    """Rows of every method, epsilon and seed on one dataset."""
    n, dim = len(points), int(space.dim)
    base = {"estimator": estimator, "dataset": name, "n": n, "dim": dim}
    exact, seconds = reference
    for epsilon in EPSILONS[:1] if quick else EPSILONS:
        for seed in range(1 if quick else N_SEEDS):
            yield {**base, "method": "non_private", "epsilon": epsilon, "seed": seed,
                   "error": 0.0, "seconds": seconds}
            for method, fit in fits.items():
                rng = np.random.default_rng([seed, int(epsilon * 1000)])
                estimate, seconds_ = _timed(fit, epsilon, rng, seed)
                error = float(to_numpy(space.metric.dist(to_backend(estimate), exact)))
                yield {**base, "method": method, "epsilon": epsilon, "seed": seed,
                       "error": error, "seconds": seconds_}


def _subsample(points, quick):
    return points[:300] if quick else points


def _mean_fits(space, points, x0, clip, extrinsic):
    """The releases compared for the Frechet mean: ``fit(epsilon, rng, seed)``;
    ``extrinsic(points, epsilon, rng)`` is the extrinsic baseline of the space."""
    return {
        "default": lambda eps, rng, seed: PrivateFrechetMean(
            space, epsilon=eps, delta=DELTA, clip_norm=clip, radius=clip, center=x0,
            random_state=seed).fit(points).estimate_,
        "tangent_at_x0": lambda eps, rng, seed: tangent_at_x0(
            space, points, x0, clip, eps, rng),
        "extrinsic": lambda eps, rng, seed: extrinsic(points, eps, rng),
    }


def _huber_fits(space, points, x0):
    """The releases compared on a sphere dataset: ``fit(epsilon, rng, seed)``."""
    loss = HuberDistanceLoss(space, HUBER_RADIUS)
    return {
        "default": lambda eps, rng, seed: PrivateERM(
            space, loss, epsilon=eps, delta=DELTA, clip_norm=HUBER_RADIUS,
            init_point=x0, random_state=seed).fit(points).estimate_,
        "tangent_at_x0": lambda eps, rng, seed: tangent_at_x0(
            space, points, x0, HUBER_RADIUS, eps, rng),
        "extrinsic": lambda eps, rng, seed: extrinsic_sphere(points, eps, rng),
    }


def sphere_public_setting(p):
    """x0 = (1, ..., 1) / sqrt(p), the centre of the positive orthant, and
    C = arccos(1 / sqrt(p)), the largest distance from it to a point of the orthant."""
    return np.ones(p) / math.sqrt(p), math.acos(1 / math.sqrt(p))


def mean_rows(quick):
    """PrivateFrechetMean on the SPD datasets, then on the sphere datasets."""
    for name, load in SPD_DATASETS.items():
        points = _subsample(load(), quick)
        m = points.shape[1]
        space = SPDMatrices(m)
        x0, clip = spd_public_setting(m)
        reference = _timed(exact_frechet_mean, space, to_backend(points))
        yield from _dataset_rows("PrivateFrechetMean", name, space, points, reference,
                                 _mean_fits(space, points, x0, clip, extrinsic_spd), quick)
    for name, load in SPHERE_DATASETS.items():
        points = _subsample(load(), quick)
        space = Hypersphere(points.shape[1] - 1)
        x0, clip = sphere_public_setting(points.shape[1])
        reference = _timed(exact_frechet_mean, space, to_backend(points))
        yield from _dataset_rows("PrivateFrechetMean", name, space, points, reference,
                                 _mean_fits(space, points, x0, clip, extrinsic_sphere),
                                 quick)


def huber_rows(quick):
    """PrivateERM with the Huber distance loss on the sphere datasets."""
    for name, load in SPHERE_DATASETS.items():
        points = _subsample(load(), quick)
        space = Hypersphere(points.shape[1] - 1)
        x0, _ = sphere_public_setting(points.shape[1])
        reference = _timed(huber_mean, space, points, x0, HUBER_RADIUS)
        yield from _dataset_rows("PrivateERM", name, space, points, reference,
                                 _huber_fits(space, points, x0), quick)


def rows(quick):
    """Release rows of both estimators (``benchmarks.baselines``)."""
    yield from mean_rows(quick)
    yield from huber_rows(quick)
