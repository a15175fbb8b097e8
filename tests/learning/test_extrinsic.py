"""The projected extrinsic mean (``learning.mechanisms.extrinsic``): its statistic,
sensitivity, noise, projection, fallback, and convergence to the extrinsic mean computed
independently (numpy / scipy)."""

import math

import numpy as np
import pytest
import scipy.linalg
from geomstats.geometry.hyperboloid import Hyperboloid
from geomstats.geometry.hypersphere import Hypersphere
from geomstats.geometry.spd_matrices import (
    SPDEuclideanMetric,
    SPDLogEuclideanMetric,
    SPDMatrices,
)

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.learning import PrivateERM, PrivateFrechetMean
from geomstats_dp.learning.mechanisms.extrinsic import (
    ExtrinsicRelease,
    extrinsic_embedding,
    from_coordinates,
    to_coordinates,
)
from geomstats_dp.optim import HuberDistanceLoss, SquaredDistanceLoss, canonical_point
from geomstats_dp.privacy import PrivacyBudget, calibrate_gaussian
from geomstats_dp.privacy.stages import observe_stages
from geomstats_dp.testing._case import _cloud
from tests.conftest import shifted
from tests.optim.spaces import spd


def _spy_fit(estimator, X):
    stages = []

    def spy(stage):
        stages.append(stage)
        return stage.release()

    with observe_stages(spy):
        estimator.fit(X)
    return stages


@pytest.mark.backend_independent
def test_coordinates_are_orthonormal_for_the_frobenius_norm():
    rng = np.random.default_rng(0)
    a = rng.normal(size=(3, 3))
    a = a + a.T
    assert np.linalg.norm(to_coordinates(a)) == pytest.approx(np.linalg.norm(a))
    np.testing.assert_allclose(from_coordinates(to_coordinates(a), 3), a, atol=1e-12)


@pytest.mark.backend_independent
def test_the_embedding_follows_the_metric():
    assert extrinsic_embedding(Hypersphere(3)) == "sphere"
    assert extrinsic_embedding(spd()) == "log_euclidean"
    assert extrinsic_embedding(spd(SPDLogEuclideanMetric)) == "log_euclidean"
    assert extrinsic_embedding(spd(SPDEuclideanMetric)) == "euclidean"
    assert extrinsic_embedding(Hyperboloid(2)) is None


def test_sphere_stage_is_the_mean_of_the_unit_vectors_with_sensitivity_2_over_n():
    """The released statistic is the plain mean of the records, its sensitivity 2/n, its
    noise N(0, (z 2/n)^2 I_p), z calibrated at (epsilon, delta); the estimate is the
    noisy mean normalised."""
    sphere = Hypersphere(2)
    X = _cloud(sphere, 40, 0.5, 0)
    estimator = PrivateFrechetMean(sphere, epsilon=0.7, method="extrinsic", random_state=0)
    (stage,) = _spy_fit(estimator, X)
    np.testing.assert_allclose(to_numpy(stage.statistic), to_numpy(X).mean(axis=0),
                               atol=1e-12)
    z = calibrate_gaussian(0.7, 1e-5, 1)
    assert stage.sensitivity == pytest.approx(2 / 40)
    assert stage.scale == pytest.approx(z * 2 / 40)
    assert stage.dim == 3
    noisy = to_numpy(stage.statistic) + to_numpy(stage.noise)
    np.testing.assert_allclose(to_numpy(estimator.estimate_), noisy / np.linalg.norm(noisy),
                               atol=1e-12)
    assert estimator.noise_multiplier_ == pytest.approx(z)


def test_spd_records_are_clipped_around_the_start_in_the_log_embedding():
    """SPD (affine-invariant): the statistic is the mean of logm(z_i) - logm(x0) in
    orthonormal coordinates, each clipped to C; the sensitivity is 2C/n."""
    space = SPDMatrices(2)
    X = _cloud(space, 30, 1.0, 0, offset=1.0)
    logs = np.array([scipy.linalg.logm(p).real for p in to_numpy(X)])
    rows = to_coordinates(logs)  # x0 = I: logm(x0) = 0
    rows = rows * np.minimum(1.0, 0.8 / np.linalg.norm(rows, axis=1))[:, None]
    estimator = PrivateFrechetMean(space, epsilon=1.0, method="extrinsic", clip_norm=0.8,
                                   random_state=0)
    (stage,) = _spy_fit(estimator, X)
    np.testing.assert_allclose(to_numpy(stage.statistic), rows.mean(axis=0), atol=1e-9)
    assert stage.sensitivity == pytest.approx(2 * 0.8 / 30)
    noisy = from_coordinates(to_numpy(stage.statistic) + to_numpy(stage.noise), 2)
    np.testing.assert_allclose(to_numpy(estimator.estimate_), scipy.linalg.expm(noisy),
                               atol=1e-9)


def test_public_weights_scale_the_sensitivity():
    sphere = Hypersphere(2)
    X = _cloud(sphere, 20, 0.5, 0)
    weights = np.ones(20)
    weights[0] = 3.0
    estimator = PrivateFrechetMean(sphere, method="extrinsic", random_state=0)
    stages = []

    def spy(stage):
        stages.append(stage)
        return stage.release()

    with observe_stages(spy):
        estimator.fit(X, sample_weight=weights)
    w = weights / weights.sum()
    np.testing.assert_allclose(to_numpy(stages[0].statistic), w @ to_numpy(X), atol=1e-12)
    assert stages[0].sensitivity == pytest.approx(2 * w.max())


