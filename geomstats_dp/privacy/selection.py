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
curve (Canonne, Kamath & Steinke 2020). Orders are those of ``orders.ORDERS``; the RDP of
a ``SelectionEvent`` (its base run's curve through ``selection_rdp``) is
``renyi.selection_event_rdp``.

A public number of runs. The time of a search that makes K runs reveals K, which the bound
needs hidden. A search with a public ``max_runs`` k_max always makes k_max runs and
releases the best of the first min(K, k_max): on the event K <= k_max its output is that of
the best of K runs, so the two mechanisms' outputs differ with probability at most
tau = P[K > k_max], on any dataset. If the best of K runs (and whatever is composed with it)
is (epsilon, delta)-DP, the truncated search is (epsilon, delta + (1 + e^epsilon) tau)-DP:
P[M'(D) in S] <= P[M(D) in S] + tau <= e^epsilon P[M(D') in S] + delta + tau
<= e^epsilon P[M'(D') in S] + delta + (1 + e^epsilon) tau. The accountant charges that
term (``accountant``); tau is computed by ``runs_tail``.
"""

import functools
import math

import numpy as np
from scipy import optimize

from geomstats_dp.privacy.orders import ORDERS

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
    cumulative = 0.0
    for k, probability in _law_terms(mean, shape):
        cumulative += probability
        if cumulative > uniform or k >= _MAX_RUNS or (k > mean and probability < 1e-300):
            return k
    return k  # K = 1 always (gamma = 1)


def runs_tail(mean, shape, runs):
    """P[K > runs]: the sum of the law's terms, then a geometric bound on the rest.

    An upper bound, within a relative 1e-12 of the exact tail: past the mode the
    ratio of consecutive terms is at most s = max(P[K = k + 1] / P[K = k], 1 - gamma)
    (0 instead of 1 - gamma for Poisson), so the terms after k sum to at most
    P[K = k] s / (1 - s).

    Parameters
    ----------
    mean : float
        E[K] >= 1.
    shape : float
        eta >= 0, or math.inf for Poisson.
    runs : int
        >= 0.

    Returns
    -------
    tail : float
    """
    gamma = None if shape == math.inf else law_gamma(mean, shape)
    limit = 0.0 if gamma is None else 1 - gamma
    total = 0.0
    for k, probability in _law_terms(mean, shape):
        if k <= runs:
            continue
        total += probability
        ratio = max(_next_ratio(k, mean, shape, gamma), limit)
        rest = probability * ratio / (1 - ratio) if ratio < 1 else math.inf
        if rest <= 1e-12 * total:
            return total + rest
    return total  # K = 1 always (gamma = 1)


def max_runs(mean, shape, tail):
    """The public number of runs: the smallest k >= E[K] with P[K > k] <= ``tail``.

    Parameters
    ----------
    mean : float
        E[K] >= 1.
    shape : float
        eta >= 0, or math.inf for Poisson.
    tail : float
        In (0, 1).

    Returns
    -------
    k : int
        At most ``_MAX_RUNS`` (ValueError beyond).
    """
    low = high = math.ceil(mean)
    while runs_tail(mean, shape, high) > tail:
        low, high = high, 2 * high
        if high > _MAX_RUNS:
            raise ValueError(
                f"the law of K (mean {mean}, shape {shape}) needs more than {_MAX_RUNS} "
                f"runs to leave a probability <= {tail} above them"
            )
    while low < high:  # runs_tail(high) <= tail; the answer is in [low, high]
        middle = (low + high) // 2
        if runs_tail(mean, shape, middle) <= tail:
            high = middle
        else:
            low = middle + 1
    return high


def _law_terms(mean, shape):
    """(k, P[K = k]) from the smallest k upward, the products taken in logs (no underflow
    of the first terms at a large mean)."""
    if shape == math.inf:
        k, gamma, log_probability = 0, None, -mean
    else:
        gamma = law_gamma(mean, shape)
        if gamma == 1:
            yield 1, 1.0
            return
        log_inverse = -math.log(gamma)
        first = 1 / log_inverse if shape == 0 else shape / math.expm1(shape * log_inverse)
        k, log_probability = 1, math.log((1 - gamma) * first)
    while True:
        yield k, math.exp(log_probability)
        log_probability += math.log(_next_ratio(k, mean, shape, gamma))
        k += 1


def _next_ratio(k, mean, shape, gamma):
    """P[K = k + 1] / P[K = k]."""
    if shape == math.inf:
        return mean / (k + 1)
    return (1 - gamma) * (k + shape) / (k + 1)


@functools.lru_cache(maxsize=256)
def selection_truncation(event):
    """P[K > event.max_runs] of a SelectionEvent (0 without a public number of runs).

    A search that stops at ``max_runs`` releases the best of min(K, max_runs) runs: its
    output law is that of the best of K runs except on that event (module notes).
    """
    if event.max_runs is None:
        return 0.0
    return runs_tail(event.mean, event.shape, event.max_runs)


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

