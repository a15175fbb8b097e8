"""RDP of one subsampled Gaussian step at integer orders: autodp's bounds, in numpy.

The same formulas as autodp's ``AmplificationBySampling(..., improved_bound_flag=True)``
on an ``ExactGaussianMechanism`` (autodp stays the reference: the tests compare the two to
1e-9 relative), evaluated for every order at once instead of one autodp call per order,
so that a calibration needs no autodp import and milliseconds instead of seconds.

Notation: z the noise multiplier, q the sampling rate, alpha an integer order, and the
Gaussian's cumulant generating function cgf(x) = x (x + 1) / (2 z^2).

- Poisson sampling, add/remove adjacency (Zhu & Wang 2019; Mironov et al. 2019), exact:
  exp((alpha - 1) rdp) = (1-q)^(alpha-1) (1 + (alpha-1) q)
  + sum_{j=2}^{alpha} C(alpha, j) q^j (1-q)^(alpha-j) exp(cgf(j-1)).
- Sampling without replacement, replace-one adjacency (Wang, Balle & Kasiviswanathan
  2019, Thm. 27): exp((alpha - 1) rdp) <= 1 + q^2 C(alpha, 2) min(4 (e^(1/z^2) - 1),
  2 e^(1/z^2)) + sum_{j=3}^{alpha} q^j C(alpha, j) b_j, with b_j = min(4 sqrt(D_a D_b),
  2 exp(cgf(j-1))) up to order ``EXACT_ORDERS`` (D_k the k-th forward difference of
  exp(cgf) at -1, a = 2 floor(j/2), b = 2 ceil(j/2)) and b_j = 2 exp(cgf(j-1)) above it,
  as autodp does with its default accountant (m = 100).
"""

import math

import numpy as np
from scipy import special

EXACT_ORDERS = 100  # autodp's anaRDPacct(m=100): forward differences up to this order


def _log_binomial(total, chosen):
    """log C(total, chosen) through log-gamma (autodp's ``logcomb``)."""
    return special.gammaln(total + 1) - special.gammaln(total - chosen + 1) - special.gammaln(
        chosen + 1
    )


def _gaussian_rdp(orders, noise_multiplier):
    """alpha / (2 z^2), written as autodp writes it (``RDP_gaussian``)."""
    return 0.5 / noise_multiplier**2 * orders


def _cgf(values, noise_multiplier):
    """x rdp(x + 1), as autodp evaluates it: the high forward differences of exp(cgf)
    cancel catastrophically, so they reproduce autodp's only with the same roundings."""
    return values * _gaussian_rdp(values + 1, noise_multiplier)


def _logsumexp_rows(terms):
    """max + log(sum(exp(terms - max))) per row (autodp's ``stable_logsumexp``)."""
    top = np.max(terms, axis=-1, keepdims=True)
    return top[..., 0] + np.log(np.sum(np.exp(terms - top), axis=-1))


def log_forward_differences(log_values):
    """log |k-th forward difference| (k = 1, 2, ...) of exp(log_values) at the first point.

    autodp's ``get_forward_diffs``: the differences are taken in log scale with signs,
    one level at a time; each level is one vectorised step here.

    Parameters
    ----------
    log_values : array-like, shape=[n]
        log f(x_0), ..., log f(x_{n-1}) (f > 0).

    Returns
    -------
    deltas : array-like, shape=[n - 1]
        deltas[k - 1] = log |Delta^k f(x_0)|.
    """
    vec = np.array(log_values, dtype=np.float64)
    signs = np.ones(vec.size, dtype=bool)
    deltas = np.empty(vec.size - 1)
    with np.errstate(all="ignore"):
        for level in range(vec.size - 1):
            width = vec.size - 1 - level
            first, second = vec[:width], vec[1 : width + 1]
            first_sign, second_sign = signs[:width], signs[1 : width + 1]
            rising = second > first
            falling = second < first
            gap = np.where(
                rising,
                second + np.log(1 - np.exp(first - second)),
                np.where(falling, first + np.log(1 - np.exp(second - first)), -np.inf),
            )
            gap_sign = np.where(second_sign, ~falling, falling)
            top = np.maximum(first, second)
            summed = top + np.log(np.exp(first - top) + np.exp(second - top))
            same = first_sign == second_sign
            vec[:width] = np.where(same, gap, summed)
            signs[:width] = np.where(same, gap_sign, second_sign)
            deltas[level] = vec[0]
    return deltas


def poisson_rdp(noise_multiplier, sampling_rate, orders):
    """RDP of one Poisson-subsampled Gaussian step (add/remove) at integer ``orders``.

    Parameters
    ----------
    noise_multiplier : float
    sampling_rate : float
        In (0, 1).
    orders : array-like, shape=[n]
        Integers >= 2.

    Returns
    -------
    rdp : array-like, shape=[n]
    """
    orders = np.asarray(orders, dtype=np.float64)
    top = int(orders.max())
    chosen = np.arange(2.0, top + 1)
    log_q, log_1mq = math.log(sampling_rate), math.log1p(-sampling_rate)
    alpha = orders[:, None]
    terms = (
        _cgf(chosen - 1, noise_multiplier)
        + chosen * log_q
        + (alpha - chosen) * log_1mq
        + _log_binomial(alpha, chosen)
    )
    terms = np.where(chosen <= alpha, terms, -np.inf)
    first = (orders - 1) * log_1mq + np.log(1 + (orders - 1) * sampling_rate)
    log_moment = _logsumexp_rows(np.concatenate([first[:, None], terms], axis=1))
    return log_moment / (orders - 1)


def without_replacement_rdp(noise_multiplier, sampling_rate, orders):
    """RDP of one Gaussian step on a batch drawn without replacement (replace-one).

    Parameters
    ----------
    noise_multiplier : float
    sampling_rate : float
        b / n, in (0, 1).
    orders : array-like, shape=[n]
        Integers >= 2.

    Returns
    -------
    rdp : array-like, shape=[n]
    """
    orders = np.asarray(orders, dtype=np.float64)
    top = int(orders.max())
    log_q = math.log(sampling_rate)
    second_order = _gaussian_rdp(2.0, noise_multiplier)
    moments_two = (
        2 * log_q
        + _log_binomial(orders, 2.0)
        + min(
            math.log(4) + second_order + np.log(1 - np.exp(-second_order)),
            second_order + math.log(2),
        )
    )
    chosen = np.arange(3.0, top + 1)
    alpha = orders[:, None]
    cgf_terms = math.log(2) + _cgf(chosen - 1, noise_multiplier)
    deltas = log_forward_differences(
        _cgf(np.arange(-1.0, EXACT_ORDERS + 2), noise_multiplier)
    )
    exact_chosen = chosen[chosen <= EXACT_ORDERS].astype(int)
    lower = deltas[2 * (exact_chosen // 2) - 1]
    upper = deltas[2 * ((exact_chosen + 1) // 2) - 1]
    exact = np.minimum(math.log(4) + 0.5 * lower + 0.5 * upper, cgf_terms[: exact_chosen.size])
    bounds = np.where(
        alpha <= EXACT_ORDERS,
        np.concatenate([exact, cgf_terms[exact_chosen.size :]]),
        cgf_terms,
    )
    terms = bounds + chosen * log_q + _log_binomial(alpha, chosen)
    terms = np.where(chosen <= alpha, terms, -np.inf)
    columns = [np.zeros((orders.size, 1)), moments_two[:, None], terms]
    log_moment = _logsumexp_rows(np.concatenate(columns, axis=1))
    return log_moment / (orders - 1)
