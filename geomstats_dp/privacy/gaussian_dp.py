"""Gaussian differential privacy (mu-GDP): the exact accountant of full-batch Gaussians.

A Gaussian mechanism whose noise multiplier is z is mu-GDP with mu = 1/z, and T of them
compose into one sqrt(sum 1/z_t^2)-GDP mechanism (Dong, Roth & Su 2022, Cor. 2.2). mu-GDP
is equivalent to (epsilon, delta(epsilon))-DP for every epsilon >= 0 with

    delta(epsilon) = Phi(-epsilon/mu + mu/2) - e^epsilon Phi(-epsilon/mu - mu/2)

(Balle & Wang 2018, Thm. 8; Dong et al. 2022, Cor. 2.13), which is exact: no smaller
delta holds. RDP composition of the same mechanisms overstates epsilon (by how much:
docs/benchmarks/accounting.md, "Epsilon of the documented configurations").
"""

import math

import numpy as np
from scipy import optimize, special

_XTOL = 1e-14
_RTOL = 1e-13


def gdp_delta(epsilon, mu):
    """Smallest delta such that a mu-GDP mechanism is (epsilon, delta)-DP.

    Parameters
    ----------
    epsilon : float
        Non-negative.
    mu : float
        Positive GDP parameter.

    Returns
    -------
    delta : float
    """
    first = special.ndtr(-epsilon / mu + mu / 2)
    log_second = epsilon + special.log_ndtr(-epsilon / mu - mu / 2)
    return float(max(first - np.exp(log_second), 0.0))


def gdp_epsilon(mu, delta):
    """Smallest epsilon >= 0 such that a mu-GDP mechanism is (epsilon, delta)-DP.

    Parameters
    ----------
    mu : float
        Non-negative GDP parameter (0: the release reveals nothing).
    delta : float
        In [0, 1); delta = 0 gives infinity for mu > 0.

    Returns
    -------
    epsilon : float
    """
    if mu == 0:
        return 0.0
    if delta <= 0:
        return math.inf
    if gdp_delta(0.0, mu) <= delta:
        return 0.0
    upper = mu * mu / 2 + mu * math.sqrt(2 * math.log(1 / delta)) + 1.0
    while gdp_delta(upper, mu) > delta:
        upper *= 2
    return optimize.brentq(
        lambda eps: gdp_delta(eps, mu) - delta, 0.0, upper, xtol=_XTOL, rtol=_RTOL
    )


def gdp_mu(epsilon, delta):
    """Largest mu such that a mu-GDP mechanism is (epsilon, delta)-DP.

    Parameters
    ----------
    epsilon : float
        Positive.
    delta : float
        In (0, 1).

    Returns
    -------
    mu : float
    """
    def excess(log_mu):
        return gdp_delta(epsilon, math.exp(log_mu)) - delta

    # the bracket is searched in log(mu), where brentq evaluates: exp(log(m)) may round
    # to the other side of a root that m sits on
    lower, upper = math.log(1e-3), 0.0
    while excess(lower) > 0:
        lower -= math.log(10)
    while excess(upper) < 0:
        upper += math.log(2)
    log_mu = optimize.brentq(excess, lower, upper, xtol=_XTOL, rtol=_RTOL)
    mu = math.exp(log_mu)
    while gdp_delta(epsilon, mu) > delta:  # step to the feasible side of the root
        mu *= 1 - 1e-12
    return mu


def share_epsilon(epsilon, delta, share):
    """Epsilon at ``delta`` of a mu-GDP release with mu^2 = share * gdp_mu(epsilon, delta)^2.

    Gaussian releases whose shares sum to 1 compose (exact Gaussian-DP) to
    (epsilon, delta).
    """
    return gdp_epsilon(math.sqrt(share) * gdp_mu(epsilon, delta), delta)


def share_target(epsilon, delta, share):
    """An (epsilon', delta') target whose largest Gaussian-DP parameter is
    m = sqrt(share) * gdp_mu(epsilon, delta): a calibration to it (one Gaussian or a run of
    full-batch steps) spends exactly ``share`` of mu^2.

    ``share_epsilon`` at the fit's delta is 0 once the share alone is (0, delta)-DP (a
    small share at a large delta), a target no calibration accepts. Here the point of
    m's privacy curve at epsilon' = m^2 / 2 + m is used instead: there
    delta' = Phi(-1) - e^epsilon' Phi(-1 - m) lies in (0, Phi(-1)) for every m > 0.

    Returns
    -------
    epsilon, delta : float
    """
    mu = math.sqrt(share) * gdp_mu(epsilon, delta)
    target = mu * mu / 2 + mu
    return target, gdp_delta(target, mu)

