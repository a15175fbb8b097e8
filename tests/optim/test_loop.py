"""Noiseless DP-RGD on the squared-distance loss reaches geomstats' Frechet mean."""

import logging

import numpy as np
import pytest
from geomstats.learning.frechet_mean import FrechetMean

from geomstats_dp._backend import to_numpy
from geomstats_dp.optim import FullBatch, SquaredDistanceLoss, minimize

from .data import MEAN_SPACES, cloud

# step 1 is the Karcher iteration; 0.5 is safe in curved spaces (docs/papers.md: a unit step
# need not converge in H^2)
STEP_SIZES = {"spd": 1.0, "sphere": 0.5, "hyperboloid": 0.5}


def converged_frechet_mean(space, points):
    """geomstats' gradient descent, run long; the test checks it converged."""
    logging.disable(logging.WARNING)  # "maximum number of iterations reached"
    try:
        estimator = FrechetMean(space).set(max_iter=300, epsilon=1e-30)
        mean = estimator.fit(points).estimate_
    finally:
        logging.disable(logging.NOTSET)
    gradient = to_numpy(space.metric.log(points, mean)).mean(axis=0)
    assert float(np.linalg.norm(gradient)) < 1e-10
    return mean


@pytest.mark.parametrize("name", sorted(MEAN_SPACES))
def test_noiseless_full_batch_reaches_frechet_mean(name):
    space = MEAN_SPACES[name]()
    points = cloud(space, n_samples=30, radius=1.0, seed=11)
    reference = converged_frechet_mean(space, points)
    # C = 10 exceeds every gradient norm d(x, z_i) <= 2 along the run: no clipping
    result = minimize(
        SquaredDistanceLoss(space), points, FullBatch(clip_norm=10.0, noise_std=0), 80,
        STEP_SIZES[name],
    )
    assert float(space.metric.dist(result.point, reference)) < 1e-6
