"""The private Lloyd mechanism's public parts: the budget shares, their composition, the
initial centres."""

import math

import numpy as np
import pytest
from geomstats.geometry.hypersphere import Hypersphere

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.distributions import TangentGaussian
from geomstats_dp.learning.mechanisms.lloyd import (
    centres_around,
    lloyd_multipliers,
    share_of_counts,
)
from geomstats_dp.privacy import calibrate_gaussian


@pytest.mark.backend_independent
@pytest.mark.parametrize("dim", [1, 2, 8, 36])
def test_share_of_counts_minimises_the_step_error(dim):
    """The counts' share q minimises 4d / (1 - q) + 2 / q, the squared errors of a
    centre's step through the sums (sensitivity 2C, d coordinates) and the count
    (sensitivity sqrt(2)), found here on a grid."""
    grid = np.linspace(1e-4, 1 - 1e-4, 200_001)
    best = grid[np.argmin(4 * dim / (1 - grid) + 2 / grid)]
    assert share_of_counts(dim) == pytest.approx(best, abs=1e-4)


@pytest.mark.backend_independent
@pytest.mark.parametrize("private_init", [True, False])
def test_multipliers_compose_to_one_release_at_epsilon(private_init):
    """Gaussian releases compose as 1/z^2 = sum_k 1/z_k^2: the n_iter counts and sums and
    the base point add up to the multiplier of one (epsilon, delta) release."""
    n_iter = 4
    init, counts, sums = lloyd_multipliers(1.5, 1e-5, n_iter, 3, private_init)
    total = n_iter * (counts**-2 + sums**-2) + (init**-2 if private_init else 0.0)
    assert total == pytest.approx(calibrate_gaussian(1.5, 1e-5, 1) ** -2, rel=1e-9)
    assert (init is None) is not private_init


def test_centres_around_lie_at_the_radius():
    space = Hypersphere(2)
    base = space.metric.exp(to_backend([0.0, 0.3, 0.2]), to_backend([1.0, 0.0, 0.0]))
    sampler = TangentGaussian(space)
    centres = centres_around(space, base, 5, 0.25, sampler, np.random.default_rng(0))
    distances = to_numpy(space.metric.dist(centres, base))
    np.testing.assert_allclose(distances, 0.25, rtol=1e-8)
    assert np.all(to_numpy(space.belongs(centres)))
    assert len({tuple(np.round(to_numpy(c), 6)) for c in centres}) == 5
    assert math.isfinite(float(np.sum(to_numpy(centres))))
