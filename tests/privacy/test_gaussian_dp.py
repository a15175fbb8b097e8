"""Gaussian DP (Dong, Roth & Su 2022): delta(epsilon) of mu-GDP against the hockey-stick
divergence of N(mu, 1) and N(0, 1) integrated numerically, and its inverses."""

import math

import numpy as np
import pytest
from scipy import integrate
from scipy.stats import norm

from geomstats_dp.privacy.gaussian_dp import (
    gdp_delta,
    gdp_epsilon,
    gdp_mu,
    share_epsilon,
    share_target,
)

pytestmark = pytest.mark.backend_independent


def hockey_stick(epsilon, mu):
    """sup_S P(S) - e^epsilon Q(S) for P = N(mu, 1), Q = N(0, 1), by quadrature."""

    def excess(x):
        return max(norm.pdf(x, loc=mu) - math.exp(epsilon) * norm.pdf(x), 0.0)

    # the integrand is positive right of x* = epsilon / mu + mu / 2 only
    start = epsilon / mu + mu / 2
    value, _ = integrate.quad(excess, start, start + 40.0, epsabs=1e-15, epsrel=1e-10)
    return value


@pytest.mark.parametrize("mu", [0.1, 0.5, 1.0, 3.0])
@pytest.mark.parametrize("epsilon", [0.0, 0.3, 1.0, 4.0])
def test_delta_is_the_hockey_stick_divergence(epsilon, mu):
    assert gdp_delta(epsilon, mu) == pytest.approx(hockey_stick(epsilon, mu), rel=1e-7, abs=1e-15)


@pytest.mark.parametrize("mu", [0.05, 0.7, 1.0, 2.0, 3.0, 8.0, 9.0])  # powers of two: a root on the bracket
@pytest.mark.parametrize("delta", [1e-8, 1e-5, 1e-2])
def test_epsilon_and_mu_invert_delta(mu, delta):
    epsilon = gdp_epsilon(mu, delta)
    if epsilon == 0.0:  # mu so small that the release is (0, delta)-DP already
        assert gdp_delta(0.0, mu) <= delta
        return
    assert gdp_delta(epsilon, mu) == pytest.approx(delta, rel=1e-8)
    largest = gdp_mu(epsilon, delta)
    assert gdp_delta(epsilon, largest) <= delta  # on the feasible side
    assert largest == pytest.approx(mu, rel=1e-8)


def test_edge_cases():
    assert gdp_epsilon(0.0, 1e-5) == 0.0  # mu = 0 reveals nothing
    assert gdp_epsilon(1.0, 0.0) == math.inf  # no finite epsilon at delta = 0
    assert gdp_delta(50.0, 1.0) == 0.0


def test_shares_summing_to_one_compose_to_the_target():
    # mu-GDP releases compose as sqrt(sum mu_i^2)-GDP: shares of mu^2 summing to 1 meet it.
    epsilon, delta, shares = 1.0, 1e-5, np.array([0.1, 0.3, 0.6])
    mus = [gdp_mu(share_epsilon(epsilon, delta, share), delta) for share in shares]
    assert gdp_epsilon(math.sqrt(sum(mu**2 for mu in mus)), delta) == pytest.approx(
        epsilon, rel=1e-6
    )
    assert share_epsilon(epsilon, delta, 1.0) == pytest.approx(epsilon, rel=1e-9)
    assert share_epsilon(epsilon, delta, 0.1) < share_epsilon(epsilon, delta, 0.6) < epsilon


@pytest.mark.parametrize("epsilon, delta", [(0.5, 1e-5), (1.0, 0.1), (0.01, 0.5),
                                            (20.0, 1e-9)])
@pytest.mark.parametrize("share", [1e-4, 0.02, 0.5, 1.0])
def test_share_target_is_a_point_of_the_share_s_privacy_curve(epsilon, delta, share):
    """(epsilon', delta') lies on the curve of m = sqrt(share) mu (the hockey-stick
    divergence of N(m, 1) and N(0, 1) by quadrature), with delta' in (0, Phi(-1)), even
    where share_epsilon is 0 (the share alone is (0, delta)-DP): calibrating to it
    spends the share, whatever delta."""
    m = math.sqrt(share) * gdp_mu(epsilon, delta)
    target_epsilon, target_delta = share_target(epsilon, delta, share)
    assert target_epsilon > 0 and 0 < target_delta < norm.cdf(-1.0)
    assert target_delta == pytest.approx(hockey_stick(target_epsilon, m), rel=1e-6)
    assert gdp_mu(target_epsilon, target_delta) == pytest.approx(m, rel=1e-9)


def test_share_epsilon_is_zero_where_share_target_is_needed():
    """The bug share_target fixes: a 2% share at delta = 0.1 is (0, 0.1)-DP alone."""
    assert share_epsilon(1.0, 0.1, 0.02) == 0.0
