"""Rejection sampling gives up, naming the alternative, when nothing is accepted."""

import numpy as np
import pytest

from geomstats_dp.distributions.laplace.rejection import (
    LowAcceptanceError,
    rejection_sample,
)
from tests.conftest import shifted

pytestmark = pytest.mark.backend_independent


def test_rejection_gives_up_when_nothing_is_accepted():
    def propose(size, rng):
        return np.zeros(size), np.zeros(size, dtype=bool)

    with pytest.raises(LowAcceptanceError, match="mcmc"):
        rejection_sample(propose, 5, np.random.default_rng(shifted(0)), what="test")


def test_accepted_proposals_are_returned_in_order_and_only_those():
    # Proposals are consecutive integers; keeping the multiples of 3 must give exactly
    # 0, 3, 6, ... whatever the batch sizes the loop chooses.
    state = {"next": 0}

    def propose(size, rng):
        values = np.arange(state["next"], state["next"] + size)
        state["next"] += size
        return values, values % 3 == 0

    draws = rejection_sample(propose, 1000, np.random.default_rng(0), what="test")
    np.testing.assert_array_equal(draws, 3 * np.arange(1000))


def test_a_rare_acceptance_is_run_when_allowed():
    # One proposal in 2,000 accepted: below the default threshold, kept with 0.
    def propose(size, rng):
        return np.zeros(size), rng.random(size) < 5e-4

    rng = np.random.default_rng(shifted(1))
    with pytest.raises(LowAcceptanceError, match="accepted"):
        rejection_sample(propose, 50, rng, what="test")
    draws = rejection_sample(propose, 50, np.random.default_rng(shifted(1)), what="test",
                             min_acceptance=0)
    assert draws.shape == (50,)
