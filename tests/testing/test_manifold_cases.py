"""The planted data of the manifold cases: what each helper promises."""

import math

import numpy as np
from geomstats.geometry.hypersphere import Hypersphere
from geomstats.geometry.spd_matrices import SPDMatrices
from geomstats.learning.frechet_mean import FrechetMean

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.optim import canonical_point
from geomstats_dp.testing._manifold_cases import (
    centres_distance,
    elongated_cloud,
    planted_clusters,
)


def test_planted_clusters_sit_at_the_offset_in_evenly_spaced_directions():
    space = SPDMatrices(2)
    X = planted_clusters(space, 3, 300, 0.05, 0)
    start = canonical_point(space)
    means = [FrechetMean(space).fit(X[100 * j: 100 * (j + 1)]).estimate_ for j in range(3)]
    offsets = [float(space.metric.dist(mean, start)) for mean in means]
    np.testing.assert_allclose(offsets, 0.6, atol=0.03)
    gaps = [float(space.metric.dist(means[i], means[j])) for i, j in ((0, 1), (1, 2), (0, 2))]
    np.testing.assert_allclose(gaps, 0.6 * math.sqrt(3), rtol=0.1)


def test_centres_distance_ignores_the_labelling():
    space = Hypersphere(2)
    centres = to_numpy(planted_clusters(space, 3, 30, 0.05, 0))[[0, 10, 20]]
    distance = centres_distance(space)
    assert distance(centres[::-1].copy(), centres) < 1e-6
    assert distance(centres[[0, 0, 1]], centres) > 0.5


def test_elongated_cloud_spreads_along_its_first_direction():
    space = Hypersphere(2)
    X = elongated_cloud(space, 2000, 0)
    mean = FrechetMean(space).fit(X).estimate_
    logs = to_numpy(space.metric.log(X, to_backend(mean)))
    variances = np.linalg.svd(logs - logs.mean(axis=0), compute_uv=False) ** 2 / len(X)
    np.testing.assert_allclose(variances[:2], [0.4**2, 0.1**2], rtol=0.15)
