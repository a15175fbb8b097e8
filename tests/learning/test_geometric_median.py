"""PrivateGeometricMedian: unit per-record gradients, geomstats' GeometricMedian at a huge
epsilon, robustness to planted outliers, error shrinking with n."""

import numpy as np
import pytest
from geomstats.geometry.hyperboloid import Hyperboloid
from geomstats.geometry.hypersphere import Hypersphere
from geomstats.geometry.spd_matrices import SPDMatrices
from geomstats.learning.frechet_mean import FrechetMean
from geomstats.learning.geometric_median import GeometricMedian

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.learning import PrivateGeometricMedian
from geomstats_dp.learning.geometric_median import DistanceLoss
from geomstats_dp.testing._case import _cloud
from tests.conftest import shifted

SPHERE = Hypersphere(2)


@pytest.mark.parametrize("space", [SPHERE, SPDMatrices(2), Hyperboloid(2)],
                         ids=["sphere", "spd", "hyperboloid"])
def test_distance_gradients_are_unit_and_zero_at_the_point(space):
    X = _cloud(space, 10, 0.5, 0)
    point = X[3]
    gradients = DistanceLoss(space).gradients(point, X)
    norms = to_numpy(space.metric.norm(gradients, point))
    np.testing.assert_allclose(np.delete(norms, 3), 1.0, atol=1e-8)
    assert norms[3] == 0.0
    logs = space.metric.log(X, point)
    np.testing.assert_allclose(to_numpy(gradients[0]),
                               -to_numpy(logs[0]) / float(space.metric.norm(logs[0], point)))


@pytest.mark.parametrize("space", [SPHERE, SPDMatrices(2)], ids=["sphere", "spd"])
def test_huge_epsilon_matches_geomstats_geometric_median(space):
    X = _cloud(space, 60, 0.5, 1)
    reference = GeometricMedian(space, max_iter=1000, epsilon=1e-10).fit(X).estimate_
    estimator = PrivateGeometricMedian(space, epsilon=1e6, random_state=0).fit(X)
    assert float(space.metric.dist(estimator.estimate_, reference)) < 1e-3


def _contaminated(n_samples, seed):
    """30% of the records at distance 2 from the canonical point, the rest around the
    point at distance 0.3 on the other side."""
    inliers = _cloud(SPHERE, n_samples - 3 * n_samples // 10, 0.2, seed, offset=0.3)
    outliers = to_numpy(inliers[: 3 * n_samples // 10]) * np.array([-1.0, 1.0, 1.0])
    return to_backend(np.concatenate([to_numpy(inliers), outliers]))


def test_planted_bulk_recovered_despite_outliers_and_error_shrinks_with_n():
    """At epsilon 1 the release stays within 0.15 of the inliers' median with 3,000
    records (mean over 4 seeds) while the Frechet mean is pulled away, and its error
    halves from 300 records."""
    errors = {}
    for n_samples in (300, 3000):
        X = _contaminated(n_samples, shifted(0))
        median = GeometricMedian(SPHERE, max_iter=1000, epsilon=1e-10).fit(X).estimate_
        found = [float(SPHERE.metric.dist(PrivateGeometricMedian(
            SPHERE, epsilon=1.0, random_state=shifted(seed)).fit(X).estimate_, median))
            for seed in range(4)]
        errors[n_samples] = np.mean(found)
    inliers = X[: 3000 - 900]
    inlier_median = GeometricMedian(SPHERE, max_iter=1000).fit(inliers).estimate_
    mean = FrechetMean(SPHERE).fit(X).estimate_
    released = PrivateGeometricMedian(SPHERE, epsilon=1.0, random_state=shifted(0)).fit(X)
    assert float(SPHERE.metric.dist(released.estimate_, inlier_median)) < 0.25
    assert float(SPHERE.metric.dist(mean, inlier_median)) > 0.4
    assert errors[3000] < 0.05
    assert errors[3000] < errors[300] / 2


def test_score_warns_and_is_minus_the_mean_distance():
    from geomstats_dp.privacy import PrivacyLeakWarning

    X = _cloud(SPHERE, 20, 0.5, 0)
    estimator = PrivateGeometricMedian(SPHERE, epsilon=5.0, random_state=0).fit(X)
    with pytest.warns(PrivacyLeakWarning):
        score = estimator.score(X)
    expected = -np.mean(to_numpy(SPHERE.metric.dist(X, estimator.estimate_)))
    assert score == pytest.approx(expected)
