"""Renyi-DP curves and their conversion: the Gaussian curve's closed form (Mironov 2017),
the conversion of Balle et al. (2020, Thm. 21) on the grid of orders, and the resulting
epsilon against exact Gaussian DP."""

import math

import numpy as np
import pytest

from geomstats_dp.privacy import GaussianEvent, PureEvent
from geomstats_dp.privacy.gaussian_dp import gdp_epsilon
from geomstats_dp.privacy.renyi import (
    ORDERS,
    conversion_offset,
    event_rdp,
    gaussian_rdp,
    ledger_epsilon,
    ledger_rdp,
    minimise_over_orders,
)

pytestmark = pytest.mark.backend_independent


def test_gaussian_curve_is_alpha_over_two_z_squared():
    z = 3.0
    np.testing.assert_allclose(gaussian_rdp(z), ORDERS / (2 * z**2), rtol=1e-15)
    np.testing.assert_allclose(event_rdp(GaussianEvent(z, 7)), 7 * ORDERS / (2 * z**2))


def test_ledger_rdp_adds_the_events():
    events = (GaussianEvent(2.0, 3), GaussianEvent(5.0, 4, 0.1, "without_replacement"))
    np.testing.assert_allclose(ledger_rdp(events), event_rdp(events[0]) + event_rdp(events[1]))


def test_subsampling_lowers_the_curve_and_pure_events_are_bounded_by_epsilon():
    full = event_rdp(GaussianEvent(2.0, 10))
    subsampled = event_rdp(GaussianEvent(2.0, 10, 0.05, "poisson", "add_remove"))
    assert np.all(subsampled <= full)
    pure = event_rdp(PureEvent(0.5))
    assert np.all(pure <= 0.5 + 1e-12) and np.all(pure > 0)


def test_conversion_offset_is_balle_et_al_theorem_21():
    delta = 1e-5
    alpha = ORDERS
    expected = np.log((alpha - 1) / alpha) - (math.log(delta) + np.log(alpha)) / (alpha - 1)
    np.testing.assert_allclose(conversion_offset(delta), expected, rtol=1e-12)


def test_the_coarse_to_fine_minimum_is_the_grid_minimum_for_a_gaussian():
    events, delta = (GaussianEvent(1.5, 40),), 1e-6
    values = ledger_rdp(events) + conversion_offset(delta)
    found, index = minimise_over_orders(
        lambda indices: ledger_rdp(events, indices) + conversion_offset(delta, indices)
    )
    assert found == pytest.approx(values.min(), rel=1e-12)
    assert index == int(np.argmin(values))


@pytest.mark.parametrize(("z", "n_steps"), [(1.0, 1), (5.0, 10), (20.0, 100)])
def test_rdp_epsilon_bounds_the_exact_gaussian_epsilon_from_above(z, n_steps):
    # T Gaussian steps are sqrt(T)/z-GDP (exact); RDP conversion is valid, hence never
    # below it, and loose by a bounded factor at these settings.
    exact = gdp_epsilon(math.sqrt(n_steps) / z, 1e-5)
    rdp = ledger_epsilon((GaussianEvent(z, n_steps),), 1e-5)
    assert exact <= rdp <= 1.25 * exact
