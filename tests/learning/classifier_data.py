"""Labelled SPD clouds and the Gaussian-DP epsilon shared by the tests of the private
classifiers (test_classifiers, test_mdm, test_class_means, test_tangent_space,
test_tangent_logistic)."""

import math

import numpy as np
from scipy.stats import norm

from geomstats_dp._backend import to_backend

HUGE = 1e6


def spd_classes(n_per_class=30, n_classes=3, spread=0.3, seed=0, dim=3):
    """SPD(dim) clouds around n_classes centres (distance about 0.8 from I)."""
    rng = np.random.default_rng(seed)
    points, labels = [], []
    for k in range(n_classes):
        centre = rng.standard_normal((dim, dim))
        centre = 0.8 * (centre + centre.T) / np.linalg.norm(centre + centre.T)
        noise = rng.standard_normal((n_per_class, dim, dim)) * spread / (2 * dim)
        logs = centre + (noise + np.swapaxes(noise, 1, 2)) / 2
        values, vectors = np.linalg.eigh(logs)
        points.append((vectors * np.exp(values)[:, None, :]) @ np.swapaxes(vectors, 1, 2))
        labels.append(np.full(n_per_class, k))
    return to_backend(np.concatenate(points)), np.concatenate(labels)


def gdp_epsilon(mu, delta):
    """The epsilon of mu-GDP at delta (Dong, Roth & Su 2019), by bisection."""
    def delta_of(eps):
        return norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * norm.cdf(-eps / mu - mu / 2)
    low, high = 0.0, 100.0
    for _ in range(200):
        middle = (low + high) / 2
        low, high = (middle, high) if delta_of(middle) > delta else (low, middle)
    return high
