"""Private selection: the law of the number of runs and the RDP of the best of them.

Papernot & Steinke (2022) run a mechanism Q a random number K of times and publish only
the best run. With K truncated negative binomial D_{eta, gamma} on {1, 2, ...},

    P[K = k] = (1 - gamma)^k / Z * prod_{l < k} (l + eta) / (l + 1),
    Z = gamma^(-eta) - 1 (eta > 0),  Z = log(1 / gamma) (eta = 0: logarithmic law),

(eta = 1 is the geometric law), if Q is (lambda, r(lambda))-RDP at every order of the grid,
the selection is (lambda, r'(lambda))-RDP with (their Thm. 2, minimised over lambda-hat)

    r'(lambda) = r(lambda) + (1 + eta) min_mu [(1 - 1/mu) r(mu) + log(1/gamma) / mu]
                 + log(E[K]) / (lambda - 1),

and, RDP being non-decreasing in the order, r'(lambda) <= r'(lambda') for lambda <= lambda'.
With K Poisson of mean mu (K = 0 allowed; their Thm. 6),

    r'(lambda) = r(lambda) + mu delta-hat + log(mu) / (lambda - 1),

delta-hat the delta of Q at epsilon-hat = log(1 + 1/(lambda - 1)), converted from its RDP
curve (Canonne, Kamath & Steinke 2020). Orders are those of ``renyi.ORDERS``.
"""

import functools
import math

import numpy as np
from scipy import optimize

from geomstats_dp.privacy.renyi import ORDERS, ledger_rdp

_MAX_RUNS = 10**7  # the inverse transform stops here (a probability below 1e-300 is left)


def law_gamma(mean, shape):
    """gamma of the truncated negative binomial law of ``shape`` with mean ``mean``.

    Parameters
    ----------
    mean : float
        E[K] >= 1.
    shape : float
        eta >= 0.

    Returns
    -------
    gamma : float
        In (0, 1]; 1 when mean = 1 (K = 1 always).
    """
    if mean == 1:
        return 1.0
    return optimize.brentq(lambda gamma: law_mean(gamma, shape) - mean, 1e-300, 1 - 1e-15,
                           xtol=1e-300, rtol=1e-14)


def law_mean(gamma, shape):
    """E[K] of the truncated negative binomial law D_{shape, gamma}."""
    if gamma == 1:
        return 1.0
    if shape == 0:
        return (1 - gamma) / (gamma * math.log(1 / gamma))
    return shape * (1 - gamma) / (gamma * -math.expm1(shape * math.log(gamma)))


def sample_runs(mean, shape, rng):
    """Draw K: truncated negative binomial of ``shape`` (Poisson if inf) with mean ``mean``.

    One uniform ``rng.random()`` by inverse transform, so any generator of the library
    (including ``SecureGenerator``) serves.

    Parameters
    ----------
    mean : float
        E[K] >= 1.
    shape : float
        eta >= 0, or math.inf for Poisson.
    rng : numpy.random.Generator or SecureGenerator

    Returns
    -------
    k : int
        >= 1 (>= 0 for Poisson).
    """
    uniform = float(rng.random())
    gamma = None
    if shape == math.inf:
        k, probability = 0, math.exp(-mean)
    else:
        gamma = law_gamma(mean, shape)
        if gamma == 1:
            return 1
        log_inverse = -math.log(gamma)
        first = 1 / log_inverse if shape == 0 else shape / math.expm1(shape * log_inverse)
        k, probability = 1, (1 - gamma) * first
    cumulative = probability
    while cumulative <= uniform and probability > 1e-300 and k < _MAX_RUNS:
        probability *= _next_ratio(k, mean, shape, gamma)
        k += 1
        cumulative += probability
    return k


def _next_ratio(k, mean, shape, gamma):
    """P[K = k + 1] / P[K = k]."""
    if shape == math.inf:
        return mean / (k + 1)
    return (1 - gamma) * (k + shape) / (k + 1)


def base_run_rdp(event):
    """RDP of one run of a SelectionEvent at every order: max over candidates and score."""
    runs = [ledger_rdp(run) for run in event.candidates] + [ledger_rdp(event.score)]
    return np.max(np.stack(runs), axis=0)


def selection_rdp(base_rdp, mean, shape):
    """RDP of the best of K runs at every order of ``ORDERS`` (module notes).

    Parameters
    ----------
    base_rdp : numpy.ndarray, shape=[len(ORDERS)]
        RDP of one run.
    mean : float
        E[K] >= 1.
    shape : float
        eta >= 0, or math.inf for Poisson.

    Returns
    -------
    rdp : numpy.ndarray, shape=[len(ORDERS)]
    """
    if shape == math.inf:
        epsilon_hat = np.log1p(1 / (ORDERS - 1))
        delta_hat = np.array([rdp_delta(base_rdp, value) for value in epsilon_hat])
        return base_rdp + mean * delta_hat + math.log(mean) / (ORDERS - 1)
    gamma = law_gamma(mean, shape)
    log_inverse = -math.log(gamma)
    constant = (1 + shape) * np.min((1 - 1 / ORDERS) * base_rdp + log_inverse / ORDERS)
    rdp = base_rdp + constant + math.log(law_mean(gamma, shape)) / (ORDERS - 1)
    return np.minimum.accumulate(rdp[::-1])[::-1]


def rdp_delta(rdp, epsilon):
    """Smallest delta over the orders of an RDP curve at ``epsilon`` (capped at 1).

    delta = exp((a - 1)(r(a) - epsilon) + (a - 1) log(1 - 1/a) - log a)
    (Canonne, Kamath & Steinke 2020; the inverse of ``renyi.conversion_offset``).
    """
    logs = (ORDERS - 1) * (rdp - epsilon + np.log1p(-1 / ORDERS)) - np.log(ORDERS)
    return float(min(math.exp(min(logs.min(), 0.0)), 1.0))


@functools.lru_cache(maxsize=256)
def selection_event_rdp(event):
    """RDP of a SelectionEvent at every order of ``ORDERS`` (cached; read-only)."""
    rdp = selection_rdp(base_run_rdp(event), event.mean, event.shape)
    rdp.setflags(write=False)
    return rdp