def test_a_noisy_mean_at_the_origin_releases_the_public_start():
    """The projection of 0 is undefined: the release is the public start x0 (a function of
    the released vector only)."""
    sphere = Hypersphere(2)
    start = np.array([0.0, 1.0, 0.0])
    X = _cloud(sphere, 20, 0.5, 0)
    estimator = PrivateFrechetMean(sphere, method="extrinsic", init_point=start,
                                   random_state=0)
    with observe_stages(lambda stage: 0 * stage.statistic):
        estimator.fit(X)
    np.testing.assert_allclose(to_numpy(estimator.estimate_), start)


@pytest.mark.slow
def test_sphere_noise_has_the_calibrated_law():
    """Over many draws the noise added to the mean has mean 0 and standard deviation
    z 2/n per coordinate (the observer reads the noise the release drew)."""
    sphere = Hypersphere(2)
    X = _cloud(sphere, 40, 0.5, 0)
    mechanism = ExtrinsicRelease(sphere, SquaredDistanceLoss(sphere), 40, 1.0, 1e-5, 1.0,
                                 init_point=canonical_point(sphere))
    noises = []

    def spy(stage):
        noises.append(to_numpy(stage.noise))
        return stage.release()

    rng = np.random.default_rng(shifted(3))
    with observe_stages(spy):
        for _ in range(2000):
            mechanism.release(X, None, rng)
    noises = np.array(noises)
    sigma = calibrate_gaussian(1.0, 1e-5, 1) * 2 / 40
    assert np.abs(noises.mean(axis=0)).max() < 5 * sigma / math.sqrt(2000)
    np.testing.assert_allclose(noises.std(axis=0), sigma, rtol=0.1)


def _extrinsic_reference(space, X):
    points = to_numpy(X)
    embedding = extrinsic_embedding(space)
    if embedding == "sphere":
        mean = points.mean(axis=0)
        return mean / np.linalg.norm(mean)
    if embedding == "euclidean":
        return points.mean(axis=0)
    return scipy.linalg.expm(np.mean([scipy.linalg.logm(p).real for p in points], axis=0))


@pytest.mark.parametrize("space_name", ["sphere", "spd", "spd_log_euclidean",
                                        "spd_euclidean"])
def test_converges_to_the_extrinsic_mean_at_a_huge_epsilon(space_name):
    space = {"sphere": lambda: Hypersphere(4), "spd": spd,
             "spd_log_euclidean": lambda: spd(SPDLogEuclideanMetric),
             "spd_euclidean": lambda: spd(SPDEuclideanMetric)}[space_name]()
    X = _cloud(space, 50, 0.5, shifted(0))
    estimator = PrivateFrechetMean(space, epsilon=1e6, method="extrinsic", clip_norm=2.0,
                                   random_state=shifted(0)).fit(X)
    np.testing.assert_allclose(to_numpy(estimator.estimate_),
                               _extrinsic_reference(space, X), atol=5e-4)


def test_erm_with_a_huber_loss_releases_the_same_extrinsic_mean():
    sphere = Hypersphere(3)
    X = _cloud(sphere, 50, 0.5, shifted(1))
    estimator = PrivateERM(sphere, HuberDistanceLoss(sphere, 0.3), epsilon=1e6,
                           method="extrinsic", random_state=0).fit(X)
    np.testing.assert_allclose(to_numpy(estimator.estimate_),
                               _extrinsic_reference(sphere, X), atol=1e-4)
    assert estimator.method_ == "extrinsic"


def test_a_space_without_an_embedding_is_refused_before_the_budget():
    space = Hyperboloid(2)
    budget = PrivacyBudget(1.0, 1e-5)
    X = _cloud(space, 10, 0.5, 0)
    with pytest.raises(ValueError, match="method='extrinsic' needs a space embedded"):
        PrivateFrechetMean(space, method="extrinsic", clip_norm=1.0, budget=budget).fit(X)
    assert budget.spent_epsilon == 0


def test_a_non_point_loss_is_refused():
    sphere = Hypersphere(2)

    def loss(point, sample):
        return ((point - sample) ** 2).sum()

    with pytest.raises(TypeError, match="method='extrinsic'"):
        PrivateERM(sphere, loss, method="extrinsic", clip_norm=1.0).fit(
            to_backend(_cloud(sphere, 10, 0.5, 0)))


def test_the_sphere_spends_the_whole_epsilon_whatever_clip_norm():
    """The sphere's release reads no clip norm: clip_norm="auto" pays no quantile and
    leaves no share of epsilon unspent; on SPD it pays the quantile's share."""
    sphere = Hypersphere(2)
    X = _cloud(sphere, 20, 0.5, 0)
    fitted = PrivateFrechetMean(sphere, epsilon=1.0, method="extrinsic", clip_norm="auto",
                                random_state=0).fit(X)
    assert fitted.budget_.spent_epsilon == pytest.approx(1.0, rel=1e-6)
    assert len(fitted.events_) == 1
    assert fitted.noise_multiplier_ == pytest.approx(calibrate_gaussian(1.0, 1e-5, 1))
    space = SPDMatrices(2)
    fitted = PrivateFrechetMean(space, epsilon=1.0, method="extrinsic", clip_norm="auto",
                                random_state=0).fit(_cloud(space, 20, 0.5, 0))
    assert len(fitted.events_) == 2
    assert fitted.noise_multiplier_ == pytest.approx(calibrate_gaussian(0.9, 1e-5, 1))
