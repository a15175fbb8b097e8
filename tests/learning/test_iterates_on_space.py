"""A release on valid data never raises: large noisy steps keep the iterates on the space
(issue 29, finding 7)."""

import warnings

import numpy as np
import pytest
from geomstats.geometry.spd_matrices import SPDMatrices

from geomstats_dp._backend import to_numpy
from geomstats_dp.datasets import load_emg_covariances
from geomstats_dp.learning import PrivateFrechetMean
from tests.conftest import shifted

# the seeds for which the fit raised LinAlgError (an iterate indefinite once rounded)
FAILING_SEEDS = (4, 9, 10, 13, 14, 17, 28)


@pytest.mark.slow
def test_small_epsilon_on_emg_rock_never_raises_and_releases_spd():
    """PrivateFrechetMean(SPD(8), epsilon=0.1, clip_norm="auto") on the 975 "rock"
    covariances raised for 7 of seeds 0-29 (the noise drawn at an iterate that a huge
    noisy step made numerically indefinite); with the iterates floored back onto SPD
    every fit releases an SPD matrix, on those seeds and on a shifted block of ten."""
    X, _ = load_emg_covariances("rock")
    space = SPDMatrices(8)
    seeds = FAILING_SEEDS + tuple(shifted(seed) for seed in range(100, 110))
    for seed in seeds:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            estimate = PrivateFrechetMean(space, epsilon=0.1, clip_norm="auto",
                                          random_state=seed).fit(X).estimate_
        values = to_numpy(estimate)
        assert np.all(np.isfinite(values)), seed
        assert np.array_equal(values, values.T), seed
        np.linalg.cholesky(values)
        assert bool(space.belongs(estimate)), seed
