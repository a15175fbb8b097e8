"""The privacy-loss-distribution accountant (dp-accounting's PLD), reached through
``compose_epsilon(..., method="pld")``."""

import pytest

from geomstats_dp.privacy import GaussianEvent, compose_epsilon

pytestmark = pytest.mark.backend_independent


def test_pld_is_tighter_than_rdp_for_poisson():
    pytest.importorskip("dp_accounting")
    event = GaussianEvent(1.0, 1000, 0.01, "poisson", "add_remove")
    pld = compose_epsilon([event], 1e-5, method="pld")
    assert 0.7 * compose_epsilon([event], 1e-5) < pld < compose_epsilon([event], 1e-5)


def test_pld_full_batch_matches_exact_gdp():
    pytest.importorskip("dp_accounting")
    event = GaussianEvent(20.0, n_steps=100)
    # Pessimistic discretisation on a 1e-4 grid of privacy-loss values.
    assert compose_epsilon([event], 1e-5, method="pld") == pytest.approx(
        compose_epsilon([event], 1e-5), abs=1e-3
    )


def test_pld_refuses_sampling_without_replacement():
    pytest.importorskip("dp_accounting")
    event = GaussianEvent(1.0, 10, 0.1, "without_replacement")
    with pytest.raises(ValueError, match="without replacement"):
        compose_epsilon([event], 1e-5, method="pld")
