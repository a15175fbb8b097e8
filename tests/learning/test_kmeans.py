"""PrivateKMeans: planted clusters recovered, error shrinking with n, geomstats'
RiemannianKMeans at a huge epsilon, no per-record release."""

import itertools

import numpy as np
import pytest
from geomstats.geometry.hypersphere import Hypersphere
from geomstats.geometry.spd_matrices import SPDMatrices
from geomstats.learning.frechet_mean import FrechetMean

from geomstats_dp._backend import to_numpy
from geomstats_dp.learning import PrivateKMeans
from geomstats_dp.testing._manifold_cases import (
    centres_distance,
    kmeans_reference,
    planted_clusters,
)
from tests.conftest import shifted

SPHERE = Hypersphere(2)


def _planted_centres(space, X, n_clusters):
    """The Frechet mean of each planted cluster (geomstats, non-private)."""
    bounds = np.linspace(0, len(X), n_clusters + 1).astype(int)
    return np.stack([to_numpy(FrechetMean(space).fit(X[a:b]).estimate_)
                     for a, b in itertools.pairwise(bounds)])


def _rough_init(space, X, n_clusters):
    """Public guesses: a point of each planted cluster's spread, not its centre."""
    bounds = np.linspace(0, len(X), n_clusters + 1).astype(int)[:-1]
    return to_numpy(X)[bounds]


@pytest.mark.parametrize("space", [SPHERE, SPDMatrices(2)], ids=["sphere", "spd"])
def test_huge_epsilon_matches_riemannian_kmeans(space):
    X = planted_clusters(space, 3, 90, 0.1, 0)
    estimator = PrivateKMeans(space, 3, epsilon=1e6, clip_norm=0.5, n_iter=10,
                              init=_rough_init(space, X, 3), random_state=0).fit(X)
    found = centres_distance(space)(estimator.cluster_centers_, kmeans_reference(space, 3)(X))
    assert found < 1e-3


def test_planted_clusters_recovered_and_error_shrinks_with_n():
    """At epsilon 1 the largest distance of a planted centre to its released centre is
    below 0.1 with 3,000 records, and shrinks from 300 to 3,000 records (mean over 4
    seeds)."""
    errors = {}
    for n_samples in (300, 3000):
        X = planted_clusters(SPHERE, 3, n_samples, 0.1, shifted(0))
        planted = _planted_centres(SPHERE, X, 3)
        found = []
        for seed in range(4):
            estimator = PrivateKMeans(SPHERE, 3, epsilon=1.0, clip_norm=0.5,
                                      init=_rough_init(SPHERE, X, 3),
                                      random_state=shifted(seed)).fit(X)
            found.append(centres_distance(SPHERE)(estimator.cluster_centers_, planted))
        errors[n_samples] = np.mean(found)
    assert errors[3000] < 0.1
    assert errors[3000] < errors[300] / 2


def test_private_initialisation_recovers_the_clusters():
    """init="private" (a private base point, centres around it) at epsilon 5 on 3,000
    records: every planted centre has a released centre within 0.1 in 3 runs of 4."""
    X = planted_clusters(SPHERE, 3, 3000, 0.1, shifted(0))
    planted = _planted_centres(SPHERE, X, 3)
    found = [centres_distance(SPHERE)(PrivateKMeans(
        SPHERE, 3, epsilon=5.0, clip_norm=0.5, n_iter=8,
        random_state=shifted(seed)).fit(X).cluster_centers_, planted) for seed in range(4)]
    assert sum(error < 0.1 for error in found) >= 3, found


def test_an_empty_cluster_is_reseeded():
    """A public centre far from every record (an empty cluster) is moved next to the
    largest cluster, so that at a huge epsilon the three clusters are still found."""
    X = planted_clusters(SPHERE, 3, 90, 0.1, 0)
    init = _rough_init(SPHERE, X, 3)
    init[2] = -init[0]  # antipodal: no record is nearest to it
    estimator = PrivateKMeans(SPHERE, 3, epsilon=1e6, clip_norm=0.5, n_iter=10, init=init,
                              random_state=0).fit(X)
    assert centres_distance(SPHERE)(estimator.cluster_centers_,
                                    _planted_centres(SPHERE, X, 3)) < 0.02


def test_no_training_labels_and_predict_is_the_nearest_centre():
    X = planted_clusters(SPHERE, 3, 60, 0.1, 0)
    estimator = PrivateKMeans(SPHERE, 3, epsilon=5.0, clip_norm=0.5, random_state=0).fit(X)
    assert not hasattr(estimator, "labels_")
    distances = estimator.transform(X)
    assert distances.shape == (60, 3)
    np.testing.assert_array_equal(estimator.predict(X), np.argmin(distances, axis=1))
    assert estimator.cluster_sizes_.shape == (3,)


def test_ledger_spends_the_budget_in_gaussian_dp():
    """The events charged compose to epsilon at delta (the shares of mu^2 sum to 1): the
    budget's spent epsilon equals the target."""
    from geomstats_dp.privacy import PrivacyBudget

    budget = PrivacyBudget(2.0, 1e-5)
    X = planted_clusters(SPHERE, 3, 60, 0.1, 0)
    PrivateKMeans(SPHERE, 3, epsilon=2.0, clip_norm=0.5, budget=budget,
                  random_state=0).fit(X)
    assert budget.spent_epsilon == pytest.approx(2.0, rel=1e-3)
